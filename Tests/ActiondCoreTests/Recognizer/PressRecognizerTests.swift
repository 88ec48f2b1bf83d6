// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

/// Direct tests of the recognizer's API; the behaviour matrix lives in the
/// scenario files and the property tests.
@Suite struct PressRecognizerTests {
  let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
  func at(_ ms: Int64) -> MonotonicInstant { t0 + .milliseconds(ms) }

  @Test func settingsDefaultsAndBounds() throws {
    #expect(RecognizerSettings.default.holdThreshold == .milliseconds(600))
    #expect(RecognizerSettings.default.debounce == .zero)
    #expect(try RecognizerSettings() == .default)
    _ = try RecognizerSettings(holdThreshold: .milliseconds(100), debounce: .zero)
    _ = try RecognizerSettings(holdThreshold: .milliseconds(10_000), debounce: .milliseconds(200))
  }

  @Test func settingsReportEveryProblem() {
    #expect(throws: RecognizerSettings.Invalid.self) { try RecognizerSettings(holdThreshold: .milliseconds(99)) }
    #expect(throws: RecognizerSettings.Invalid.self) {
      try RecognizerSettings(holdThreshold: TimeSpan(nanoseconds: 10_000_000_001))
    }
    #expect(throws: RecognizerSettings.Invalid.self) { try RecognizerSettings(debounce: TimeSpan(nanoseconds: -1)) }
    let problems = RecognizerSettings.problems(holdThreshold: .milliseconds(50), debounce: .milliseconds(201))
    #expect(problems == [.holdThresholdOutOfRange(.milliseconds(50)), .debounceOutOfRange(.milliseconds(201))])
    #expect(problems.map(\.setting) == ["holdThreshold", "debounce"])
    #expect(problems[0].description == "holdThreshold: must be between 100ms and 10000ms (got 50ms)")
    #expect(problems[1].description == "debounce: must be between 0ms and 200ms (got 201ms)")
    do {
      _ = try RecognizerSettings(holdThreshold: .milliseconds(50), debounce: .milliseconds(201))
      Issue.record("expected an error")
    } catch {
      #expect(error.problems.count == 2)
    }
  }

  @Test func outputCarriesAnnouncementsInOrderAndTheNextDeadline() {
    var recognizer = PressRecognizer()
    let press = recognizer.keyEvent(value: 1, at: at(0))
    #expect(Array(press.announcements) == [.pressed(at: at(0))])
    #expect(press.nextDeadline == at(600))
    #expect(recognizer.nextDeadline == at(600))
    #expect(recognizer.state == .pressed(at: at(0)))
    #expect(recognizer.isDown)

    let release = recognizer.keyEvent(value: 0, at: at(700))
    #expect(release.announcements.count == 2)
    #expect(release.announcements[0] == .held(at: at(600), pressedAt: at(0)))
    #expect(release.announcements[1] == .releasedAfterHold(at: at(700), heldFor: .milliseconds(700), longHeld: false))
    #expect(release.anomaly == nil)
    #expect(release.nextDeadline == nil)
    #expect(recognizer.state == .idle)
    #expect(!recognizer.isDown)
  }

  @Test func heldIsStampedAtTheDeadlineNotWhenTheTimerRan() {
    var recognizer = PressRecognizer()
    _ = recognizer.keyEvent(value: 1, at: at(0))
    let early = recognizer.deadlineReached(at: at(599))
    #expect(early.announcements.isEmpty)
    #expect(early.nextDeadline == at(600))
    let late = recognizer.deadlineReached(at: at(750))
    #expect(Array(late.announcements) == [.held(at: at(600), pressedAt: at(0))])
    #expect(late.nextDeadline == nil)
    // A stale second expiry does nothing.
    #expect(recognizer.deadlineReached(at: at(800)) == PressRecognizer.Output())
  }

  @Test func debounceDeadlineIsTheReleasePlusDebounce() throws {
    var recognizer = PressRecognizer(settings: try RecognizerSettings(debounce: .milliseconds(30)))
    _ = recognizer.keyEvent(value: 1, at: at(0))
    let release = recognizer.keyEvent(value: 0, at: at(100))
    #expect(release.announcements.isEmpty)
    #expect(release.nextDeadline == at(130))
    #expect(recognizer.isDown)
    #expect(recognizer.deadlineReached(at: at(129)).announcements.isEmpty)
    let confirmed = recognizer.deadlineReached(at: at(130))
    #expect(Array(confirmed.announcements) == [.released(at: at(100), heldFor: .milliseconds(100))])
  }

  @Test func anomaliesAreReportedNotFatal() {
    var recognizer = PressRecognizer()
    #expect(recognizer.keyEvent(value: -1, at: at(0)).anomaly == .invalidValue(-1, at: at(0)))
    #expect(recognizer.keyEvent(value: 0, at: at(1)).anomaly == .releaseWhileUp(at: at(1)))
    _ = recognizer.keyEvent(value: 1, at: at(2))
    #expect(recognizer.keyEvent(value: 1, at: at(3)).anomaly == .pressWhileDown(at: at(3)))
    let backwards = recognizer.keyEvent(value: 0, at: at(1))
    #expect(backwards.anomaly == .timestampWentBackwards(at: at(1), previous: at(3)))
    #expect(Array(backwards.announcements) == [.released(at: at(3), heldFor: .milliseconds(1))])
    for anomaly in [
      RecognizerAnomaly.appearedDuringPress(at: at(0)), .releaseBeforeAnnouncedHold(at: at(0), deadline: at(1)),
    ] {
      #expect(!anomaly.description.isEmpty)
    }
  }

  @Test func buttonsAreIndependentAndShareOneTimer() throws {
    var buttons = ButtonRecognizers([
      .init(keyCode: 148),
      .init(keyCode: 256, settings: try RecognizerSettings(holdThreshold: .milliseconds(200))),
      .init(keyCode: 148, settings: try RecognizerSettings(holdThreshold: .milliseconds(300))),
    ])
    #expect(buttons.count == 3)
    #expect(buttons.nextDeadline == nil)
    #expect(buttons.keyEvent(button: 0, code: 30, value: 1, at: at(0)) == nil)
    #expect(buttons[0].recognizer.state == .idle)
    _ = buttons.keyEvent(button: 0, code: 148, value: 1, at: at(0))
    _ = buttons.keyEvent(button: 1, code: 256, value: 1, at: at(100))
    #expect(buttons.nextDeadline == ButtonRecognizers.Deadline(at: at(300), button: 1))
    _ = buttons.keyEvent(button: 2, code: 148, value: 1, at: at(0))
    #expect(buttons.nextDeadline == ButtonRecognizers.Deadline(at: at(300), button: 1))

    var fired: [(Int, [PressAnnouncement])] = []
    buttons.deadlineReached(at: at(300)) { fired.append(($0, Array($1.announcements))) }
    #expect(fired.map(\.0) == [1, 2])
    #expect(fired.map(\.1) == [[.held(at: at(300), pressedAt: at(100))], [.held(at: at(300), pressedAt: at(0))]])
    #expect(buttons.nextDeadline == ButtonRecognizers.Deadline(at: at(600), button: 0))

    let lost = buttons.deviceLost(button: 0, at: at(400))
    #expect(Array(lost.announcements) == [.cancelled(at: at(400), reason: .deviceLost, stage: .pending)])
    #expect(buttons.nextDeadline == nil)
    #expect(buttons.resynchronized(button: 1, keyDown: false, at: at(500)).announcements.count == 1)
    #expect(buttons.deviceAppeared(button: 0, keyDown: true, at: at(600)).announcements.isEmpty)
    #expect(buttons[0].recognizer.state == .ignoringUntilRelease)
  }
}
