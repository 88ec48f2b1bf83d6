// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

/// Random event sequences checked against a reference model that is written
/// differently from the recognizer: it sees the whole timeline at once and derives
/// the announcements from the press intervals, with no states, timers or order of
/// delivery. Seeded, so a failure prints the seed that reproduces it.
@Suite struct RecognizerPropertyTests {
  static let cases = 10_000
  /// Change to reproduce a failure printed by a run (the failing case's seed).
  static let baseSeed: UInt64 = 0x6163_7469_6F6E_64

  @Test func matchesReferenceModelWithoutDebounce() {
    for index in 0..<Self.cases {
      let seed = Self.baseSeed &+ UInt64(index)
      if !checkAgainstReference(seed: seed, debounce: false, gestures: []) { return }
    }
  }

  /// The debounce rule is simple enough to model on the timeline: intervals
  /// separated by a gap shorter than the debounce time are one press.
  @Test func matchesReferenceModelWithDebounce() {
    for index in 0..<Self.cases {
      let seed = Self.baseSeed &+ 0x1_0000_0000 &+ UInt64(index)
      if !checkAgainstReference(seed: seed, debounce: true, gestures: []) { return }
    }
  }

  /// Per gesture configuration, 10,000 sequences each (debounce on in half of them):
  /// hold + double press, hold + long hold, all three. (A momentary toggle is a hold to
  /// the recognizer; its release is the engine's.)
  @Test(arguments: [GestureSet.doublePress, .longHold, [.doublePress, .longHold]])
  func matchesReferenceModelWithGestures(_ gestures: GestureSet) {
    for index in 0..<Self.cases {
      let seed = Self.baseSeed &+ (UInt64(gestures.rawValue) << 36) &+ UInt64(index)
      if !checkAgainstReference(seed: seed, debounce: index % 2 == 1, gestures: gestures) { return }
    }
  }

  /// Physically consistent sequences with device loss, reappearance and SYN_DROPPED
  /// resyncs: never an anomaly, and every button's announcements are well formed.
  @Test func deviceLossAndResyncKeepAnnouncementsWellFormed() {
    for index in 0..<Self.cases {
      let seed = Self.baseSeed &+ 0x2_0000_0000 &+ UInt64(index)
      if !checkWellFormed(seed: seed) { return }
    }
  }

  // MARK: Reference model

  /// One press as the timeline shows it: down at `press`, up at `release` (nil: still down at the end).
  struct Interval {
    var press: MonotonicInstant
    var release: MonotonicInstant?
  }

  /// What the recognizer must announce for a button, from its intervals alone:
  /// intervals less than `debounce` apart are one press; a press lasting at least the
  /// threshold gets exactly one held, at press + threshold, and with `longHold` one
  /// long-held at press + long threshold when it lasts that long; any other press gets a
  /// short release and never a held. With `doublePress`, a press that follows a short
  /// press by less than the window (its start minus the short press's end) is that
  /// short press's second press: the short press announces no release, the second press
  /// a double press at its start and, when it ends, its own release, whatever its
  /// length. Autorepeat and other keys do not appear here at all.
  static func reference(
    _ intervals: [Interval], settings: RecognizerSettings, gestures: GestureSet = []
  ) -> [PressAnnouncement] {
    var merged: [Interval] = []
    for interval in intervals {
      if let last = merged.last, let release = last.release, interval.press - release < settings.debounce {
        merged[merged.count - 1].release = interval.release
      } else {
        merged.append(interval)
      }
    }
    func isShort(_ interval: Interval) -> Bool {
      interval.release.map { $0 - interval.press < settings.holdThreshold } ?? false
    }
    // Which intervals are second presses: each follows a short first press closely.
    var second = Array(repeating: false, count: merged.count)
    if gestures.contains(.doublePress) {
      for index in merged.indices.dropFirst() where !second[index - 1] && isShort(merged[index - 1]) {
        if merged[index].press - merged[index - 1].release! < settings.doublePressWindow { second[index] = true }
      }
    }
    var result: [PressAnnouncement] = []
    for (index, interval) in merged.enumerated() {
      if second[index] {
        let first = merged[index - 1]
        result.append(
          .doublePressed(at: interval.press, firstPressedAt: first.press, gap: interval.press - first.release!))
        if let release = interval.release {
          result.append(.releasedAfterDoublePress(at: release, heldFor: release - interval.press))
        }
        continue
      }
      result.append(.pressed(at: interval.press))
      let deadline = interval.press + settings.holdThreshold
      let longDeadline = interval.press + settings.longHoldThreshold
      let length = interval.release.map { $0 - interval.press }
      if let length, length < settings.holdThreshold {
        if index + 1 < merged.count && second[index + 1] { continue }  // its double press speaks for it
        result.append(.released(at: interval.release!, heldFor: length))
        continue
      }
      result.append(.held(at: deadline, pressedAt: interval.press))
      let long = gestures.contains(.longHold) && (length.map { $0 >= settings.longHoldThreshold } ?? true)
      if long { result.append(.longHeld(at: longDeadline, pressedAt: interval.press)) }
      if let release = interval.release, let length {
        result.append(.releasedAfterHold(at: release, heldFor: length, longHeld: long))
      }
    }
    return result
  }

