// SPDX-License-Identifier: Apache-2.0
// actiond-input-probe: what actiond's input layer sees, without the daemon.
//
//   actiond-input-probe [--config FILE] [--list]
//   actiond-input-probe [--config FILE] [--count N] [--timeout SECONDS]
//
// With --list it prints every input event node udev knows and which configured buttons
// match it. Otherwise it binds the configured buttons exactly as actiond does (libudev
// discovery and hotplug, libevdev reading, grabs) and prints one line per input event,
// until SIGTERM/SIGINT, N key events or the timeout. SIGHUP re-reads the configuration and
// rebinds. Key lines look like actiond-testdev's (`event SEC.USEC EV_KEY KEY_PROG1 1 ...`),
// so the VM tier compares what was sent with what actiond read.
import ActiondCore
import ActiondLinux
import Glibc

@main
struct InputProbe {
  static func main() {
    do {
      let options = try Options(CommandLine.arguments.dropFirst())
      if options.help {
        print(usage)
        exit(0)
      }
      let buttons = try loadButtons(options.configPath)
      if options.list {
        try list(buttons)
      } else {
        try watch(options, buttons)
      }
    } catch let error as ProbeError {
      writeError("actiond-input-probe: \(error.message)")
      exit(error.isUsage ? 2 : 1)
    } catch {
      writeError("actiond-input-probe: \(error)")
      exit(1)
    }
  }

  static let usage = """
    usage: actiond-input-probe [--config FILE] [--list]
           actiond-input-probe [--config FILE] [--count N] [--timeout SECONDS]
      --config FILE   actiond's configuration (default: the embedded default)
      --list          print the input event nodes and the buttons matching each, then exit
      --count N       exit after N key events
      --timeout S     exit after S seconds
    Binds the configured buttons like actiond and prints what it reads. SIGHUP reloads.
    """

  struct Options {
    var configPath: String?
    var list = false
    var help = false
    var count: Int?
    var timeoutSeconds: Int64?

    init(_ arguments: ArraySlice<String>) throws(ProbeError) {
      var rest = arguments
      func value(_ option: String) throws(ProbeError) -> String {
        guard let v = rest.popFirst() else { throw ProbeError(usage: "\(option) needs a value") }
        return v
      }
      while let argument = rest.popFirst() {
        switch argument {
        case "--config": configPath = try value(argument)
        case "--list": list = true
        case "-h", "--help": help = true
        case "--count":
          guard let n = Int(try value(argument)), n > 0 else { throw ProbeError(usage: "--count needs a number > 0") }
          count = n
        case "--timeout":
          guard let s = Int64(try value(argument)), s > 0 else {
            throw ProbeError(usage: "--timeout needs whole seconds > 0")
          }
          timeoutSeconds = s
        default: throw ProbeError(usage: "unknown argument '\(argument)'")
        }
      }
    }
  }

  struct ProbeError: Error {
    var message: String
    var isUsage = false
    init(_ message: String) { self.message = message }
    init(usage message: String) {
      self.message = message
      isUsage = true
    }
  }

  static func loadButtons(_ path: String?) throws -> [ButtonConfig] {
    let source = try path.map { ConfigurationSource(name: $0, text: try readFile($0)) }
    do {
      return try ConfigurationLoader.load(main: source).buttons
    } catch {
      throw ProbeError("configuration:\n\(error)")
    }
  }

  static func list(_ buttons: [ButtonConfig]) throws {
    for device in try UdevDiscovery().enumerate() {
      let matching = buttons.filter { $0.match.matches(device) }.map(\.name)
      print(
        "device \(device.devnode ?? "-") name=\(JSONEncoding.quoted(device.name))"
          + " id=\(hex(device.vendor)):\(hex(device.product)) bus=\(hex(device.bustype))"
          + " phys=\(JSONEncoding.quoted(device.phys ?? "")) tags=\(device.tags.sorted().joined(separator: ","))"
          + " buttons=\(matching.joined(separator: ","))")
      for link in device.links { print("  link \(link)") }
      for key in device.properties.keys.sorted() { print("  property \(key)=\(device.properties[key]!)") }
    }
    flush()
  }

