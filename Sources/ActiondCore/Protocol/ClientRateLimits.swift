// SPDX-License-Identifier: Apache-2.0
/// A token bucket over monotonic time: it holds at most `burst` tokens and refills at
/// `perSecond`, so whatever spends from it averages at most `perSecond` over any long
/// stretch, after an initial `burst`. Spending may take the level below zero (a read cannot
/// give back the bytes it brought); the debt refills like any deficit.
///
/// Pure data: every operation is given the instant it happens at (time is data), so tests
/// drive it with a `ManualClock` (ActiondTesting) and never sleep.
public struct TokenBucket: Sendable, Equatable {
  /// The most tokens the bucket holds (and holds at the start).
  public let burst: Int
  /// Tokens added per second.
  public let perSecond: Int
  /// The level in nanotokens (tokens × 10⁹): refilling is exact integer arithmetic.
  private var level: Int64
  /// The instant `level` was computed for.
  private var updated: MonotonicInstant

  private static let scale: Int64 = 1_000_000_000

  /// A full bucket at `now`. `burst` and `perSecond` are at least 1.
  public init(burst: Int, perSecond: Int, at now: MonotonicInstant) {
    precondition(burst >= 1 && perSecond >= 1, "a token bucket needs a burst and a rate")
    self.burst = burst
    self.perSecond = perSecond
    level = Int64(burst) * Self.scale
    updated = now
  }

  /// Whole tokens held at `now` (rounded down; negative while in debt).
  public func tokens(at now: MonotonicInstant) -> Int {
    let l = levelAt(now)
    return Int(l >= 0 ? l / Self.scale : -((-l + Self.scale - 1) / Self.scale))
  }

  /// Whether at least `n` tokens are held at `now`.
  public func holds(_ n: Int, at now: MonotonicInstant) -> Bool { levelAt(now) >= Int64(n) * Self.scale }

  /// Takes `n` tokens at `now`, below zero if need be.
  public mutating func spend(_ n: Int, at now: MonotonicInstant) {
    level = levelAt(now) - Int64(n) * Self.scale
    if now > updated { updated = now }
  }

  /// The first instant, not before `now`, at which the bucket holds `n` tokens (`n` is
  /// capped at `burst`, which a bucket always reaches).
  public func instant(holding n: Int, from now: MonotonicInstant) -> MonotonicInstant {
    let wanted = Int64(min(n, burst)) * Self.scale
    let current = levelAt(now)
    guard current < wanted else { return now }
    let rate = Int64(perSecond)
    return now + TimeSpan(nanoseconds: (wanted - current + rate - 1) / rate)
  }

  private func levelAt(_ now: MonotonicInstant) -> Int64 {
    let full = Int64(burst) * Self.scale
    guard now > updated, level < full else { return level }
    let elapsed = (now - updated).nanoseconds
    let rate = Int64(perSecond)
    // After a long pause the product could overflow: compare with the time to fill first.
    let toFill = (full - level + rate - 1) / rate
    return elapsed >= toFill ? full : level + elapsed * rate
  }
}

/// How much work one socket client can make the daemon do over time (docs/protocol.md,
/// "Fairness"), on top of the per-turn bounds: per connection, request lines sent ahead of
/// their replies and bytes read; for all connections together, connections accepted.
///
/// A client whose bucket is empty is throttled: its socket is not read (its requests wait,
/// unread, in its own socket buffer) until the bucket holds ``resumeFraction`` of its
/// burst again. Nothing it sent is dropped or reordered and every reply still comes, later.
public struct ClientRateLimits: Sendable, Equatable {
  /// Request lines a connection may have handled at once before the rate applies.
  public var requestBurst: Int
  /// Request lines per second per connection after the burst. Only lines handled while
  /// the client has not taken everything the daemon sent it, or has sent more behind them,
  /// count: a client that sends one request and reads its reply before the next is never
  /// throttled by this bucket.
  public var requestsPerSecond: Int
  /// Bytes a connection may have read at once before the rate applies.
  public var byteBurst: Int
  /// Bytes read per second per connection after the burst (every byte counts).
  public var bytesPerSecond: Int
  /// Connections of one user (uid) greeted at once before the rate applies.
  public var acceptBurst: Int
  /// Connections of one user greeted per second after the burst.
  public var acceptsPerSecond: Int
  /// A throttled connection, or the paused listener, is served again once its bucket
  /// holds this fraction of its burst (1/`resumeFraction`): a throttled client costs a
  /// few wake-ups per second, not one per token.
  public var resumeFraction: Int

  public init(
    requestBurst: Int, requestsPerSecond: Int, byteBurst: Int, bytesPerSecond: Int, acceptBurst: Int,
    acceptsPerSecond: Int, resumeFraction: Int
  ) {
    self.requestBurst = requestBurst
    self.requestsPerSecond = requestsPerSecond
    self.byteBurst = byteBurst
    self.bytesPerSecond = bytesPerSecond
    self.acceptBurst = acceptBurst
    self.acceptsPerSecond = acceptsPerSecond
    self.resumeFraction = resumeFraction
  }

  /// The daemon's figures (docs/protocol.md states them; a docs test checks them). Chosen
  /// by measurement (docs/benchmarks-notebook.md, "Rate limits per client"): on the one-vCPU guest a
  /// connection costs the daemon about 5 ms of CPU from accept to close, so the accept rate
  /// decides most of what 50 abusive clients cost; 64 pipelined requests and 128 accepts
  /// per second left the daemon as busy as without limits, these figures cut its CPU by a
  /// third and brought `held` p99 near the C reactor's under the same abuse.
  public static let standard = ClientRateLimits(
    requestBurst: 16, requestsPerSecond: 4, byteBurst: 128 * 1024, bytesPerSecond: 64 * 1024, acceptBurst: 32,
    acceptsPerSecond: 16, resumeFraction: 4)

  /// A connection's request bucket, full at `now`.
  public func requestBucket(at now: MonotonicInstant) -> TokenBucket {
    TokenBucket(burst: requestBurst, perSecond: requestsPerSecond, at: now)
  }
  /// A connection's byte bucket, full at `now`.
  public func byteBucket(at now: MonotonicInstant) -> TokenBucket {
    TokenBucket(burst: byteBurst, perSecond: bytesPerSecond, at: now)
  }
  /// A user's accept bucket, full at `now`.
  public func acceptBucket(at now: MonotonicInstant) -> TokenBucket {
    TokenBucket(burst: acceptBurst, perSecond: acceptsPerSecond, at: now)
  }

  /// The tokens `bucket` must hold again before a throttled client is served.
  public func resumeLevel(of bucket: TokenBucket) -> Int { max(1, bucket.burst / max(1, resumeFraction)) }
}