  // MARK: Generation

  struct Event: CustomStringConvertible {
    var time: MonotonicInstant
    var button: Int
    var code: UInt16
    var value: Int32
    var description: String { "b\(button) code=\(code) value=\(value) @\(time.nanoseconds / 1000)us" }
  }

  static let origin = MonotonicInstant(nanoseconds: 86_400_000_000_000)
  static let otherKey: UInt16 = 30

  /// Random press intervals for one button, with lengths and gaps clustered around
  /// the threshold and the debounce time (where the interesting boundaries are),
  /// plus autorepeat inside presses and other keys of the same device.
  static func generate(
    button: Int, code: UInt16, settings: RecognizerSettings, rng: inout SplitMix64
  ) -> (intervals: [Interval], events: [Event]) {
    let threshold = settings.holdThreshold.nanoseconds
    let debounce = settings.debounce.nanoseconds
    let window = settings.doublePressWindow.nanoseconds
    let long = settings.longHoldThreshold.nanoseconds
    var intervals: [Interval] = []
    var events: [Event] = []
    var now = origin + TimeSpan(nanoseconds: Int64.random(in: 0...50_000_000, using: &rng))
    for index in 0..<Int.random(in: 0...8, using: &rng) {
      if index > 0 {
        let gap: Int64
        switch Int.random(in: 0..<9, using: &rng) {
        case 0: gap = debounce
        case 1: gap = max(0, debounce - 1_000)
        case 2: gap = Int64.random(in: 0...(2 * debounce + 5_000_000), using: &rng)
        case 3: gap = 0
        case 4: gap = window
        case 5: gap = window - 1_000
        case 6: gap = Int64.random(in: 0...(2 * window), using: &rng)
        default: gap = Int64.random(in: 0...2_000_000_000, using: &rng)
        }
        now = now + TimeSpan(nanoseconds: gap)
      }
      let press = now
      let length: Int64
      switch Int.random(in: 0..<9, using: &rng) {
      case 0: length = threshold
      case 1: length = threshold - 1_000  // kernel timestamps have microsecond steps
      case 2: length = threshold + 1_000
      case 3: length = Int64.random(in: 0...50_000_000, using: &rng)
      case 4: length = long
      case 5: length = long - 1_000
      case 6: length = Int64.random(in: threshold...(long + threshold), using: &rng)
      default: length = Int64.random(in: 0...(2 * threshold), using: &rng)
      }
      let release = press + TimeSpan(nanoseconds: length)
      events.append(Event(time: press, button: button, code: code, value: 1))
      if Bool.random(using: &rng) {
        // Kernel autorepeat: a delay, then a period, while the key is down.
        var at = press + .milliseconds(Int64.random(in: 1...300, using: &rng))
        let period = TimeSpan.milliseconds(Int64.random(in: 5...100, using: &rng))
        var count = 0
        while at < release, count < 40 {
          events.append(Event(time: at, button: button, code: code, value: 2))
          at = at + period
          count += 1
        }
      }
      if Int.random(in: 0..<4, using: &rng) == 0 {
        let other = press + TimeSpan(nanoseconds: Int64.random(in: 0...max(0, length), using: &rng))
        events.append(Event(time: other, button: button, code: otherKey, value: Int32.random(in: 0...2, using: &rng)))
      }
      let isLast = index == 7
      if isLast || Int.random(in: 0..<10, using: &rng) == 0 {
        intervals.append(Interval(press: press, release: nil))  // still down at the end
        break
      }
      events.append(Event(time: release, button: button, code: code, value: 0))
      intervals.append(Interval(press: press, release: release))
      now = release
    }
    return (intervals, events)
  }

