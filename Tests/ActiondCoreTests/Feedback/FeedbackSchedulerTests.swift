// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

/// What a driver feeds one scheduler, at a time in ms.
private enum Input {
  case moment(EventName)
  case value(Bool?)
}

/// Runs `inputs` (ms, input) through a scheduler the way the loop does (each deadline fires
/// at its time, before a later input) and returns every write as `"<ms> <write>"`, then
/// lets the timers run out (until `untilMs`).
private func trace(
  _ output: FeedbackOutput, _ inputs: [(Int64, Input)], untilMs: Int64 = 100_000,
  scheduler: inout FeedbackScheduler
) -> [String] {
  let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
  var lines: [String] = []
  func fire(upTo limit: MonotonicInstant) {
    while let d = scheduler.nextDeadline, d <= limit {
      if let w = scheduler.deadlineReached(at: d) { lines.append("\((d - t0).milliseconds) \(w)") }
    }
  }
  for (ms, input) in inputs {
    let t = t0 + .milliseconds(ms)
    fire(upTo: t)
    let w: FeedbackScheduler.Write? =
      switch input {
      case .moment(let m): scheduler.moment(m, at: t)
      case .value(let v): scheduler.valueChanged(v)
      }
    if let w { lines.append("\(ms) \(w)") }
  }
  fire(upTo: t0 + .milliseconds(untilMs))
  return lines
}

private func trace(_ output: FeedbackOutput, _ inputs: [(Int64, Input)]) -> [String] {
  var s = FeedbackScheduler(output: output)
  return trace(output, inputs, scheduler: &s)
}

private let capsLock = FeedbackOutput(light: .inputLED(code: 1))
private let act = FeedbackOutput(light: .sysfs(name: "ACT"), moments: [.performed, .failed], indicator: true)

@Suite struct FeedbackSchedulerTests {
  // MARK: Goldens

  @Test func aHoldThatPerformsTicksThenBlinksAndGivesTheLightBack() {
    // pressed: on while down; held at 600: the 60 ms tick; performed at 650: 300 ms; release at 800.
    let lines = trace(
      capsLock,
      [(0, .moment(.pressed)), (600, .moment(.held)), (650, .moment(.performed)), (800, .moment(.released))])
    #expect(lines == ["0 on", "950 release"])
  }

