// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CActiondShim
import Glibc

/// Writes one line per record to an fd (stderr by default).
///
/// Interactive: `notice: message key=value`. Under systemd (``LogSinks/standard(environment:)``
/// detects it), every line starts with `<N>`, the syslog priority, which journald strips
/// and turns into PRIORITY=.
public final class StreamLogSink: LogSink {
  public let fd: Int32
  /// Prefix lines with `<N>` for journald instead of the level name.
  public let syslogPrefixes: Bool
  /// Lines that could not be written (the fd failed); never retried, never fatal.
  public private(set) var failedWrites = 0

  public init(fd: Int32 = STDERR_FILENO, syslogPrefixes: Bool) {
    self.fd = fd
    self.syslogPrefixes = syslogPrefixes
  }

  /// The exact line written for `record`, newline included.
  public func format(_ record: LogRecord) -> String {
    let prefix = syslogPrefixes ? "<\(record.level.syslogPriority)>" : record.level.name + ": "
    return prefix + LogLineFormat.line(record) + "\n"
  }

  public func write(_ record: LogRecord) {
    // One write(2) per line so concurrent writers (children sharing stderr) cannot
    // interleave within it. stderr stays blocking: making it non-blocking would change
    // the terminal's shared file description; lines are small, so a write blocks only
    // when the reader (journald, a terminal) is stalled.
    do { try Syscall.writeAll(fd, Array(format(record).utf8)) } catch { failedWrites += 1 }
  }
}

/// journald's native protocol: one datagram per record on /run/systemd/journal/socket,
/// with MESSAGE=, PRIORITY=, SYSLOG_IDENTIFIER=, ACTIOND_EVENT=, MESSAGE_ID= and one
/// upper-cased field per ``LogField``. Falls back to `fallback` when a send fails.
public final class JournalLogSink: LogSink {
  public static let defaultSocketPath = "/run/systemd/journal/socket"
  public let address: UnixAddress
  public let identifier: String
  public let fallback: LogSink
  private let fd: Int32
  /// Records that went to the fallback because the journal refused them.
  public private(set) var fallbackCount = 0

  /// Opens a non-blocking datagram socket to `path`; throws when the socket cannot be
  /// created or the journal does not accept a connection (so the caller can fall back).
  public init(path: String = defaultSocketPath, identifier: String = "actiond", fallback: LogSink) throws {
    guard let address = UnixAddress(path) else { throw SystemCallError("journal socket \(path)", .invalidArgument) }
    self.address = address
    self.identifier = identifier
    self.fallback = fallback
    let fd: Int32
    do {
      fd = try Syscall.retrying {
        socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | actiond_SOCK_CLOEXEC | actiond_SOCK_NONBLOCK, 0)
      }
    } catch { throw SystemCallError("socket", error) }
    let rc = address.withSockaddr { connect(fd, $0, $1) }
    if rc != 0 {
      let error = Errno.current
      Syscall.close(fd)
      throw SystemCallError("connect \(path)", error)
    }
    self.fd = fd
  }

  deinit { Syscall.close(fd) }

  /// The datagram for `record` in the native protocol.
  public func encode(_ record: LogRecord) -> [UInt8] {
    var out: [UInt8] = []
    func field(_ name: String, _ value: String) {
      let bytes = Array(value.utf8)
      out += Array(name.utf8)
      if bytes.contains(UInt8(ascii: "\n")) {
        // Binary form: NAME\n<64-bit little-endian length><value>\n
        out.append(UInt8(ascii: "\n"))
        withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { out += $0 }
      } else {
        out.append(UInt8(ascii: "="))
      }
      out += bytes
      out.append(UInt8(ascii: "\n"))
    }
    field("MESSAGE", record.message)
    field("PRIORITY", String(record.level.syslogPriority))
    field("SYSLOG_IDENTIFIER", identifier)
    if let event = record.event {
      field("ACTIOND_EVENT", event)
      field("MESSAGE_ID", Self.messageID(for: event))
    }
    for item in record.fields {
      let name = Self.journalFieldName(item.key)
      field(name, item.value)
    }
    return out
  }

  public func write(_ record: LogRecord) {
    let datagram = encode(record)
    let sent = datagram.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    if sent < 0 {
      fallbackCount += 1
      fallback.write(record)
    }
  }

  /// `ACTIOND_` + the key upper-cased with anything outside [A-Z0-9_] as `_` (journald's
  /// rule for field names; the prefix keeps them clear of trusted `_` fields).
  public static func journalFieldName(_ key: String) -> String {
    var name = "ACTIOND_"
    for s in key.unicodeScalars {
      switch s {
      case "a"..."z": name.unicodeScalars.append(Unicode.Scalar(s.value - 32)!)
      case "A"..."Z", "0"..."9": name.unicodeScalars.append(s)
      default: name += "_"
      }
    }
    return String(name.prefix(64))
  }

  /// A stable 128-bit id (32 lower-case hex digits, journald's MESSAGE_ID format) derived
  /// from the event name with two FNV-1a 64 hashes, so `journalctl MESSAGE_ID=...` finds an
  /// event across versions without a hand-kept table.
  public static func messageID(for event: String) -> String {
    func fnv(_ seed: UInt64) -> UInt64 {
      var hash = seed
      for byte in ("actiond:" + event).utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
      }
      return hash
    }
    func hex(_ value: UInt64) -> String {
      let digits = String(value, radix: 16)
      return String(repeating: "0", count: 16 - digits.count) + digits
    }
    return hex(fnv(0xcbf2_9ce4_8422_2325)) + hex(fnv(0x6c62_272e_07bb_0142))
  }
}

/// Chooses the daemon's sink from its environment.
public enum LogSinks {
  /// Whether `JOURNAL_STREAM` ("dev:inode") names the file behind `fd`, i.e. our stderr
  /// is connected to journald (not just inherited through a child's redirect).
  public static func isJournalStream(environment: [String: String], fd: Int32 = STDERR_FILENO) -> Bool {
    guard let value = environment["JOURNAL_STREAM"] else { return false }
    let parts = value.split(separator: ":")
    guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
    var info = stat()
    guard fstat(fd, &info) == 0 else { return false }
    return UInt64(info.st_dev) == dev && UInt64(info.st_ino) == ino
  }

  /// Under journald: the native protocol when its socket accepts us (structured fields),
  /// else `<N>`-prefixed stderr lines. Otherwise plain stderr lines.
  public static func standard(
    environment: [String: String], journalSocket: String = JournalLogSink.defaultSocketPath
  )
    -> LogSink
  {
    guard isJournalStream(environment: environment) else { return StreamLogSink(syslogPrefixes: false) }
    let stream = StreamLogSink(syslogPrefixes: true)
    if let journal = try? JournalLogSink(path: journalSocket, fallback: stream) { return journal }
    return stream
  }
}
