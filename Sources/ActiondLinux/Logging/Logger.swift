// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// One log entry: a human message plus structured data.
public struct LogRecord: Sendable, Equatable {
  public var level: LogLevel
  public var message: String
  /// A stable identifier of the kind of event ("button-pressed", "state-corrupt"), so
  /// entries can be found without parsing messages. In the journal it becomes
  /// `ACTIOND_EVENT=` and a `MESSAGE_ID=` derived from it deterministically.
  public var event: String?
  /// Key/value pairs in order ("button" → "action"). Keys are lower-case words.
  public var fields: [LogField]

  public init(level: LogLevel, message: String, event: String? = nil, fields: [LogField] = []) {
    self.level = level
    self.message = message
    self.event = event
    self.fields = fields
  }

  /// The value of the first field named `key`.
  public subscript(field key: String) -> String? { fields.first { $0.key == key }?.value }
}

/// One structured field of a ``LogRecord``.
public struct LogField: Sendable, Equatable {
  public var key: String
  public var value: String
  public init(_ key: String, _ value: String) {
    self.key = key
    self.value = value
  }
}

/// Where records go. Sinks are called on the loop thread.
public protocol LogSink: AnyObject {
  func write(_ record: LogRecord)
}

/// The daemon's logger: filters by level and hands records to a sink.
///
/// Logging rarely blocks the loop, and never for long while the reader keeps up: stderr
/// lines are small single blocking `write(2)`s (to a terminal or the journal's stream
/// socket, so a stalled reader stalls them), and the journal's native datagram socket is
/// non-blocking: when it refuses an entry (a full buffer, journald gone) the entry goes to
/// the stderr sink instead and is counted (`JournalLogSink.fallbackCount`), never lost
/// silently.
public final class Logger {
  /// Records below this level are dropped before formatting.
  public var minimumLevel: LogLevel
  public let sink: LogSink

  public init(minimumLevel: LogLevel = .info, sink: LogSink) {
    self.minimumLevel = minimumLevel
    self.sink = sink
  }

  /// Logs `message` at `level`. The message is only built when the level is enabled.
  public func log(
    _ level: LogLevel, _ message: @autoclosure () -> String, event: String? = nil,
    _ fields: KeyValuePairs<String, String> = [:]
  ) {
    guard level >= minimumLevel else { return }
    sink.write(
      LogRecord(level: level, message: message(), event: event, fields: fields.map { LogField($0.key, $0.value) }))
  }

  public func debug(
    _ message: @autoclosure () -> String, event: String? = nil, _ fields: KeyValuePairs<String, String> = [:]
  ) {
    log(.debug, message(), event: event, fields)
  }
  public func info(
    _ message: @autoclosure () -> String, event: String? = nil, _ fields: KeyValuePairs<String, String> = [:]
  ) {
    log(.info, message(), event: event, fields)
  }
  public func notice(
    _ message: @autoclosure () -> String, event: String? = nil, _ fields: KeyValuePairs<String, String> = [:]
  ) {
    log(.notice, message(), event: event, fields)
  }
  public func warning(
    _ message: @autoclosure () -> String, event: String? = nil, _ fields: KeyValuePairs<String, String> = [:]
  ) {
    log(.warning, message(), event: event, fields)
  }
  public func error(
    _ message: @autoclosure () -> String, event: String? = nil, _ fields: KeyValuePairs<String, String> = [:]
  ) {
    log(.error, message(), event: event, fields)
  }
}

/// Formats a record as one text line (no newline), the same on a terminal and in the journal:
/// `message event=button-pressed button=action hint="Hold to Start"`.
public enum LogLineFormat {
  public static func line(_ record: LogRecord) -> String {
    var line = ""
    for character in record.message { line.append(character.isNewline ? " " : character) }
    if let event = record.event { line += " event=" + quoted(event) }
    for field in record.fields { line += " " + field.key + "=" + quoted(field.value) }
    return line
  }

  /// Values with spaces, quotes, `=` or control characters are double-quoted and escaped.
  public static func quoted(_ value: String) -> String {
    let plain =
      !value.isEmpty
      && value.unicodeScalars.allSatisfy { s in
        s.value > 0x20 && s.value != 0x7F && s != "\"" && s != "=" && s != "\\"
      }
    if plain { return value }
    var out = "\""
    for s in value.unicodeScalars {
      switch s {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      case "\r": out += "\\r"
      default:
        if s.value < 0x20 || s.value == 0x7F {
          out += "\\x" + (s.value < 0x10 ? "0" : "") + String(s.value, radix: 16)
        } else {
          out.unicodeScalars.append(s)
        }
      }
    }
    return out + "\""
  }
}
