// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

/// Records what the engine asks of the outside world.
private final class Recorder: EngineTestOutput {
  var events: [Event] = []
  var logs: [(LogLevel, String)] = []
  var persisted: [StateSnapshot] = []
  var reads: [ControlEngine.ValueReadJob] = []
  var saveError: ProtocolError?
  func announce(_ event: Event) { events.append(event) }
  func log(_ level: LogLevel, _ message: String) { logs.append((level, message)) }
  func armTimer(at deadline: MonotonicInstant?) {}
  func runIntent(_ job: ControlEngine.PerformJob) {}
  func readValue(_ job: ControlEngine.ValueReadJob) { reads.append(job) }
  func persist(_ state: StateSnapshot) throws(ProtocolError) {
    if let saveError { throw saveError }
    persisted.append(state)
  }
  var assigned: [Event] { events.filter { $0.name == .assigned } }
}

/// Buttons `action` and `foot`; `assignments` is the file's assignments member (JSON5).
private func configuration(_ assignments: String = #"action: "org.example.timer""#) throws -> Configuration {
  try ConfigurationLoader.load(
    main: ConfigurationSource(
      name: "t.json",
      text: """
        {
          buttons: [{ name: "action", key: "KEY_PROG1" }, { name: "foot", key: "KEY_B" }],
          controls: [
            { kind: "org.example.timer", type: "toggle", displayName: "Timer",
              valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
              intent: { type: "state" }, value: { type: "store", initial: false } },
            { kind: "org.example.mute", type: "toggle", displayName: "Mute",
              intent: { type: "state" }, value: { type: "store", initial: false } },
            { kind: "org.example.photo", type: "button", displayName: "Photo",
              intent: { type: "exec", argv: ["/bin/true"] } },
            { kind: "org.example.led", type: "toggle", displayName: "LED",
              intent: { type: "write", path: "/sys/class/leds/${led}/brightness" },
              value: { type: "file", path: "/sys/class/leds/${led}/brightness" },
              parameters: [{ name: "led", type: "string", required: true }] },
          ],
          assignments: { \(assignments) },
        }
        """))
}

