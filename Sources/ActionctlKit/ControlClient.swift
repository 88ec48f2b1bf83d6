// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import Glibc

/// A client connection to the daemon's socket, as `actionctl` (or another tool) uses it:
/// send requests, read the daemon's lines with a deadline, keep the raw text of each.
public final class ControlClient {
  /// Why a conversation with the daemon ended early.
  public enum Failure: Error, CustomStringConvertible {
    /// The socket could not be reached (exit status 3).
    case cannotConnect(String)
    /// The daemon closed the connection (after `reason`, when it sent one).
    case closed(ProtocolError?)
    /// The daemon sent something this client cannot read (exit status 4).
    case malformed(String)
    /// No answer before the deadline (exit status 5).
    case timedOut
    case io(String)

    public var description: String {
      switch self {
      case .cannotConnect(let m): return m
      case .closed(let e?): return "the daemon closed the connection: \(e.message) (\(e.code))"
      case .closed(nil): return "the daemon closed the connection"
      case .malformed(let m): return "unreadable message from the daemon: \(m)"
      case .timedOut: return "no answer from the daemon in time"
      case .io(let m): return m
      }
    }
  }

  public let fd: Int32
  public let path: String
  /// The daemon's greeting, read by ``connect(path:timeout:)``.
  public private(set) var hello: Hello
  /// Replies and errors can be large (a `list` of many controls); far above the request limit.
  private var framer = LineFramer(maxLineLength: 64 << 20)
  private var nextID: Int64 = 1
  private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

  /// Connects and reads `hello`.
  public init(path: String, timeout: TimeSpan?) throws(Failure) {
    self.path = path
    do { fd = try UnixSocket.connect(to: path) } catch { throw .cannotConnect("cannot connect to \(path): \(error)") }
    hello = Hello(client: ClientAccess(uid: 0, gid: 0, pid: 0, control: false), buttons: [])
    let deadline = timeout.map { SystemClock().now() + $0 }
    do throws(Failure) {
      let (message, _) = try read(until: deadline)
      switch message {
      case .hello(let h): hello = h
      case .error(_, let e): throw .closed(e)  // e.g. too-many-clients
      default: throw .malformed("expected hello first")
      }
    } catch {
      Syscall.close(fd)
      throw error
    }
  }

  deinit { Syscall.close(fd) }

  /// Sends one request (with a fresh integer id unless it has one) and returns the id.
  @discardableResult
  public func send(_ body: Request.Body) throws(Failure) -> RequestID {
    let id = RequestID.integer(nextID)
    nextID += 1
    try sendLine(JSONEncoding.compact(Request(id: id, body).json))
    return id
  }

  /// Sends a raw line (a newline is appended).
  public func sendLine(_ text: String) throws(Failure) {
    do { try Syscall.writeAll(fd, Array((text + "\n").utf8)) } catch {
      if error == .brokenPipe { throw .closed(nil) }
      throw .io("write to \(path): \(error)")
    }
  }

  /// Sends `body` and waits for its reply or error, skipping events. Returns the message
  /// and its raw line (for `--json`).
  public func request(_ body: Request.Body, timeout: TimeSpan?) throws(Failure) -> (ServerMessage, String) {
    let id = try send(body)
    let deadline = timeout.map { SystemClock().now() + $0 }
    while true {
      let (message, line) = try read(until: deadline)
      switch message {
      case .reply(let r) where r.id == id: return (message, line)
      case .error(let eid, let e):
        if eid == id { return (message, line) }
        if eid == nil { throw .closed(e) }  // a connection-level error: the daemon closes next
      default: continue
      }
    }
  }

  /// The next complete message; `deadline` nil waits forever.
  public func read(until deadline: MonotonicInstant?) throws(Failure) -> (ServerMessage, String) {
    while true {
      if let output = framer.next() {
        guard case .line(let bytes) = output else { throw .malformed("a line longer than 64 MiB") }
        let line = String(decoding: bytes, as: UTF8.self)
        do { return (try ServerMessage.decode(line: line), line) } catch {
          throw .malformed("\(error.message): \(line)")
        }
      }
      try waitReadable(until: deadline)
      let result = buffer.withUnsafeMutableBytes { b in Result { () throws(Errno) in try Syscall.read(fd, into: b) } }
      let n: Int
      switch result {
      case .success(let r): n = r.value ?? -1
      case .failure(let error):
        if error.rawValue == ECONNRESET { throw .closed(nil) }
        throw .io("read from \(path): \(error)")
      }
      if n == 0 { throw .closed(nil) }
      if n > 0 { buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) } }
    }
  }

  /// Feeds bytes read elsewhere (the watch loop reads through the event loop).
  func append(_ bytes: UnsafeRawBufferPointer) { framer.append(bytes) }

  /// The next buffered message without reading, for the event-loop driven watch.
  func nextBuffered() throws(Failure) -> (ServerMessage, String)? {
    guard let output = framer.next() else { return nil }
    guard case .line(let bytes) = output else { throw .malformed("a line longer than 64 MiB") }
    let line = String(decoding: bytes, as: UTF8.self)
    do { return (try ServerMessage.decode(line: line), line) } catch { throw .malformed("\(error.message): \(line)") }
  }

  private func waitReadable(until deadline: MonotonicInstant?) throws(Failure) {
    while true {
      var timeout: Int32 = -1
      if let deadline {
        let remaining = deadline - SystemClock().now()
        if remaining.nanoseconds <= 0 { throw .timedOut }
        timeout = Int32(clamping: (remaining.nanoseconds + 999_999) / 1_000_000)
      }
      var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let rc = poll(&p, 1, timeout)
      if rc > 0 { return }
      if rc == 0 { continue }  // re-check the deadline
      let error = Errno.current
      if error == .interrupted { continue }
      throw .io("poll: \(error)")
    }
  }
}
