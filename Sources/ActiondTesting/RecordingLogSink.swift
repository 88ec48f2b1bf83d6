// SPDX-License-Identifier: Apache-2.0
import ActiondLinux

/// Keeps every record, for tests.
public final class RecordingLogSink: LogSink {
  public private(set) var records: [LogRecord] = []
  public init() {}
  public func write(_ record: LogRecord) { records.append(record) }
  /// Records with `event`.
  public func records(event: String) -> [LogRecord] { records.filter { $0.event == event } }
  public func removeAll() { records.removeAll() }
}
