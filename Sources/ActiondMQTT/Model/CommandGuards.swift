// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// Drops a QoS 1 command the broker delivers again.
///
/// MQTT 3.1.1 (4.3.2, 4.4) redelivers an unacknowledged QoS 1 PUBLISH after a reconnect
/// with the same packet identifier; libmosquitto does not expose the DUP flag. So the rule
/// is: a QoS ≥ 1 message whose (packet id, topic, payload) equals one accepted less than
/// ``window`` ago is a redelivery and is dropped. A packet id is only reused by the broker
/// after its PUBACK, and then for a new message (mosquitto counts ids up to 65535 before
/// wrapping), so within the window a true repetition of a command (Home Assistant sending
/// `ON` twice) has a different id and is *not* dropped; the model's "only when the value
/// differs" rule keeps that one harmless. QoS 0 messages have no id and are never dropped.
public struct CommandDeduplicator: Sendable {
  struct Entry: Hashable, Sendable {
    var mid: Int32
    var topic: String
    var payload: [UInt8]
  }

  /// How long an accepted command is remembered (60 s: a reconnect after a network cut
  /// takes seconds; a wrapped packet id takes 65535 messages).
  public let window: TimeSpan
  /// At most this many are remembered; the oldest go first.
  public let capacity: Int
  private var seen: [Entry: MonotonicInstant] = [:]
  private var order: [(Entry, MonotonicInstant)] = []

  public init(window: TimeSpan = .seconds(60), capacity: Int = 1024) {
    self.window = window
    self.capacity = capacity
  }

  /// True when the message is new (act on it), false for a redelivery (drop it).
  public mutating func accept(mid: Int32, qos: Int32, topic: String, payload: [UInt8], at now: MonotonicInstant) -> Bool
  {
    guard qos > 0 else { return true }
    prune(now)
    let entry = Entry(mid: mid, topic: topic, payload: payload)
    if seen[entry] != nil { return false }
    seen[entry] = now
    order.append((entry, now))
    if order.count > capacity {
      let (old, at) = order.removeFirst()
      if seen[old] == at { seen[old] = nil }
    }
    return true
  }

  /// How many commands are remembered now.
  public var count: Int { seen.count }

  private mutating func prune(_ now: MonotonicInstant) {
    var drop = 0
    while drop < order.count, now - order[drop].1 >= window {
      if seen[order[drop].0] == order[drop].1 { seen[order[drop].0] = nil }
      drop += 1
    }
    if drop > 0 { order.removeFirst(drop) }
  }
}

/// Logs a bad command once per topic per ``interval``: a client that floods a topic with
/// garbage costs one log line a minute, which says how many were dropped meanwhile.
public struct RateLimitedReports: Sendable {
  public let interval: TimeSpan
  /// Topics remembered at most; beyond it the oldest report times are forgotten (so a flood
  /// over many topics still logs at most this many lines per interval).
  public let capacity: Int
  private var last: [String: (at: MonotonicInstant, suppressed: Int)] = [:]

  public init(interval: TimeSpan = .seconds(60), capacity: Int = 256) {
    self.interval = interval
    self.capacity = capacity
  }

  /// nil: do not log now (counted). Otherwise log, mentioning the returned number of
  /// reports suppressed for this topic since its last line.
  public mutating func report(_ topic: String, at now: MonotonicInstant) -> Int? {
    if let entry = last[topic], now - entry.at < interval {
      last[topic] = (entry.at, entry.suppressed + 1)
      return nil
    }
    let suppressed = last[topic]?.suppressed ?? 0
    if last[topic] == nil && last.count >= capacity {
      // Forget the topics reported longest ago (their suppressed counts are lost, their next
      // report logs at once): the memory stays bounded whatever the flood.
      if let oldest = last.min(by: { $0.value.at < $1.value.at })?.key {
        if now - last[oldest]!.at < interval { return nil }
        last[oldest] = nil
      }
    }
    last[topic] = (now, 0)
    return suppressed
  }
}

/// Reconnect delays: 0.5 s, doubling to at most 30 s; back to the start after a success.
public struct Backoff: Sendable {
  public let initial: TimeSpan
  public let maximum: TimeSpan
  private var next: TimeSpan

  public init(initial: TimeSpan = .milliseconds(500), maximum: TimeSpan = .seconds(30)) {
    self.initial = initial
    self.maximum = maximum
    self.next = initial
  }

  /// The delay before the next attempt; each call doubles the one after.
  public mutating func delay() -> TimeSpan {
    let d = next
    next = TimeSpan(nanoseconds: min(maximum.nanoseconds, next.nanoseconds * 2))
    return d
  }

  public mutating func reset() { next = initial }
}