  static func randomSettings(debounce: Bool, rng: inout SplitMix64) -> RecognizerSettings {
    let thresholdMs: Int64 =
      Int.random(in: 0..<4, using: &rng) == 0
      ? Int64.random(in: 100...10_000, using: &rng) : Int64.random(in: 100...1_500, using: &rng)
    let debounceUs: Int64 = debounce ? Int64.random(in: 0...200_000, using: &rng) : 0
    let windowUs = Int64.random(in: max(100_000, debounceUs + 1)...1_000_000, using: &rng)
    let longMs: Int64? =
      Bool.random(using: &rng)
      ? nil : Int64.random(in: max(200, thresholdMs + 1)...min(60_000, 3 * thresholdMs + 200), using: &rng)
    // Every value is drawn from its valid range, so this cannot throw.
    return try! RecognizerSettings(
      holdThreshold: .milliseconds(thresholdMs), debounce: .microseconds(debounceUs),
      doublePressWindow: .microseconds(windowUs), longHoldThreshold: longMs.map { .milliseconds($0) })
  }

  /// How late the loop delivers deadline inputs: on time, a random latency, or
  /// only after everything else (the recognizer must not care).
  enum TimerDelivery: CustomStringConvertible {
    case latency(TimeSpan)
    case atTheEnd
    var description: String {
      switch self {
      case .latency(let span): "latency \(span)"
      case .atTheEnd: "at the end"
      }
    }
  }

  // MARK: Checks

  /// Returns false (after recording an issue) on the first mismatch.
  func checkAgainstReference(seed: UInt64, debounce: Bool, gestures: GestureSet) -> Bool {
    var rng = SplitMix64(seed: seed)
    let buttonCount = Int.random(in: 1...3, using: &rng)
    var buttons: [ButtonRecognizers.Button] = []
    var expected: [[PressAnnouncement]] = []
    var events: [Event] = []
    for button in 0..<buttonCount {
      let settings = Self.randomSettings(debounce: debounce, rng: &rng)
      let code = UInt16(148 + button)
      buttons.append(ButtonRecognizers.Button(keyCode: code, settings: settings, gestures: gestures))
      let generated = Self.generate(button: button, code: code, settings: settings, rng: &rng)
      expected.append(Self.reference(generated.intervals, settings: settings, gestures: gestures))
      events += generated.events
    }
    // Timestamp order across buttons; within a button, generation order breaks ties
    // (a release before a press at the same instant).
    events = events.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    let delivery: TimerDelivery =
      switch Int.random(in: 0..<3, using: &rng) {
      case 0: .latency(.zero)
      case 1: .latency(TimeSpan(nanoseconds: Int64.random(in: 0...300_000_000, using: &rng)))
      default: .atTheEnd
      }

    var recognizers = ButtonRecognizers(buttons)
    var actual: [[PressAnnouncement]] = Array(repeating: [], count: buttonCount)
    var anomalies: [String] = []
    func record(_ button: Int, _ out: PressRecognizer.Output) {
      actual[button] += out.announcements
      if let anomaly = out.anomaly { anomalies.append("button \(button): \(anomaly)") }
    }
    func fireTimers(before limit: MonotonicInstant?) {
      while let deadline = recognizers.nextDeadline {
        let firesAt: MonotonicInstant
        switch delivery {
        case .latency(let latency): firesAt = deadline.at + latency
        case .atTheEnd: firesAt = deadline.at + .seconds(100)
        }
        if let limit, firesAt > limit { return }
        if case .atTheEnd = delivery, limit != nil { return }
        recognizers.deadlineReached(at: firesAt, record)
        // A deadline that does not move after it was delivered would hang the loop.
        if recognizers.nextDeadline == deadline {
          anomalies.append("deadline \(deadline) not settled at \(firesAt)")
          return
        }
      }
    }
    for event in events {
      fireTimers(before: event.time)
      if let out = recognizers.keyEvent(button: event.button, code: event.code, value: event.value, at: event.time) {
        record(event.button, out)
      }
    }
    fireTimers(before: nil)

    if actual != expected || !anomalies.isEmpty {
      var report =
        "seed \(seed) (debounce: \(debounce), gestures: \(gestures), timers: \(delivery)): "
        + "recognizer differs from the reference\n"
      for button in 0..<buttonCount {
        report += "button \(button) \(buttons[button].recognizer.settings)\n"
        report += "  expected: \(expected[button])\n  actual:   \(actual[button])\n"
      }
      report += "anomalies: \(anomalies)\nevents:\n  " + events.map(\.description).joined(separator: "\n  ")
      Issue.record(Comment(rawValue: report))
      return false
    }
    return true
  }

