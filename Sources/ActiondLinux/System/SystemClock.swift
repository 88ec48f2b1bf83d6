// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// The daemon's clock: CLOCK_MONOTONIC, the clock libevdev timestamps and timerfd use.
public final class SystemClock: MonotonicClock {
  public init() {}
  public func now() -> MonotonicInstant { MonotonicInstant(nanoseconds: Syscall.monotonicNanoseconds()) }
}
