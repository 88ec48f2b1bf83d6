// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import CActiondShim
import Glibc

/// actiond-mqtt's connection to actiond's socket, on the ``EventLoop``: a non-blocking
/// client that reconnects with a ``Backoff`` whenever actiond is not there (not started
/// yet, restarting), reads the daemon's lines with a ``LineFramer`` and queues requests.
final class DaemonLink {
  private let loop: EventLoop
  private let logger: Logger
  let path: String
  private var fd: Int32 = -1
  private var watch: WatchID?
  private var retryTimer: TimerID?
  private var backoff = Backoff(initial: .milliseconds(200), maximum: .seconds(5))
  private var framer = LineFramer(maxLineLength: 64 << 20)
  private var output: [UInt8] = []
  private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
  private var nextID: Int64 = 1
  private var sawHello = false
  private var failures = 0

  /// The greeting arrived: the connection is usable.
  var onHello: (Hello) -> Void = { _ in }
  /// Any later message (replies, errors, events).
  var onMessage: (ServerMessage) -> Void = { _ in }
  /// The connection closed (after a hello); a reconnect is scheduled.
  var onLost: () -> Void = {}

  init(loop: EventLoop, logger: Logger, path: String) {
    self.loop = loop
    self.logger = logger
    self.path = path
  }

  var isConnected: Bool { fd >= 0 && sawHello }

  func start() { attempt() }

  private func attempt() {
    retryTimer = nil
    do {
      fd = try Self.connect(path)
    } catch {
      // Logged at the first failure and then every 10th, so a long outage is visible
      // without a line per retry.
      if failures % 10 == 0 {
        logger.warning("cannot connect to actiond at \(path): \(error)", event: "daemon-connect-failed")
      }
      failures += 1
      scheduleRetry()
      return
    }
    do {
      watch = try loop.register(fd: fd, interest: [.readable]) { [weak self] events in self?.ready(events) }
    } catch {
      logger.error("cannot watch actiond's socket: \(error)", event: "daemon-watch-failed")
      close(notify: false)
      scheduleRetry()
    }
  }

  private static func connect(_ path: String) throws -> Int32 {
    guard let address = UnixAddress(path) else { throw BridgeFailure("invalid socket path \(path)") }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | actiond_SOCK_CLOEXEC | actiond_SOCK_NONBLOCK, 0)
    guard fd >= 0 else { throw BridgeFailure("socket: \(Errno.current)") }
    // A Unix connect completes at once or fails (EAGAIN: actiond's backlog is full; retried).
    if address.withSockaddr({ Glibc.connect(fd, $0, $1) }) != 0 {
      let error = Errno.current
      Syscall.close(fd)
      throw BridgeFailure("\(error)")
    }
    return fd
  }

  private func scheduleRetry() {
    guard retryTimer == nil else { return }
    retryTimer = loop.schedule(at: loop.now() + backoff.delay()) { [weak self] _ in self?.attempt() }
  }

  private func close(notify: Bool) {
    if let watch { loop.unregister(watch) }
    watch = nil
    if fd >= 0 { Syscall.close(fd) }
    fd = -1
    framer = LineFramer(maxLineLength: 64 << 20)
    output.removeAll()
    let had = sawHello
    sawHello = false
    if notify && had { onLost() }
  }

  private func lost(_ why: String) {
    logger.warning("lost actiond's socket: \(why)", event: "daemon-lost")
    close(notify: true)
    scheduleRetry()
  }

  /// Sends a request; nil when not connected.
  @discardableResult
  func send(_ body: Request.Body) -> RequestID? {
    guard isConnected else { return nil }
    let id = RequestID.integer(nextID)
    nextID += 1
    output += Array((JSONEncoding.compact(Request(id: id, body).json) + "\n").utf8)
    flush()
    return id
  }

  private func flush() {
    while !output.isEmpty {
      let result = output.withUnsafeBytes { b in Result { () throws(Errno) in try Syscall.write(fd, b) } }
      switch result {
      case .success(let r):
        guard let n = r.value else {
          if let watch { try? loop.setInterest(watch, [.readable, .writable]) }
          return
        }
        output.removeFirst(n)
      case .failure(let error):
        lost("write: \(error)")
        return
      }
    }
    if let watch { try? loop.setInterest(watch, [.readable]) }
  }

  private func ready(_ events: EventLoop.IOEvents) {
    if events.contains(.writable) { flush() }
    guard fd >= 0 else { return }
    if events.contains(.readable) || events.contains(.hangup) || events.contains(.error) {
      let result = buffer.withUnsafeMutableBytes { b in Result { () throws(Errno) in try Syscall.read(fd, into: b) } }
      switch result {
      case .success(let r):
        guard let n = r.value else { return }
        if n == 0 {
          lost("actiond closed the connection")
          return
        }
        buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
      case .failure(let error):
        lost("read: \(error)")
        return
      }
      drain()
    }
  }

  private func drain() {
    while fd >= 0, let out = framer.next() {
      guard case .line(let bytes) = out else {
        lost("a line longer than 64 MiB")
        return
      }
      let message: ServerMessage
      do { message = try ServerMessage.decode(line: String(decoding: bytes, as: UTF8.self)) } catch {
        // A message this version cannot read (a newer daemon's): skipped, not fatal.
        logger.warning("unreadable message from actiond: \(error.message)", event: "daemon-unreadable")
        continue
      }
      if !sawHello {
        guard case .hello(let hello) = message else {
          if case .error(_, let e) = message {
            lost("actiond refused the connection: \(e.message) (\(e.code.rawValue))")
          } else {
            lost("expected hello first")
          }
          return
        }
        sawHello = true
        failures = 0
        backoff.reset()
        logger.notice("connected to actiond at \(path)", event: "daemon-connected")
        onHello(hello)
      } else {
        onMessage(message)
      }
    }
  }
}