  @Test func theTickAloneIsOneShortBlink() {
    let tick = FeedbackOutput(light: .inputLED(code: 1), moments: [.held])
    #expect(
      trace(tick, [(0, .moment(.pressed)), (600, .moment(.held)), (900, .moment(.released))]) == [
        "600 on", "660 release",
      ])
  }

  @Test func failedIsThreeBlinksOf80() {
    #expect(
      trace(capsLock, [(0, .moment(.failed))]) == [
        "0 on", "80 off", "160 on", "240 off", "320 on", "400 off", "480 release",
      ])
  }

  @Test func busyIsTwoShortBlinks() {
    #expect(trace(capsLock, [(10, .moment(.busy))]) == ["10 on", "50 off", "90 on", "130 release"])
  }

  @Test func aShortPressIsOnWhileDown() {
    #expect(trace(capsLock, [(0, .moment(.pressed)), (120, .moment(.released))]) == ["0 on", "120 release"])
    #expect(trace(capsLock, [(0, .moment(.pressed)), (50, .moment(.cancelled))]) == ["0 on", "50 release"])
  }

  @Test func theReleaseDoesNotCutAPatternShort() {
    #expect(
      trace(capsLock, [(0, .moment(.held)), (20, .moment(.released))]) == ["0 on", "60 release"])
  }

  @Test func aNewMomentPreemptsTheRunningPattern() {
    // failed at 0, busy at 100 (during the second step): busy starts at once, failed is gone.
    #expect(
      trace(capsLock, [(0, .moment(.failed)), (100, .moment(.busy))]) == [
        "0 on", "80 off", "100 on", "140 off", "180 on", "220 release",
      ])
  }

  @Test func momentsTheOutputDoesNotShowChangeNothing() {
    let tick = FeedbackOutput(light: .inputLED(code: 1), moments: [.held])
    #expect(
      trace(tick, [(0, .moment(.held)), (30, .moment(.failed)), (40, .moment(.pressed))]) == ["0 on", "60 release"])
  }

  @Test func anIndicatorShowsTheValueAndPlaysPatternsInvertedWhenOn() {
    let lines = trace(
      act,
      [
        (0, .value(false)), (100, .value(true)), (200, .moment(.performed)), (300, .value(false)),
        (1000, .value(nil)), (1100, .value(true)), (1200, .moment(.failed)), (1210, .moment(.held)),
      ])
    // 0 off (takes the LED), 100 on; performed while on plays off for 300 ms; the value
    // went off meanwhile, so it rests off at 500; nil is off; failed while on starts off.
    #expect(
      lines == [
        "0 off", "100 on", "200 off", "1100 on", "1200 off", "1280 on", "1360 off", "1440 on", "1520 off",
        "1600 on",
      ])
  }

  @Test func anIndicatorOnlyOutputNeverBlinks() {
    let indicator = FeedbackOutput(light: .sysfs(name: "ACT"), moments: [], indicator: true)
    #expect(
      trace(indicator, [(0, .moment(.pressed)), (5, .value(true)), (10, .moment(.failed)), (20, .value(true))]) == [
        "5 on"
      ])
  }

  @Test func aLateTimerSkipsWhatIsOverAndKeepsTheTiming() {
    var s = FeedbackScheduler(output: capsLock)
    let t0 = MonotonicInstant(nanoseconds: 0)
    #expect(s.moment(.failed, at: t0) == .on)
    // 170 ms late for the 80 ms step: the third step (on, 160...240) is what shows.
    #expect(s.deadlineReached(at: t0 + .milliseconds(170)) == nil)
    #expect(s.nextDeadline == t0 + .milliseconds(240))
    #expect(s.deadlineReached(at: t0 + .milliseconds(239)) == nil)
    #expect(s.deadlineReached(at: t0 + .milliseconds(240)) == .off)
  }

  @Test func noDeadlineWhileNothingTimedRuns() {
    var s = FeedbackScheduler(output: capsLock)
    #expect(s.nextDeadline == nil)
    _ = s.moment(.pressed, at: .zero)
    #expect(s.nextDeadline == nil)  // on while down: no wake-up until the release
    _ = s.moment(.released, at: .zero + .milliseconds(5))
    #expect(s.nextDeadline == nil && !s.isShowing && s.shown == .release)
  }

  @Test func endGivesTheLightBackWhateverRuns() {
    var s = FeedbackScheduler(output: act)
    _ = s.valueChanged(true)
    _ = s.moment(.performed, at: .zero)
    #expect(s.end() == .release)
    #expect(s.nextDeadline == nil && s.end() == nil)
  }

  @Test func patternOverridesAndTheirSpelling() {
    let custom = FeedbackOutput(
      light: .inputLED(code: 8), moments: [.held],
      patterns: [.held: FeedbackPattern(alternatingMilliseconds: [20, 30, 40])])
    #expect(trace(custom, [(0, .moment(.held))]) == ["0 on", "20 off", "50 on", "90 release"])
    #expect(custom.patterns[.held]?.description == "[20, 30, 40]")
    #expect(custom.patterns[.pressed]?.description == "\"on\"")
    #expect(custom.description == "led LED_MISC (held)")
    #expect(act.description == "sysfs ACT (performed, failed, indicator)")
    #expect(FeedbackPattern.defaults[.failed]?.duration == .milliseconds(480))
  }

  // MARK: Properties

  /// Random moments, values and gaps on random outputs: every write changes what the
  /// light shows, no deadline is in the past, and once the press has ended and the
  /// timers ran out the light rests (the indicator's value, or given back): nothing is
  /// left on.
  @Test func everyPatternEndsAtRest() {
    var rng = SplitMix64(seed: 17)
    let moments = EventName.buttonMoments
    for round in 0..<400 {
      let shown = FeedbackMoment.allCases.filter { _ in rng.next() % 2 == 0 }
      let indicator = rng.next() % 3 == 0
      let output = FeedbackOutput(
        light: .sysfs(name: "led\(round)"), moments: shown.isEmpty && !indicator ? [.held] : shown,
        indicator: indicator)
      var s = FeedbackScheduler(output: output)
      var t = MonotonicInstant(nanoseconds: 0)
      var last = FeedbackScheduler.Write.release
      var touched = false
      for _ in 0..<Int(rng.next() % 30) {
        t = t + .milliseconds(Int64(rng.next() % 200))
        while let d = s.nextDeadline, d <= t {
          if let w = s.deadlineReached(at: d) {
            #expect(w != last)
            last = w
            touched = true
          }
        }
        let w: FeedbackScheduler.Write?
        if rng.next() % 4 == 0 {
          w = s.valueChanged(rng.next() % 3 == 0 ? nil : rng.next() % 2 == 0)
        } else {
          w = s.moment(moments[Int(rng.next() % UInt64(moments.count))], at: t)
        }
        if let w {
          #expect(w != last)
          last = w
          touched = true
        }
        if let d = s.nextDeadline { #expect(d > t) }
        #expect(s.shown == last)
      }
      t = t + .milliseconds(1)
      if let w = s.moment(.released, at: t) { (last, touched) = (w, true) }
      while let d = s.nextDeadline { if let w = s.deadlineReached(at: d) { (last, touched) = (w, true) } }
      #expect(!s.isShowing)
      if indicator && last == .release {
        // An indicator nobody told anything yet is untouched.
        #expect(!touched)
      } else {
        #expect(last == s.rest)
        #expect(indicator ? last != .release : last == .release)
        if indicator { #expect((last == .on) == s.value) }
      }
    }
  }

  /// A pattern starting later replaces the earlier one completely: what follows is
  /// exactly what the later pattern alone shows from the same state.
  @Test func aPreemptingPatternRunsAsIfAlone() {
    for first in FeedbackMoment.allCases where first != .pressed {
      for second in FeedbackMoment.allCases where second != .pressed {
        for gap: Int64 in [0, 1, 39, 40, 79, 80, 150, 299] {
          var a = FeedbackScheduler(output: capsLock)
          let aLines = trace(
            capsLock, [(0, .moment(EventName(first))), (gap, .moment(EventName(second)))], scheduler: &a)
          let after = aLines.filter { Int64($0.split(separator: " ")[0])! > gap }
          var b = FeedbackScheduler(output: capsLock)
          let alone = trace(capsLock, [(gap, .moment(EventName(second)))], scheduler: &b)
          #expect(
            after == alone.filter { Int64($0.split(separator: " ")[0])! > gap }, "\(first) then \(second) at \(gap)")
        }
      }
    }
  }

  @Test func schedulersFollowTheConfigurationAndShareOneDeadline() throws {
    var config = Configuration(buttons: [ButtonConfig(name: "a", keyCode: 148), ButtonConfig(name: "b", keyCode: 149)])
    config.feedback = ["a": [capsLock, act], "b": [FeedbackOutput(light: .sysfs(name: "led0"), moments: [.held])]]
    var all = FeedbackSchedulers(configuration: config)
    #expect(all.buttons == ["a", "a", "b"])
    #expect(all.valueChanged(true, button: "a") == [.init(output: 1, write: .on)])
    #expect(all.moment(.held, button: "b", at: .zero) == [.init(output: 2, write: .on)])
    #expect(
      all.moment(.failed, button: "a", at: .zero + .milliseconds(10)) == [
        .init(output: 0, write: .on), .init(output: 1, write: .off),
      ])
    #expect(all.nextDeadline == .zero + .milliseconds(60))
    #expect(all.deadlineReached(at: .zero + .milliseconds(60)) == [.init(output: 2, write: .release)])
    #expect(all.nextDeadline == .zero + .milliseconds(90))
    #expect(all.end() == [.init(output: 0, write: .release), .init(output: 1, write: .release)])
    #expect(all.nextDeadline == nil)
  }
}

extension EventName {
  /// The names that are moments of a button's press or of a perform it asked for.
  fileprivate static let buttonMoments: [EventName] = [
    .pressed, .released, .held, .longHeld, .releasedAfterHold, .doublePressed, .releasedAfterDoublePress,
    .cancelled, .performed, .failed, .busy,
  ]

  /// The button moment that shows `moment` first.
  fileprivate init(_ moment: FeedbackMoment) {
    self = EventName.buttonMoments.first { $0.feedback == moment }!
  }
}
