// SPDX-License-Identifier: Apache-2.0
/// Log severities, ordered from most verbose (debug) to most severe (error), with their
/// syslog priorities as raw values. One type for the command line, the configuration
/// and the logger.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
  case debug = 7
  case info = 6
  case notice = 5
  case warning = 4
  case error = 3

  /// The syslog priority (`<N>` prefix, journald `PRIORITY=`).
  public var syslogPriority: Int { rawValue }

  public init?(name: String) {
    switch name.lowercased() {
    case "debug": self = .debug
    case "info": self = .info
    case "notice": self = .notice
    case "warning", "warn": self = .warning
    case "error", "err": self = .error
    default: return nil
    }
  }

  /// The name as written in `--log-level` and the configuration's `logLevel`.
  public var name: String {
    switch self {
    case .debug: return "debug"
    case .info: return "info"
    case .notice: return "notice"
    case .warning: return "warning"
    case .error: return "error"
    }
  }

  public var description: String { name }

  /// More verbose levels compare smaller, so `level >= threshold` means "show it".
  public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue > b.rawValue }
}
