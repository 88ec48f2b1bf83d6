// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

/// Records the moments and hold values the engine reports (and what else it asks for).
private final class MomentRecorder: EngineTestOutput {
  var lines: [String] = []
  var runs: [ControlEngine.PerformJob] = []
  var reads: [ControlEngine.ValueReadJob] = []
  func announce(_ event: Event) {}
  func log(_ level: LogLevel, _ message: String) {}
  func armTimer(at deadline: MonotonicInstant?) {}
  func runIntent(_ job: ControlEngine.PerformJob) { runs.append(job) }
  func readValue(_ job: ControlEngine.ValueReadJob) { reads.append(job) }
  func persist(_ state: StateSnapshot) throws(ProtocolError) {}
  func buttonMoment(_ moment: EventName, button: String) { lines.append("\(button) \(moment.rawValue)") }
  func holdValueChanged(button: String, isOn: Bool?) {
    lines.append("\(button) value=\(isOn.map { $0 ? "on" : "off" } ?? "none")")
  }
}

private func engine(_ recorder: MomentRecorder, assign: String = "org.example.timer") throws -> EngineHarness {
  let config = try load(
    """
    { buttons: [{ name: "action", key: "KEY_PROG1", holdThresholdMs: 600 }],
      controls: [
        { kind: "org.example.timer", type: "toggle", displayName: "Timer", intent: { type: "state" } },
        { kind: "org.example.photo", type: "button", displayName: "Photo", intent: { type: "exec", argv: ["/bin/true"] } },
        { kind: "org.example.lamp", type: "toggle", displayName: "Lamp", intent: { type: "exec", argv: ["/bin/lamp"] },
          value: { type: "exec", argv: ["/bin/lamp-state"] } },
      ],
      assignments: { action: "\(assign)" } }
    """)
  return EngineHarness(configuration: config, output: recorder)
}

private let t0 = MonotonicInstant(nanoseconds: 10_000_000_000)
private func at(_ ms: Int64) -> MonotonicInstant { t0 + .milliseconds(ms) }

@Suite struct FeedbackEngineTests {
  @Test func aHoldOfAStoreToggleReportsEveryMomentAndTheNewValue() throws {
    let r = MomentRecorder()
    let e = try engine(r)
    e.start()
    #expect(r.lines == ["action value=off"])
    r.lines = []
    e.keyEvent(button: "action", code: 148, value: 1, at: at(0))
    e.deadlineReached(at: at(600))
    e.keyEvent(button: "action", code: 148, value: 0, at: at(900))
    // The state intent finishes at once: the value is announced before the perform.
    #expect(
      r.lines == [
        "action pressed", "action held", "action value=on", "action performed", "action released-after-hold",
      ])
    #expect(e.holdValue(button: "action") == true)
  }

  @Test func aShortPressAndAFailedAndABusyHold() throws {
    let r = MomentRecorder()
    let e = try engine(r, assign: "org.example.lamp")
    e.start()
    #expect(r.reads.count == 1)
    e.valueRead(job: r.reads[0].id, .off)
    e.keyEvent(button: "action", code: 148, value: 1, at: at(0))
    e.keyEvent(button: "action", code: 148, value: 0, at: at(100))
    e.keyEvent(button: "action", code: 148, value: 1, at: at(1000))
    e.deadlineReached(at: at(1600))
    e.keyEvent(button: "action", code: 148, value: 0, at: at(1700))
    e.keyEvent(button: "action", code: 148, value: 1, at: at(2000))
    e.deadlineReached(at: at(2600))
    e.keyEvent(button: "action", code: 148, value: 0, at: at(2700))
    e.performFinished(job: r.runs[0].id, .failed(code: .failed, reason: "exited with status 1"))
    #expect(
      r.lines == [
        "action value=off", "action pressed", "action released", "action pressed", "action held",
        "action released-after-hold", "action pressed", "action held", "action busy", "action released-after-hold",
        "action failed",
      ])
    e.valueRead(job: 999, .on)  // not pending: nothing
    e.refresh(e.assignment(of: "action")!)
    e.valueRead(job: r.reads.last!.id, .unavailable(reason: "gone"))
    #expect(r.lines.last == "action value=none")
  }

  @Test func aPressEndedSilentlyAfterItsHoldStillEndsThePress() throws {
    let r = MomentRecorder()
    let e = try engine(r, assign: "org.example.photo")
    e.keyEvent(button: "action", code: 148, value: 1, at: at(0))
    e.deadlineReached(at: at(600))
    e.deviceUnbound(button: "action", device: "/dev/input/event3", at: at(700))
    #expect(r.lines == ["action pressed", "action held", "action cancelled"])
    #expect(e.holdValue(button: "action") == nil)  // a button has no value
  }

  @Test func aReassignmentReportsTheNewHoldValue() throws {
    let r = MomentRecorder()
    let e = try engine(r, assign: "org.example.photo")
    e.start()
    r.lines = []
    _ = try e.assign(e.instance(kind: "org.example.timer", configuration: nil), to: "action")
    #expect(r.lines.first == "action value=off")
  }
}

@Suite struct FeedbackEngineSocketTests {
  /// A perform naming the button shows on it; a perform of a kind names no button.
  @Test func onlyPerformsOfTheButtonAreItsMoments() throws {
    let r = MomentRecorder()
    let e = try engine(r, assign: "org.example.photo")
    let photo = try e.instance(kind: "org.example.photo", configuration: nil)
    e.perform(photo, button: "action", source: .socket, completion: nil)
    e.performFinished(job: r.runs[0].id, .succeeded)
    e.perform(photo, button: nil, source: .socket, completion: nil)
    e.performFinished(job: r.runs[1].id, .failed(code: .failed, reason: "exited with status 1"))
    #expect(r.lines == ["action performed"])
  }
}