  static func watch(_ options: Options, _ initialButtons: [ButtonConfig]) throws {
    let loop = try EventLoop()
    let input = try InputManager(loop: loop)
    var buttons = initialButtons
    var keyEvents = 0
    input.onEvent = { event in
      print(render(event, buttons))
      flush()
      if case .key = event {
        keyEvents += 1
        if let count = options.count, keyEvents >= count { loop.stop() }
      }
    }
    for signal in [SIGTERM, SIGINT] { try loop.onSignal(signal) { _ in loop.stop() } }
    try loop.onSignal(SIGHUP) { _ in
      do {
        buttons = try loadButtons(options.configPath)
        print("reloaded buttons=\(buttons.map(\.name).joined(separator: ","))")
        input.reconfigure(buttons.map(ButtonBinding.init))
      } catch {
        print("reload failed, keeping the old configuration: \(error)")
      }
      flush()
    }
    if let seconds = options.timeoutSeconds {
      loop.schedule(at: loop.now() + .seconds(seconds)) { _ in
        print("timeout")
        loop.stop()
      }
    }
    try input.start(buttons.map(ButtonBinding.init))
    print("ready buttons=\(buttons.map(\.name).joined(separator: ","))")
    flush()
    try loop.run()
    input.shutdown()
    flush()
  }

  static func render(_ event: InputEvent, _ buttons: [ButtonConfig]) -> String {
    func node(_ info: InputDeviceInfo) -> String { info.devnode ?? info.syspath }
    switch event {
    case .deviceBound(let device, let readOnly):
      let info = device.info
      return
        "bound \(node(info)) name=\(JSONEncoding.quoted(info.name)) buttons=\(device.buttons.joined(separator: ","))"
        + " grabbed=\(device.grabbed ? "yes" : "no") readonly=\(readOnly ? "yes" : "no")"
    case .deviceUnbound(let device, let reason):
      return "unbound \(node(device.info)) \(reason)"
    case .appeared(let button, let info, let isDown, let at):
      return "appeared \(seconds(at)) \(button) \(node(info)) \(isDown ? "down" : "up")"
    case .key(let button, let code, let value, let at):
      let key = buttons.first { $0.name == button }?.keyName ?? KeyCodes.name(of: code) ?? "?"
      return "event \(seconds(at)) EV_KEY \(key) \(value) button=\(button)"
    case .resync(let button, let isDown, let at):
      return "resync \(seconds(at)) \(button) \(isDown ? "down" : "up")"
    case .releasedByKernel(let button, let at):
      return "released-by-kernel \(seconds(at)) \(button)"
    case .lost(let button, let at):
      return "lost \(seconds(at)) \(button)"
    case .refused(let button, let info, let reason):
      return "refused \(button) \(node(info)): \(reason)"
    case .ignoredExtraMatch(let button, let info, let boundTo):
      return "extra \(button) \(node(info)) bound-to=\(node(boundTo))"
    case .deviceFailed(let info, let reason):
      return "failed \(node(info)): \(reason)"
    case .discoveryProblem(let message):
      return "discovery \(message)"
    }
  }

  /// `SEC.USEC`, the format actiond-testdev prints.
  static func seconds(_ instant: MonotonicInstant) -> String {
    let us = instant.nanoseconds / 1_000
    let fraction = String(us % 1_000_000)
    return "\(us / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
  }

  static func hex(_ value: UInt16) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 4 - digits.count) + digits
  }

  static func readFile(_ path: String) throws -> String {
    let fd: Int32
    do {
      fd = try Syscall.open(path, O_RDONLY)
    } catch {
      throw ProbeError("\(path): \(error)")
    }
    defer { Syscall.close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let result: IOResult<Int>
      do {
        result = try chunk.withUnsafeMutableBytes { buffer throws(Errno) in try Syscall.read(fd, into: buffer) }
      } catch {
        throw ProbeError("\(path): \(error)")
      }
      guard case .done(let n) = result, n > 0 else { break }
      bytes += chunk[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Flushes stdout (all streams: naming `stdout` is not concurrency-safe in Swift 6), so
  /// each line reaches a log file as it happens.
  static func flush() { fflush(nil) }

  static func writeError(_ message: String) {
    flush()
    printError(message)
  }
}
