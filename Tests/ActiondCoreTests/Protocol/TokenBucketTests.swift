// SPDX-License-Identifier: Apache-2.0
import ActiondTesting
import Testing

@testable import ActiondCore

/// The token bucket behind the socket clients' rate limits (docs/protocol.md, fairness),
/// driven by a manual clock: no test sleeps.
@Suite struct TokenBucketTests {
  @Test func aFullBucketGivesItsBurstThenRefillsAtItsRate() {
    let clock = ManualClock(MonotonicInstant(nanoseconds: 5_000_000_000))
    var bucket = TokenBucket(burst: 8, perSecond: 4, at: clock.now())
    #expect(bucket.tokens(at: clock.now()) == 8)
    for _ in 0..<8 { bucket.spend(1, at: clock.now()) }
    #expect(!bucket.holds(1, at: clock.now()))
    // One token every 250 ms, exactly.
    #expect(bucket.instant(holding: 1, from: clock.now()) == clock.now() + .milliseconds(250))
    clock.advance(by: .milliseconds(249))
    #expect(!bucket.holds(1, at: clock.now()))
    clock.advance(by: .milliseconds(1))
    #expect(bucket.holds(1, at: clock.now()) && !bucket.holds(2, at: clock.now()))
    // Never more than the burst, however long it rests (and no overflow after years).
    clock.advance(by: .seconds(10 * 365 * 24 * 3600))
    #expect(bucket.tokens(at: clock.now()) == 8)
    #expect(bucket.instant(holding: 100, from: clock.now()) == clock.now())
  }

  @Test func debtIsRefilledLikeAnyDeficit() {
    let clock = ManualClock()
    var bucket = TokenBucket(burst: 64 * 1024, perSecond: 64 * 1024, at: clock.now())
    bucket.spend(64 * 1024, at: clock.now())
    bucket.spend(32 * 1024, at: clock.now())  // a read brought more than was left
    #expect(bucket.tokens(at: clock.now()) == -32 * 1024)
    #expect(bucket.instant(holding: 16 * 1024, from: clock.now()) == clock.now() + .milliseconds(750))
    clock.advance(by: .milliseconds(500))
    #expect(bucket.tokens(at: clock.now()) == 0 && !bucket.holds(1, at: clock.now()))
    clock.advance(by: .milliseconds(250))
    #expect(bucket.tokens(at: clock.now()) == 16 * 1024)
  }

  /// A greedy spender, taking a token whenever there is one, gets the burst and then the
  /// rate: over 10 simulated seconds, burst + 10 × rate tokens, not one more.
  @Test func aGreedySpenderGetsTheBurstThenTheRate() {
    let clock = ManualClock()
    let limits = ClientRateLimits.standard
    var bucket = limits.requestBucket(at: clock.now())
    var spent = 0
    for _ in 0...10_000 {  // 0 ms to 10 s
      while bucket.holds(1, at: clock.now()) {
        bucket.spend(1, at: clock.now())
        spent += 1
      }
      clock.advance(by: .milliseconds(1))
    }
    #expect(spent == limits.requestBurst + 10 * limits.requestsPerSecond)
  }

  /// The resume level: a throttled client is served again after a quarter of its burst
  /// refilled, so it costs the daemon a few wake-ups per second, not one per token.
  @Test func aThrottledClientResumesAtAQuarterOfItsBurst() {
    let limits = ClientRateLimits.standard
    let clock = ManualClock()
    var requests = limits.requestBucket(at: clock.now())
    requests.spend(limits.requestBurst, at: clock.now())
    let resume = requests.instant(holding: limits.resumeLevel(of: requests), from: clock.now())
    #expect(limits.resumeLevel(of: requests) == limits.requestBurst / 4)
    #expect(resume - clock.now() == .milliseconds(Int64(1000 * limits.requestBurst / 4 / limits.requestsPerSecond)))
    #expect(limits.resumeLevel(of: limits.acceptBucket(at: .zero)) == limits.acceptBurst / 4)
  }
}