@Suite struct GestureAssignmentEngineTests {
  @Test func assigningAGestureKeepsTheOthersAndPersists() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(), output: recorder)
    let mute = try engine.instance(kind: "org.example.mute", configuration: nil)
    let snap = try engine.assign(mute, to: "action", gesture: .doublePress)
    #expect(snap.kind == "org.example.mute")
    #expect(engine.assignment(of: "action")?.kind == "org.example.timer")
    #expect(engine.assignment(of: "action", gesture: .doublePress) == GestureAssignment(instance: mute))
    #expect(engine.assignment(of: "action", gesture: .longHold) == nil)
    #expect(engine.assignments(of: "action").keys.sorted { $0.rawValue > $1.rawValue } == [.hold, .doublePress])
    #expect(engine.assignments(of: "nope").isEmpty)
    let saved = try #require(recorder.persisted.last)
    #expect(saved.assignments == ["action": [.doublePress: .init(kind: "org.example.mute")]])
    let muteSnapshot = try #require(engine.snapshot(mute))
    #expect(recorder.assigned == [.assigned(button: "action", gesture: .doublePress, control: muteSnapshot)])
    let status = try #require(engine.buttonStatus("action").first)
    #expect(status.control?.kind == "org.example.timer")
    #expect(status.doublePress?.kind == "org.example.mute")
    #expect(status.longHold == nil)
    #expect(status.momentary == false)
    #expect(status.doublePressWindow == .milliseconds(300))
    #expect(status.longHoldThreshold == .milliseconds(3000))
  }

  @Test func runTimeGesturesAndMomentarySurviveARestart() throws {
    let config = try configuration()
    let recorder = Recorder()
    let engine = EngineHarness(configuration: config, output: recorder)
    let led = try engine.instance(kind: "org.example.led", configuration: ["led": "green"])
    _ = try engine.assign(led, to: "foot", gesture: .longHold)
    _ = try engine.assign(
      try engine.instance(kind: "org.example.timer", configuration: nil), to: "action", momentary: true)
    let saved = try #require(recorder.persisted.last)
    #expect(saved.assignments["action"]?[.hold]?.momentary == true)
    #expect(saved.assignments["action"]?[.hold]?.replaces == .init(kind: "org.example.timer"))

    let restarted = Recorder()
    let second = EngineHarness(
      configuration: config, state: try StateSnapshot.decode(saved.encoded()), output: restarted)
    #expect(second.assignment(of: "foot", gesture: .longHold) == GestureAssignment(instance: led))
    #expect(second.assignment(of: "action", gesture: .hold)?.momentary == true)
    #expect(second.buttonStatus("action").first?.momentary == true)
    // Values are read for instances of any gesture.
    second.start()
    #expect(restarted.reads.contains { $0.instance.id == "org.example.led{led=green}" })
  }

  @Test func momentaryIsOnlyForTheHoldOfAToggle() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(), output: recorder)
    let mute = try engine.instance(kind: "org.example.mute", configuration: nil)
    #expect {
      _ = try engine.assign(mute, to: "action", gesture: .doublePress, momentary: true)
    } throws: { error in
      (error as? ProtocolError)?.code == .badRequest
        && (error as? ProtocolError)?.message == "only a hold can be momentary, not a doublePress"
    }
    let photo = try engine.instance(kind: "org.example.photo", configuration: nil)
    #expect {
      _ = try engine.assign(photo, to: "action", momentary: true)
    } throws: { error in
      (error as? ProtocolError)?.code == .unsupported
        && (error as? ProtocolError)?.message
          == "only a toggle can be momentary (on while held, off at the release): org.example.photo is a button"
    }
    #expect(recorder.persisted.isEmpty)
    #expect(recorder.assigned.isEmpty)
    let timer = try engine.instance(kind: "org.example.timer", configuration: nil)
    #expect(engine.assignment(of: "action", gesture: .hold) == GestureAssignment(instance: timer))
  }

  @Test func aFailedSaveChangesNothing() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(), output: recorder)
    recorder.saveError = ProtocolError(.stateNotSaved, "disk full")
    #expect(throws: ProtocolError.self) {
      _ = try engine.assign(
        try engine.instance(kind: "org.example.mute", configuration: nil), to: "action", gesture: .longHold)
    }
    #expect(engine.assignments(of: "action").keys.map(\.rawValue) == ["hold"])
    #expect(engine.persistentState.assignments.isEmpty)
  }

  @Test func theFileWinsPerGestureWhenItsEntryWasEdited() throws {
    let file = #"action: { hold: "org.example.timer", doublePress: "org.example.mute" }"#
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(file), output: recorder)
    _ = try engine.assign(
      try engine.instance(kind: "org.example.photo", configuration: nil), to: "action", gesture: .doublePress)
    _ = try engine.assign(try engine.instance(kind: "org.example.led", configuration: ["led": "x"]), to: "action")
    let saved = try #require(recorder.persisted.last)
    #expect(saved.assignments["action"]?[.doublePress]?.replaces == .init(kind: "org.example.mute"))
    #expect(saved.assignments["action"]?[.hold]?.replaces == .init(kind: "org.example.timer"))

    // The same file: both run-time assignments stay.
    let same = EngineHarness(configuration: try configuration(file), state: saved, output: Recorder())
    #expect(same.assignment(of: "action", gesture: .doublePress)?.instance.kind == "org.example.photo")
    #expect(same.assignment(of: "action")?.kind == "org.example.led")

    // The operator edited the file's doublePress only: it wins there, the hold stays run-time.
    let edited = Recorder()
    let changed = EngineHarness(
      configuration: try configuration(#"action: { hold: "org.example.timer", doublePress: "org.example.timer" }"#),
      state: saved, output: edited)
    #expect(changed.assignment(of: "action", gesture: .doublePress)?.instance.kind == "org.example.timer")
    #expect(changed.assignment(of: "action")?.kind == "org.example.led")
    #expect(changed.persistentState.assignments["action"]?.keys.map(\.rawValue) == ["hold"])
    #expect(
      edited.logs.contains {
        $0.1 == "button action doublePress: the configuration file's assignment replaces the run-time one"
      })

    // Making the file's hold momentary is an edit of the hold's entry too.
    let momentary = EngineHarness(
      configuration: try configuration(
        #"action: { hold: { kind: "org.example.timer", momentary: true }, doublePress: "org.example.mute" }"#),
      state: saved, output: Recorder())
    #expect(momentary.assignment(of: "action", gesture: .hold)?.momentary == true)
    #expect(momentary.assignment(of: "action", gesture: .doublePress)?.instance.kind == "org.example.photo")
  }

  @Test func aStoredMomentaryHoldOfWhatIsNoLongerAToggleIsDropped() throws {
    var state = StateSnapshot()
    state.assignments["foot"] = [.hold: .init(kind: "org.example.photo", momentary: true)]
    let recorder = Recorder()
    // Stored when org.example.photo was a toggle; the configuration now defines it as a button.
    let engine = EngineHarness(configuration: try configuration(), state: state, output: recorder)
    #expect(engine.assignment(of: "foot", gesture: .hold) == nil)
    #expect(engine.persistentState.assignments.isEmpty)
    #expect(
      recorder.logs.contains {
        $0.0 == .warning
          && $0.1 == "button foot: stored assignment org.example.photo no longer fits the configuration; dropped"
      })
  }

  @Test func aReloadAnnouncesEachChangedGesture() throws {
    let recorder = Recorder()
    let engine = EngineHarness(
      configuration: try configuration(#"action: { hold: "org.example.timer", longHold: "org.example.photo" }"#),
      output: recorder)
    engine.apply(
      configuration: try configuration(#"action: { hold: "org.example.timer", doublePress: "org.example.mute" }"#),
      at: MonotonicInstant(nanoseconds: 1))
    let assigned = recorder.assigned.map { event -> String in
      guard case .assigned(let b, let g, _, let c) = event else { return "" }
      return "\(b) \(g) \(c?.kind ?? "none")"
    }
    #expect(assigned == ["action doublePress org.example.mute", "action longHold none"])
  }

  @Test func stateEventsNameButtonsShowingTheInstanceUnderAnyGesture() throws {
    let recorder = Recorder()
    let engine = EngineHarness(
      configuration: try configuration(#"action: "org.example.timer", foot: { longHold: "org.example.timer" }"#),
      output: recorder)
    engine.set(try engine.instance(kind: "org.example.timer", configuration: nil), to: true) { _ in }
    let buttons = recorder.events.compactMap { event -> [String]? in
      guard case .state(let c, let buttons) = event, c.kind == "org.example.timer" else { return nil }
      return buttons
    }
    #expect(buttons.last == ["action", "foot"])
  }
}

@Suite struct GestureTimingEngineTests {
  /// The button's configured long-hold threshold and double-press window reach its recognizer.
  @Test func theConfiguredTimingIsTheRecognizers() throws {
    let config = try ConfigurationLoader.load(
      main: ConfigurationSource(
        name: "t.json",
        text: """
          {
            buttons: [{ name: "action", key: "KEY_PROG1", doublePressWindowMs: 450, longHoldThresholdMs: 4200 }],
            controls: [
              { kind: "t.a", type: "toggle", displayName: "A", intent: { type: "state" } },
              { kind: "t.b", type: "toggle", displayName: "B", intent: { type: "state" } },
            ],
            assignments: { action: { hold: "t.a", longHold: "t.b", doublePress: "t.b" } },
          }
          """))
    #expect(
      try config.buttons[0].recognizerSettings()
        == RecognizerSettings(doublePressWindow: .milliseconds(450), longHoldThreshold: .milliseconds(4200)))
    let engine = EngineHarness(configuration: config, output: Recorder())
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    engine.deviceBound(button: "action", device: "/dev/input/event0", keyDown: false, at: t0)
    engine.keyEvent(button: "action", code: 148, value: 1, at: t0)
    #expect(engine.nextDeadline == t0 + .milliseconds(600))
    engine.deadlineReached(at: t0 + .milliseconds(600))
    #expect(engine.nextDeadline == t0 + .milliseconds(4200))
  }
}