  /// A physical key, a device that comes and goes, and event loss: the adapter
  /// reports exactly what it could observe. Checks the announcement grammar per
  /// press: pressed, at most one held (at press + threshold), then exactly one of
  /// released (shorter than the threshold, no held), released-after-hold
  /// (after held), or cancelled (after-hold iff held was announced).
  func checkWellFormed(seed: UInt64) -> Bool {
    var rng = SplitMix64(seed: seed)
    let buttonCount = Int.random(in: 1...3, using: &rng)
    var buttons: [ButtonRecognizers.Button] = []
    for button in 0..<buttonCount {
      buttons.append(
        .init(
          keyCode: UInt16(256 + button), settings: Self.randomSettings(debounce: true, rng: &rng),
          gestures: GestureSet(rawValue: UInt8.random(in: 0...3, using: &rng))))
    }
    var recognizers = ButtonRecognizers(buttons)
    var physicalDown = Array(repeating: false, count: buttonCount)
    var present = Array(repeating: true, count: buttonCount)
    var dropping = Array(repeating: false, count: buttonCount)
    var log: [String] = []
    var announcements: [[PressAnnouncement]] = Array(repeating: [], count: buttonCount)
    var problems: [String] = []
    var now = Self.origin

    func record(_ button: Int, _ out: PressRecognizer.Output) {
      announcements[button] += out.announcements
      if let anomaly = out.anomaly { problems.append("button \(button): anomaly \(anomaly)") }
    }
    for _ in 0..<Int.random(in: 1...60, using: &rng) {
      now = now + TimeSpan(nanoseconds: Int64.random(in: 0...400_000_000, using: &rng))
      while let deadline = recognizers.nextDeadline, deadline.at <= now {
        recognizers.deadlineReached(at: deadline.at, record)
        if recognizers.nextDeadline == deadline {
          problems.append("deadline \(deadline) not settled")
          break
        }
      }
      let button = Int.random(in: 0..<buttonCount, using: &rng)
      switch Int.random(in: 0..<21, using: &rng) {
      case 20:  // an assignment changes the button's gestures
        let gestures = GestureSet(rawValue: UInt8.random(in: 0...3, using: &rng))
        log.append("b\(button) gestures=\(gestures) @\(now)")
        record(button, recognizers.setGestures(button: button, gestures))
      case 0:  // the device goes away (events in flight are lost with it)
        if present[button] {
          present[button] = false
          dropping[button] = false
          log.append("b\(button) lost @\(now)")
          record(button, recognizers.deviceLost(button: button, at: now))
        }
      case 1:  // it comes back with the key as it physically is
        if !present[button] {
          present[button] = true
          log.append("b\(button) appear down=\(physicalDown[button]) @\(now)")
          record(button, recognizers.deviceAppeared(button: button, keyDown: physicalDown[button], at: now))
        }
      case 2:  // the client buffer overflows: events are lost until the resync
        if present[button] { dropping[button] = true }
      case 3:
        if present[button], dropping[button] {
          dropping[button] = false
          log.append("b\(button) resync down=\(physicalDown[button]) @\(now)")
          record(button, recognizers.resynchronized(button: button, keyDown: physicalDown[button], at: now))
        }
      default:  // the finger moves (or autorepeat)
        let value: Int32
        if physicalDown[button], Int.random(in: 0..<3, using: &rng) == 0 {
          value = 2
        } else {
          physicalDown[button].toggle()
          value = physicalDown[button] ? 1 : 0
        }
        if present[button], !dropping[button] {
          log.append("b\(button) value=\(value) @\(now)")
          record(button, recognizers.keyEvent(button: button, code: UInt16(256 + button), value: value, at: now)!)
        }
      }
    }
    while let deadline = recognizers.nextDeadline {
      recognizers.deadlineReached(at: deadline.at, record)
      if recognizers.nextDeadline == deadline {
        problems.append("deadline \(deadline) not settled")
        break
      }
    }

    for button in 0..<buttonCount {
      problems += Self.grammarProblems(announcements[button], settings: buttons[button].recognizer.settings)
        .map { "button \(button): \($0)" }
    }
    if !problems.isEmpty {
      Issue.record(
        Comment(
          rawValue: "seed \(seed): \(problems.joined(separator: "; "))\n"
            + (0..<buttonCount).map { "button \($0): \(announcements[$0])" }.joined(separator: "\n")
            + "\ninputs:\n  " + log.joined(separator: "\n  ")))
      return false
    }
    return true
  }

