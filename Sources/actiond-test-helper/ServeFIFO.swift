// SPDX-License-Identifier: Apache-2.0
// `actiond-test-helper serve-fifo CONFIG FIFO`: the daemon itself (engine, loop, socket
// server, process runner: everything `actiond` runs) with its button read from a FIFO of
// kernel `struct input_event` records instead of an evdev device. For make bench's host
// figures (Tests/bench/bench.py, `host_commands`): this kernel has no uinput, and the same
// FIFO feeds the C reactor (`benchtool reactor`), so the two are compared on the host's own
// CPU, outside the emulator; and for tests of the real daemon holding a button
// (DaemonMomentaryStopTests). Not installed.
import ActiondCore
import ActiondDaemon
import ActiondLinux
import Glibc

/// An ``InputSource`` with one device: a FIFO that `benchtool fifopress` writes
/// `struct input_event` records to (24 bytes, the kernel's layout on 64-bit Linux), stamped
/// on CLOCK_MONOTONIC as evdev stamps them for actiond. It serves the configuration's first
/// button; other buttons wait for a device forever.
final class FIFOInputSource: InputSource {
  var onEvent: (InputEvent) -> Void = { _ in }
  /// Set before the daemon runs (``Daemon/loop``): the FIFO is watched on it.
  var loop: EventLoop?
  private let path: String
  private var fd: Int32 = -1
  private var watch: WatchID?
  private var keyCode: UInt16 = 0
  private var bound = false
  private let info: InputDeviceInfo

  init(path: String) {
    self.path = path
    info = InputDeviceInfo(syspath: "/fifo\(path)", devnode: path, name: "actiond-bench-fifo")
  }

  var boundDevices: [BoundInputDevice] {
    bound ? [BoundInputDevice(info: info, buttons: [buttonName], grabbed: false)] : []
  }
  private var buttonName = ""

  func device(forButton button: String) -> InputDeviceInfo? { bound && button == buttonName ? info : nil }

  struct NotWired: Error, CustomStringConvertible {
    var description: String { "FIFOInputSource.loop was not set before the daemon ran" }
  }

  func start(_ bindings: [ButtonBinding]) throws {
    guard let loop else { throw NotWired() }
    guard let first = bindings.first else { return }
    keyCode = first.keyCode
    buttonName = first.name
    // O_RDWR: the FIFO never reports a hangup between writers.
    fd = try Syscall.open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
    watch = try loop.register(fd: fd, interest: .readable) { [unowned self] _ in self.readAll() }
    bound = true
    onEvent(.deviceBound(BoundInputDevice(info: info, buttons: [buttonName], grabbed: false), readOnly: false))
    onEvent(.appeared(button: buttonName, device: info, isDown: false, at: loop.now()))
  }

  func reconfigure(_ bindings: [ButtonBinding], keeping unchanged: Set<String>) {}

  func drain(button: String) { if button == buttonName { readAll() } }

  func shutdown() {
    if let watch { loop?.unregister(watch) }
    watch = nil
    if fd >= 0 { Syscall.close(fd) }
    fd = -1
    bound = false
  }

  private var draining = false
  /// 64 records: one read's worth, kept so that a drain allocates nothing.
  private var buffer = [UInt8](repeating: 0, count: 24 * 64)

  private func readAll() {
    // A handler may drain again (a late key-down whose deadline has passed): the records
    // this call has read come first, as InputManager does it.
    guard fd >= 0, !draining else { return }
    draining = true
    defer { draining = false }
    let size = 24
    while true {
      let n: Int
      do {
        guard let got = try buffer.withUnsafeMutableBytes({ try Syscall.read(fd, into: $0) }).value, got > 0 else {
          return
        }
        n = got
      } catch {
        return
      }
      // The writer writes whole records (24 bytes < PIPE_BUF: atomic).
      for offset in stride(from: 0, to: n - n % size, by: size) {
        func field<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T {
          buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + at, as: T.self) }
        }
        let seconds = field(0, Int64.self)
        let microseconds = field(8, Int64.self)
        guard field(16, UInt16.self) == 1, field(18, UInt16.self) == keyCode else { continue }  // EV_KEY, the key
        let at = MonotonicInstant(nanoseconds: seconds * 1_000_000_000 + microseconds * 1000)
        onEvent(.key(button: buttonName, code: keyCode, value: field(20, Int32.self), at: at))
      }
    }
  }
}

enum ServeFIFO {
  static func run(config: String, fifo: String) -> Never {
    let input = FIFOInputSource(path: fifo)
    do {
      let daemon = try Daemon(
        // Warnings only (the benchmark's default), unless the configuration's `logLevel` is
        // asked for: tests that read what the log says in words set SERVE_FIFO_CONFIG_LOG_LEVEL.
        settings: Daemon.Settings(
          configPath: config, logLevel: getenv("SERVE_FIFO_CONFIG_LOG_LEVEL") == nil ? .warning : nil,
          program: "actiond-test-helper"),
        input: input)
      input.loop = daemon.loop
      try daemon.run()
      exit(0)
    } catch {
      TestHelper.fail("serve-fifo: \(error)")
    }
  }
}
