// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// A clock that only moves when told to: for tests and scenario replay.
public final class ManualClock: MonotonicClock {
  public private(set) var current: MonotonicInstant
  public init(_ start: MonotonicInstant = .zero) { current = start }
  public func now() -> MonotonicInstant { current }
  /// Moves time forward (never backward: monotonic means monotonic).
  public func advance(by span: TimeSpan) {
    precondition(span.nanoseconds >= 0, "a monotonic clock never goes back")
    current = current + span
  }
  public func advance(to instant: MonotonicInstant) {
    precondition(instant >= current, "a monotonic clock never goes back")
    current = instant
  }
}