  /// Per press: `pressed`, then at most one `held` (at press + threshold) and after it
  /// at most one `longHeld` (at press + long threshold), then exactly one ending: a
  /// short release (no held), a release after hold (long iff long-held), a cancellation
  /// whose stage is what was announced, or, for a short press only, a double press,
  /// which opens a second press that ends with its own release or a cancellation.
  /// Nothing is announced twice, nothing performs without its gesture.
  static func grammarProblems(_ announcements: [PressAnnouncement], settings: RecognizerSettings) -> [String] {
    var problems: [String] = []
    var pressedAt: MonotonicInstant?
    var stage = PressStage.pending
    for announcement in announcements {
      let open = pressedAt
      switch announcement {
      case .pressed(let at):
        if open != nil { problems.append("pressed at \(at) while a press is open") }
        pressedAt = at
        stage = .pending
      case .held(let at, let press):
        if open != press || stage != .pending { problems.append("unexpected \(announcement)") }
        if at != press + settings.holdThreshold { problems.append("\(announcement) not at the threshold") }
        stage = .held
      case .longHeld(let at, let press):
        if open != press || stage != .held { problems.append("unexpected \(announcement)") }
        if at != press + settings.longHoldThreshold { problems.append("\(announcement) not at the long threshold") }
        stage = .longHeld
      case .released(let at, let heldFor):
        if open == nil || stage != .pending || heldFor >= settings.holdThreshold || open.map({ at - $0 }) != heldFor {
          problems.append("unexpected \(announcement)")
        }
        pressedAt = nil
      case .releasedAfterHold(let at, let heldFor, let longHeld):
        if open == nil || (stage != .held && stage != .longHeld) || longHeld != (stage == .longHeld)
          || heldFor < settings.holdThreshold
          || open.map({ at - $0 }) != heldFor
        {
          problems.append("unexpected \(announcement)")
        }
        pressedAt = nil
      case .doublePressed(let at, let first, let gap):
        if open != first || stage != .pending || gap >= settings.doublePressWindow || gap < settings.debounce
          || at - first < gap
        {
          problems.append("unexpected \(announcement)")
        }
        pressedAt = at
        stage = .doublePressed
      case .releasedAfterDoublePress(let at, let heldFor):
        if open == nil || stage != .doublePressed || open.map({ at - $0 }) != heldFor {
          problems.append("unexpected \(announcement)")
        }
        pressedAt = nil
      case .cancelled(_, _, let cancelledStage):
        if open == nil || cancelledStage != stage { problems.append("unexpected \(announcement)") }
        pressedAt = nil
      }
    }
    return problems
  }
}
