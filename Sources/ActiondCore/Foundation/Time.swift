// SPDX-License-Identifier: Apache-2.0
/// A point in time on CLOCK_MONOTONIC, in nanoseconds.
///
/// Everything that decides timing in actiond is expressed in this one clock: kernel
/// event timestamps (libevdev is switched to CLOCK_MONOTONIC), hold deadlines and
/// timer expirations. Wall-clock time never takes part in a decision, so a clock
/// step (NTP, RTC) cannot turn a short press into a hold.
public struct MonotonicInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
  /// Nanoseconds since an arbitrary, boot-relative origin.
  public var nanoseconds: Int64

  @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

  /// An instant from a kernel `struct timeval`-style pair (seconds, microseconds).
  @inlinable public init(seconds: Int64, microseconds: Int64) {
    self.nanoseconds = seconds &* 1_000_000_000 &+ microseconds &* 1_000
  }

  public static let zero = MonotonicInstant(nanoseconds: 0)

  @inlinable public static func < (a: MonotonicInstant, b: MonotonicInstant) -> Bool {
    a.nanoseconds < b.nanoseconds
  }
  @inlinable public static func + (a: MonotonicInstant, b: TimeSpan) -> MonotonicInstant {
    MonotonicInstant(nanoseconds: a.nanoseconds &+ b.nanoseconds)
  }
  @inlinable public static func - (a: MonotonicInstant, b: TimeSpan) -> MonotonicInstant {
    MonotonicInstant(nanoseconds: a.nanoseconds &- b.nanoseconds)
  }
  @inlinable public static func - (a: MonotonicInstant, b: MonotonicInstant) -> TimeSpan {
    TimeSpan(nanoseconds: a.nanoseconds &- b.nanoseconds)
  }

  /// Microseconds, the unit of systemd's `MONOTONIC_USEC=`.
  @inlinable public var microseconds: Int64 { nanoseconds / 1_000 }

  public var description: String { TimeSpan(nanoseconds: nanoseconds).description }
}

/// A signed span of time in nanoseconds. Kept as a plain integer (not `Duration`)
/// because it sits on the per-event hot path and must not allocate or divide.
public struct TimeSpan: Comparable, Hashable, Sendable, CustomStringConvertible {
  public var nanoseconds: Int64

  @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }
  @inlinable public static func milliseconds(_ ms: Int64) -> TimeSpan {
    TimeSpan(nanoseconds: ms &* 1_000_000)
  }
  @inlinable public static func microseconds(_ us: Int64) -> TimeSpan {
    TimeSpan(nanoseconds: us &* 1_000)
  }
  @inlinable public static func seconds(_ s: Int64) -> TimeSpan {
    TimeSpan(nanoseconds: s &* 1_000_000_000)
  }
  public static let zero = TimeSpan(nanoseconds: 0)

  /// Whole milliseconds, rounded toward zero.
  @inlinable public var milliseconds: Int64 { nanoseconds / 1_000_000 }

  @inlinable public static func < (a: TimeSpan, b: TimeSpan) -> Bool { a.nanoseconds < b.nanoseconds }
  @inlinable public static func + (a: TimeSpan, b: TimeSpan) -> TimeSpan {
    TimeSpan(nanoseconds: a.nanoseconds &+ b.nanoseconds)
  }

  /// "600ms", "1.5s", "250us": for logs and test output.
  public var description: String {
    let ns = nanoseconds
    if ns % 1_000_000 == 0 { return "\(ns / 1_000_000)ms" }
    if ns % 1_000 == 0 { return "\(ns / 1_000)us" }
    return "\(ns)ns"
  }
}

/// Where "now" comes from. The daemon reads CLOCK_MONOTONIC; tests advance a
/// manual clock, so no test ever sleeps to test timing.
public protocol MonotonicClock: AnyObject {
  /// The current instant on CLOCK_MONOTONIC.
  func now() -> MonotonicInstant
}
