// SPDX-License-Identifier: Apache-2.0
import ActiondTesting
import Testing

@testable import ActiondCore

/// Records what the engine asks of the outside world.
private final class Recorder: EngineTestOutput {
  var events: [Event] = []
  var logs: [(LogLevel, String)] = []
  var persisted: [StateSnapshot] = []
  var runs: [ControlEngine.PerformJob] = []
  var reads: [ControlEngine.ValueReadJob] = []
  var armed: MonotonicInstant?
  func announce(_ event: Event) { events.append(event) }
  func log(_ level: LogLevel, _ message: String) { logs.append((level, message)) }
  func armTimer(at deadline: MonotonicInstant?) { armed = deadline }
  func runIntent(_ job: ControlEngine.PerformJob) { runs.append(job) }
  var prepared: [ControlEngine.PerformJob] = []
  func prepareIntent(_ job: ControlEngine.PerformJob) { prepared.append(job) }
  func readValue(_ job: ControlEngine.ValueReadJob) { reads.append(job) }
  /// When set, saving fails with it (a full disk).
  var saveError: ProtocolError?
  /// How many of the next saves fail (a disk that is full for a moment).
  var failingSaves = 0
  func persist(_ state: StateSnapshot) throws(ProtocolError) {
    if let saveError { throw saveError }
    if failingSaves > 0 {
      failingSaves -= 1
      throw ProtocolError(.stateNotSaved, "disk full for a moment")
    }
    persisted.append(state)
  }
}

private func configuration(
  assigning kind: String = "org.example.timer", actionThresholdMs: Int = 600
) throws -> Configuration {
  try ConfigurationLoader.load(
    main: ConfigurationSource(
      name: "t.json",
      text: """
        {
          buttons: [
            { name: "action", key: "KEY_PROG1", holdThresholdMs: \(actionThresholdMs) }, { name: "foot", key: "KEY_B" },
          ],
          controls: [
            { kind: "org.example.timer", type: "toggle", displayName: "Timer",
              valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
              intent: { type: "state" }, value: { type: "store", initial: false } },
            { kind: "org.example.photo", type: "button", displayName: "Photo",
              intent: { type: "exec", argv: ["/bin/true"] } },
            { kind: "org.example.led", type: "toggle", displayName: "LED",
              intent: { type: "write", path: "/sys/class/leds/${led}/brightness" },
              value: { type: "file", path: "/sys/class/leds/${led}/brightness" },
              parameters: [{ name: "led", type: "string", required: true }], requiresConfiguration: true },
            { kind: "org.example.lamp", type: "toggle", displayName: "Lamp",
              intent: { type: "exec", argv: ["/usr/bin/lamp"] }, value: { type: "store", initial: false } },
          ],
          assignments: { action: "\(kind)" },
        }
        """))
}

@Suite struct ControlEngineTests {
  @Test func runTimeAssignmentAndStoreValuesSurviveARestart() throws {
    let config = try configuration()
    let first = Recorder()
    let engine = EngineHarness(configuration: config, output: first)
    engine.start()
    let led = try engine.instance(kind: "org.example.led", configuration: ["led": "green"])
    _ = try engine.assign(led, to: "foot")
    engine.perform(try engine.instance(kind: "org.example.timer", configuration: nil), button: nil, source: .socket) {
      _ in
    }
    let saved = try #require(first.persisted.last)
    #expect(saved.values == ["org.example.timer": true])
    #expect(saved.assignments["foot"]?[.hold]?.kind == "org.example.led")
    #expect(saved.assignments["foot"]?[.hold]?.replaces == nil)  // the file assigned nothing to foot

    // A new engine (a restart) on the same configuration and the persisted state.
    let decoded = try StateSnapshot.decode(saved.encoded())
    let second = Recorder()
    let restarted = EngineHarness(configuration: config, state: decoded, output: second)
    #expect(restarted.assignment(of: "foot")?.id == "org.example.led{led=green}")
    #expect(restarted.hint(button: "action") == "Hold to Stop")
  }

  @Test func editingTheFilesAssignmentOverridesARunTimeOne() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(), output: recorder)
    _ = try engine.assign(try engine.instance(kind: "org.example.photo", configuration: [:]), to: "action")
    let saved = try #require(recorder.persisted.last)
    #expect(saved.assignments["action"]?[.hold]?.replaces?.kind == "org.example.timer")

    // Same file: the run-time assignment stays.
    let same = EngineHarness(configuration: try configuration(), state: saved, output: Recorder())
    #expect(same.assignment(of: "action")?.kind == "org.example.photo")
    // The operator changed the file's assignment for that button: the file wins again.
    let edited = Recorder()
    let changed = EngineHarness(
      configuration: try configuration(assigning: "org.example.led"), state: saved, output: edited)
    #expect(changed.assignment(of: "action")?.kind == "org.example.led")
    #expect(changed.persistentState.assignments["action"] == nil)
    #expect(edited.logs.contains { $0.1.contains("file's assignment replaces the run-time one") })
  }

  @Test func aStoredAssignmentThatNoLongerFitsIsDroppedWithAWarning() throws {
    var state = StateSnapshot()
    state.assignments["action"] = [
      .hold: StateSnapshot.Assignment(
        kind: "org.example.gone", replaces: StateSnapshot.Replaced(kind: "org.example.timer"))
    ]
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(), state: state, output: recorder)
    #expect(engine.assignment(of: "action")?.kind == "org.example.timer")
    #expect(recorder.logs.contains { $0.0 == .warning && $0.1.contains("no longer fits") })
  }

  @Test func aFailedIntentChangesNothingAndIsNotRetried() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(), output: recorder)
    let photo = try engine.instance(kind: "org.example.photo", configuration: [:])
    var replies: [Result<ControlSnapshot, ProtocolError>] = []
    engine.perform(photo, button: nil, source: .socket) { replies.append($0) }
    let job = try #require(recorder.runs.first)
    #expect(job.environment["ACTIOND_KIND"] == "org.example.photo")
    #expect(job.environment["ACTIOND_VALUE"] == nil)  // buttons have no value
    engine.performFinished(job: job.id, .failed(code: .failed, reason: "exited with status 2"))
    #expect(recorder.runs.count == 1)
    #expect(replies.count == 1)
    if case .failure(let e) = replies[0] { #expect(e.message == "exited with status 2") } else { Issue.record() }
    #expect(recorder.persisted.isEmpty)
    // A second completion of the same job is a bug report, not a crash or a double reply.
    engine.performFinished(job: job.id, .succeeded)
    #expect(replies.count == 1)
    #expect(recorder.logs.contains { $0.1.contains("not in flight") })
  }

  @Test func toggleIntentsGetTheRequestedValueInTheirEnvironment() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(), output: recorder)
    let led = try engine.instance(kind: "org.example.led", configuration: ["led": "red"])
    engine.refresh(led)
    let read = try #require(recorder.reads.first)
    #expect(read.provider == .file(path: "/sys/class/leds/red/brightness", on: nil))
    engine.valueRead(job: read.id, .off)
    engine.perform(led, button: "foot", source: .button, completion: nil)
    let job = try #require(recorder.runs.first)
    #expect(job.intent == .write(path: "/sys/class/leds/red/brightness", on: "1", off: "0"))
    #expect(job.environment["ACTIOND_VALUE"] == "1")
    #expect(job.environment["ACTIOND_BUTTON"] == "foot")
    #expect(job.environment["ACTIOND_PARAM_LED"] == "red")
  }

  @Test func aReloadThatChangesTheButtonCancelsItsUndecidedPress() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(), output: recorder)
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    engine.deviceBound(button: "action", device: "/dev/input/event0", keyDown: false, at: t0)
    engine.keyEvent(button: "action", code: 148, value: 1, at: t0)
    #expect(recorder.armed == t0 + .milliseconds(600))
    engine.apply(configuration: try configuration(actionThresholdMs: 900), at: t0 + .milliseconds(100))
    #expect(recorder.events.contains(.cancelled(button: "action", kind: "org.example.timer", reason: "reload")))
    #expect(recorder.armed == nil)
  }

  @Test func aReloadThatKeepsTheButtonKeepsItsPressAndPerformsOnce() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(), output: recorder)
    engine.start()
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    engine.deviceBound(button: "action", device: "/dev/input/event0", keyDown: false, at: t0)
    engine.keyEvent(button: "action", code: 148, value: 1, at: t0)
    engine.apply(configuration: try configuration(), at: t0 + .milliseconds(100))
    #expect(!recorder.events.contains { $0.name == .cancelled })
    #expect(recorder.armed == t0 + .milliseconds(600), "the hold deadline is still armed")
    engine.deadlineReached(at: t0 + .milliseconds(600))
    // A reload after the hold changes nothing either: no cancellation, no second perform.
    engine.apply(configuration: try configuration(), at: t0 + .milliseconds(700))
    engine.keyEvent(button: "action", code: 148, value: 0, at: t0 + .milliseconds(800))
    #expect(recorder.events.filter { $0.name == .performing }.count == 1)
    #expect(!recorder.events.contains { $0.name == .cancelled })
    #expect(
      recorder.events.last
        == .releasedAfterHold(
          button: "action", kind: "org.example.timer", time: t0 + .milliseconds(800), duration: .milliseconds(800)))
  }

  @Test func aReloadThatMovesTheButtonInTheListKeepsItsPress() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(), output: recorder)
    engine.start()
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    engine.deviceBound(button: "action", device: "/dev/input/event0", keyDown: false, at: t0)
    engine.keyEvent(button: "action", code: 148, value: 1, at: t0)
    // The buttons are known by name: "action" moving behind "foot" is no change to it.
    var reordered = try configuration()
    reordered.buttons.reverse()
    engine.apply(configuration: reordered, at: t0 + .milliseconds(100))
    #expect(!recorder.events.contains { $0.name == .cancelled })
    #expect(recorder.armed == t0 + .milliseconds(600), "the hold deadline is still armed")
    engine.deadlineReached(at: t0 + .milliseconds(600))
    engine.keyEvent(button: "action", code: 148, value: 0, at: t0 + .milliseconds(800))
    #expect(recorder.events.filter { $0.name == .performing }.count == 1)
    // Renamed, it is another button: a press in progress under the old name ends as the
    // old button goes away (cancelled), and the new name starts at rest.
    engine.keyEvent(button: "action", code: 148, value: 1, at: t0 + .milliseconds(900))
    var renamed = reordered
    renamed.buttons[1].name = "main"
    renamed.assignments = ["main": reordered.assignments["action"]!]
    engine.apply(configuration: renamed, at: t0 + .milliseconds(1000))
    #expect(recorder.events.contains(.cancelled(button: "action", kind: "org.example.timer", reason: "reload")))
    #expect(recorder.armed == nil)
  }

  @Test func aReloadThatChangesAHeldButtonAnnouncesNoCancellation() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(), output: recorder)
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    // A key already down when the device appeared was never announced as a press.
    engine.deviceBound(button: "foot", device: "/dev/input/event1", keyDown: true, at: t0)
    engine.deviceBound(button: "action", device: "/dev/input/event0", keyDown: false, at: t0)
    engine.keyEvent(button: "action", code: 148, value: 1, at: t0)
    engine.deadlineReached(at: t0 + .milliseconds(600))
    #expect(recorder.events.contains { $0.name == .held })
    var changed = try configuration(actionThresholdMs: 900)
    changed.buttons[1].grab = true
    engine.apply(configuration: changed, at: t0 + .milliseconds(700))
    #expect(!recorder.events.contains { $0.name == .cancelled })
  }

  @Test func aChangeThatCannotBeSavedIsNotMadeAndTheRequestFails() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(), output: recorder)
    engine.start()
    let timer = try #require(engine.assignment(of: "action"))
    recorder.saveError = ProtocolError(.stateNotSaved, "disk full")
    recorder.events = []
    var setResult: Result<ControlSnapshot, ProtocolError>?
    engine.set(timer, to: true) { setResult = $0 }
    #expect(setResult == .failure(ProtocolError(.stateNotSaved, "disk full")))
    var performResult: Result<ControlSnapshot, ProtocolError>?
    engine.perform(timer, button: nil, source: .socket) { performResult = $0 }
    #expect(performResult == .failure(ProtocolError(.stateNotSaved, "disk full")))
    #expect(!recorder.events.contains { $0.name == .state || $0.name == .performed }, "\(recorder.events)")
    #expect(recorder.events.last?.name == .failed)
    #expect(engine.value(of: timer) == .off)
    let lamp = try engine.instance(kind: "org.example.lamp", configuration: nil)
    #expect(throws: ProtocolError.self) { try engine.assign(lamp, to: "action") }
    #expect(engine.assignment(of: "action") == timer)
    // Saving works again: so does the change.
    recorder.saveError = nil
    engine.set(timer, to: true) { setResult = $0 }
    #expect(engine.value(of: timer) == .on)
    #expect(recorder.persisted.last?.values == ["org.example.timer": true])
  }

  /// Two buttons whose holds turn two store-backed toggles on at the same deadline, and
  /// a third button whose hold holds one on momentarily.
  private func twoHoldsConfiguration(fanMomentary: Bool = false) throws -> Configuration {
    try ConfigurationLoader.load(
      main: ConfigurationSource(
        name: "two.json",
        text: """
          {
            buttons: [
              { name: "action", key: "KEY_PROG1", holdThresholdMs: 600 },
              { name: "foot", key: "KEY_B", holdThresholdMs: 600 },
            ],
            controls: [
              { kind: "org.example.timer", type: "toggle", displayName: "Timer", intent: { type: "state" } },
              { kind: "org.example.fan", type: "toggle", displayName: "Fan", intent: { type: "state" } },
            ],
            assignments: { action: "org.example.timer", foot: { hold: { kind: "org.example.fan", momentary: \(fanMomentary) } } },
          }
          """))
  }

  /// Issue 32: one input (a deadline) performs two store-backed holds, so it asks for two
  /// saves. The first fails and its change is undone; the state written afterwards must
  /// not hold the undone change (it did: the second save carried a snapshot taken before
  /// the undo).
  @Test func aSaveAfterAnUndoneChangeDoesNotWriteTheUndoneChange() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try twoHoldsConfiguration(), output: recorder)
    engine.start()
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    engine.deviceBound(button: "action", device: "/dev/input/event0", keyDown: false, at: t0)
    engine.deviceBound(button: "foot", device: "/dev/input/event1", keyDown: false, at: t0)
    engine.keyEvent(button: "action", code: 148, value: 1, at: t0)
    engine.keyEvent(button: "foot", code: 48, value: 1, at: t0)
    recorder.failingSaves = 1
    recorder.persisted = []
    engine.deadlineReached(at: t0 + .milliseconds(600))
    let timer = try #require(engine.assignment(of: "action"))
    let fan = try #require(engine.assignment(of: "foot"))
    // Each hold ends once: performed (stored) or failed (not stored, so not made).
    let outcomes = recorder.events.filter { $0.name == .performed || $0.name == .failed }
    #expect(outcomes.count == 2)
    #expect(outcomes.contains { $0.name == .failed })
    var failed: Set<String> = []
    for case .failed(let kind, _, _, _, _) in outcomes { failed.insert(kind) }
    for instance in [timer, fan] {
      #expect(engine.value(of: instance) == (failed.contains(instance.kind) ? .off : .on), "\(instance.kind)")
    }
    // What is on disk is what the engine holds: never a change it undid.
    #expect((recorder.persisted.last ?? .empty) == engine.persistentState, "\(recorder.persisted)")
    for kind in failed { #expect(recorder.persisted.allSatisfy { $0.values[kind] == nil }, "\(kind)") }
    // Saving works again: so do both holds (each turns its toggle over).
    let before = [timer, fan].map { engine.value(of: $0) == .on }
    engine.keyEvent(button: "action", code: 148, value: 0, at: t0 + .seconds(1))
    engine.keyEvent(button: "foot", code: 48, value: 0, at: t0 + .seconds(1))
    engine.keyEvent(button: "action", code: 148, value: 1, at: t0 + .seconds(2))
    engine.keyEvent(button: "foot", code: 48, value: 1, at: t0 + .seconds(2))
    engine.deadlineReached(at: t0 + .seconds(2) + .milliseconds(600))
    #expect(engine.value(of: timer) == ControlValue(!before[0]))
    #expect(engine.value(of: fan) == ControlValue(!before[1]))
    #expect(recorder.persisted.last?.values == ["org.example.timer": !before[0], "org.example.fan": !before[1]])
  }

  /// Issue 32, the reload's way: a reload ends a momentary hold (its off asks for a
  /// save that fails, and is undone), then saves what the reload itself changed. That
  /// save must not write the off the engine undid.
  @Test func aReloadsSaveAfterAnUndoneOffDoesNotWriteTheOff() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try twoHoldsConfiguration(fanMomentary: true), output: recorder)
    engine.start()
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    engine.deviceBound(button: "foot", device: "/dev/input/event1", keyDown: false, at: t0)
    engine.keyEvent(button: "foot", code: 48, value: 1, at: t0)
    engine.deadlineReached(at: t0 + .milliseconds(600))
    let fan = try #require(engine.assignment(of: "foot"))
    #expect(engine.value(of: fan) == .on)
    #expect(recorder.persisted.last?.values == ["org.example.fan": true])
    // The reload makes the fan's hold an ordinary one: the momentary hold ends, its off fails.
    recorder.failingSaves = 1
    engine.apply(configuration: try twoHoldsConfiguration(fanMomentary: false), at: t0 + .milliseconds(700))
    #expect(engine.value(of: fan) == .on, "the off was not stored, so it was not made")
    #expect(recorder.persisted.last?.values == ["org.example.fan": true], "\(recorder.persisted)")
    #expect(recorder.persisted.last == engine.persistentState)
  }

  // MARK: Store keys

  private func lightConfiguration(defaultRoom: String) throws -> Configuration {
    try ConfigurationLoader.load(
      main: ConfigurationSource(
        name: "light.json",
        text: """
          {
            buttons: [{ name: "action", key: "KEY_PROG1" }],
            controls: [
              { kind: "org.example.light", type: "toggle", displayName: "Light", intent: { type: "state" },
                parameters: [{ name: "room", type: "string", default: "\(defaultRoom)" }] },
            ],
            assignments: { action: "org.example.light" },
          }
          """))
  }

  @Test func aStoredValueSurvivesEditingAParameterDefault() throws {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try lightConfiguration(defaultRoom: "kitchen"), output: recorder)
    engine.start()
    let light = try #require(engine.assignment(of: "action"))
    engine.set(light, to: true) { _ in }
    let saved = try #require(recorder.persisted.last)
    #expect(saved.values == ["org.example.light": true], "keyed by kind and the explicit configuration only")
    // The operator changes the default: the user's instance is still "the light on action".
    let after = EngineHarness(
      configuration: try lightConfiguration(defaultRoom: "hall"), state: saved, output: Recorder())
    #expect(after.value(of: try #require(after.assignment(of: "action"))) == .on)
  }

  @Test func aValueStoredUnderTheOldInstanceIDIsCarriedToItsStoreKey() throws {
    let recorder = Recorder()
    let old = StateSnapshot(values: ["org.example.light{room=kitchen}": true])
    let engine = EngineHarness(
      configuration: try lightConfiguration(defaultRoom: "kitchen"), state: old, output: recorder)
    #expect(engine.value(of: try #require(engine.assignment(of: "action"))) == .on)
    engine.start()
    let saved = try #require(recorder.persisted.first, "the migration is saved at start")
    #expect(saved.values["org.example.light"] == true)
    let after = EngineHarness(
      configuration: try lightConfiguration(defaultRoom: "hall"), state: saved, output: Recorder())
    #expect(after.value(of: try #require(after.assignment(of: "action"))) == .on)
  }

  @Test func valuesOfRemovedKindsAreDroppedAtTheNextSave() throws {
    let recorder = Recorder()
    let state = StateSnapshot(values: [
      "org.example.timer": true, "org.example.gone": true, "org.example.gone{x=1}": false,
    ])
    let engine = EngineHarness(configuration: try configuration(), state: state, output: recorder)
    engine.start()
    let saved = try #require(recorder.persisted.first)
    #expect(saved.values == ["org.example.timer": true])
    #expect(recorder.logs.contains { $0.1.contains("org.example.gone") && $0.1.contains("no longer configured") })
    // A reload that removes a kind drops its values too.
    engine.apply(configuration: try lightConfiguration(defaultRoom: "hall"), at: .zero)
    #expect(recorder.persisted.last?.values == [:])
  }

  // MARK: The gesture's identity

  /// An engine on `kind` assigned to "action", its device bound, at t0.
  private func pressable(_ kind: String) throws -> (EngineHarness, Recorder, MonotonicInstant) {
    let recorder = Recorder()
    let engine = EngineHarness(configuration: try configuration(assigning: kind), output: recorder)
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    engine.start()
    engine.deviceBound(button: "action", device: "/dev/input/event0", keyDown: false, at: t0)
    return (engine, recorder, t0)
  }

  /// At a key-down the engine hands out the exec job the press's hold would run, decided
  /// as the hold decides it; the hold's own job does the same (issue 15: prepared at
  /// key-down), or differs when the state changed in between.
  @Test func aKeyDownHandsOutTheJobItsHoldWouldRun() throws {
    let (engine, recorder, t0) = try pressable("org.example.lamp")
    let down = t0 + .milliseconds(10)
    engine.keyEvent(button: "action", code: 148, value: 1, at: down)
    let prepared = try #require(recorder.prepared.first)
    #expect(recorder.prepared.count == 1)
    #expect(recorder.runs.isEmpty)
    #expect(prepared.id == 0, "not a perform")
    #expect(prepared.gesture == .hold && prepared.pressTime == down && prepared.requestedValue == true)
    engine.deadlineReached(at: down + .milliseconds(600))
    let ran = try #require(recorder.runs.first)
    #expect(ran.id != 0)
    #expect(ran.performsTheSame(as: prepared))
    #expect(ran.environment == prepared.environment)
    engine.performFinished(job: ran.id, .succeeded)
    engine.keyEvent(button: "action", code: 148, value: 0, at: down + .milliseconds(800))

    // The lamp is on now: the next press's hold turns it off, and the one prepared at
    // its key-down said so too.
    engine.keyEvent(button: "action", code: 148, value: 1, at: down + .seconds(2))
    #expect(recorder.prepared.last?.requestedValue == false)
    // Set back before its threshold: the hold decides from the state then.
    engine.set(try #require(engine.assignment(of: "action")), to: false) { _ in }
    engine.deadlineReached(at: down + .seconds(2) + .milliseconds(600))
    let second = try #require(recorder.runs.last)
    #expect(second.requestedValue == true)
    #expect(!second.performsTheSame(as: try #require(recorder.prepared.last)))
  }

  @Test func aKeyDownHandsOutNothingForAHoldThatWouldNotRunACommand() throws {
    // A state intent runs no command.
    let (timer, timerRecorder, t0) = try pressable("org.example.timer")
    timer.keyEvent(button: "action", code: 148, value: 1, at: t0 + .milliseconds(10))
    #expect(timerRecorder.prepared.isEmpty)
    // A hold that would be busy: the photo's command still runs from the last hold.
    let (photo, recorder, t1) = try pressable("org.example.photo")
    photo.keyEvent(button: "action", code: 148, value: 1, at: t1 + .milliseconds(10))
    photo.deadlineReached(at: t1 + .milliseconds(610))
    #expect(recorder.prepared.count == 1 && recorder.runs.count == 1)
    photo.keyEvent(button: "action", code: 148, value: 0, at: t1 + .milliseconds(700))
    photo.keyEvent(button: "action", code: 148, value: 1, at: t1 + .seconds(2))
    #expect(recorder.prepared.count == 1, "busy: nothing to prepare")
  }

  /// docs/configuration.md's table of the variables every exec intent gets is the
  /// environment a gesture's job carries (plus one `ACTIOND_PARAM_<NAME>` per parameter).
  @Test func theDocumentedIntentEnvironmentIsTheJobsEnvironment() throws {
    let path = repositoryPath("docs/configuration.md")
    let docs = try #require(readFile(path))
    let section = try #require(
      docs.components(separatedBy: "The daemon sets, for every exec intent:").dropFirst().first
    )
    .components(separatedBy: "\n\n")[1]
    let documented = section.split(separator: "\n").compactMap { row -> String? in
      guard row.hasPrefix("| `ACTIOND_") else { return nil }
      return String(row.dropFirst(3).prefix { $0 != "`" })
    }
    let (engine, recorder, t0) = try pressable("org.example.lamp")
    _ = try engine.assign(
      try engine.instance(kind: "org.example.photo", configuration: nil), to: "action", gesture: .doublePress,
      momentary: false)
    engine.keyEvent(button: "action", code: 148, value: 1, at: t0 + .milliseconds(10))
    engine.deadlineReached(at: t0 + .milliseconds(610))
    let job = try #require(recorder.runs.last)
    var keys = Set(job.environment.keys)
    keys.remove("ACTIOND_PARAM_<NAME>")
    #expect(Set(documented).subtracting(["ACTIOND_PARAM_<NAME>"]) == keys)
    #expect(documented.contains("ACTIOND_PARAM_<NAME>"))
  }

  /// `status` shows each button's configured feedback outputs (issue 17).
  @Test func statusCarriesTheButtonsFeedbackOutputs() throws {
    let configuration = try ConfigurationLoader.load(
      main: ConfigurationSource(
        name: "t.json",
        text: #"""
          { buttons: [
              { name: "action", key: "KEY_PROG1", feedback: [{ led: "LED_CAPSL", on: ["held"] }, { sysfs: "ACT", indicator: true }] },
              { name: "foot", key: "KEY_B" } ] }
          """#),
      dropIns: [])
    let engine = EngineHarness(configuration: configuration, output: Recorder())
    let status = engine.buttonStatus()
    #expect(status[0].feedback.map(\.description) == ["led LED_CAPSL (held)", "sysfs ACT (indicator)"])
    #expect(status[1].feedback.isEmpty)
  }

  /// A double press's command knows its gesture and the second key-down (the press that
  /// performed); a long hold's, the key-down of its press. Assigned at run time, so the
  /// recognizer learns the gestures from `assign`.
  @Test func gestureCommandsCarryTheirGestureAndTheirPressTime() throws {
    let (engine, recorder, t0) = try pressable("org.example.timer")
    _ = try engine.assign(
      try engine.instance(kind: "org.example.photo", configuration: nil), to: "action", gesture: .doublePress,
      momentary: false)
    _ = try engine.assign(
      try engine.instance(kind: "org.example.lamp", configuration: nil), to: "action", gesture: .longHold,
      momentary: false)
    let first = t0 + .milliseconds(10)
    engine.keyEvent(button: "action", code: 148, value: 1, at: first)
    engine.keyEvent(button: "action", code: 148, value: 0, at: first + .milliseconds(80))
    let second = first + .milliseconds(200)
    engine.keyEvent(button: "action", code: 148, value: 1, at: second)
    let double = try #require(recorder.runs.last)
    #expect(double.kind == "org.example.photo")
    #expect(double.gesture == .doublePress)
    #expect(double.environment["ACTIOND_GESTURE"] == "doublePress")
    #expect(double.environment["ACTIOND_PRESS_TIME"] == String(second.microseconds))
    engine.keyEvent(button: "action", code: 148, value: 0, at: second + .milliseconds(900))
    #expect(recorder.runs.count == 1, "the second press, held past the threshold, performed no hold")
    engine.performFinished(job: double.id, .succeeded)

    let down = second + .seconds(5)
    engine.keyEvent(button: "action", code: 148, value: 1, at: down)
    engine.deadlineReached(at: down + .milliseconds(600))
    engine.deadlineReached(at: down + .milliseconds(3000))
    let long = try #require(recorder.runs.last)
    #expect(long.kind == "org.example.lamp")
    #expect(long.environment["ACTIOND_GESTURE"] == "longHold")
    #expect(long.environment["ACTIOND_PRESS_TIME"] == String(down.microseconds))
    #expect(engine.nextDeadline == nil, "nothing pending after the long hold")
  }

  @Test func aHoldsCommandCarriesTheKeyDownTimeOfItsPress() throws {
    let (engine, recorder, t0) = try pressable("org.example.photo")
    // A short press runs nothing.
    engine.keyEvent(button: "action", code: 148, value: 1, at: t0 + .microseconds(1))
    engine.keyEvent(button: "action", code: 148, value: 0, at: t0 + .milliseconds(100))
    #expect(recorder.runs.isEmpty)
    // A hold: its command learns which key-down started it, in the `pressed` event's units.
    let down = t0 + .seconds(1) + .microseconds(234_567)
    engine.keyEvent(button: "action", code: 148, value: 1, at: down)
    engine.deadlineReached(at: down + .milliseconds(600))
    let job = try #require(recorder.runs.first)
    #expect(job.pressTime == down)
    #expect(job.environment["ACTIOND_PRESS_TIME"] == "2234567")
    #expect(
      recorder.events.contains {
        if case .pressed(_, _, _, _, let time, _) = $0 { return "\(time.microseconds)" == "2234567" }
        return false
      })
    // A socket perform is no gesture: no press time.
    engine.performFinished(job: job.id, .succeeded)
    let photo = try #require(engine.assignment(of: "action"))
    engine.perform(photo, button: nil, source: .socket) { _ in }
    #expect(recorder.runs.count == 2)
    #expect(recorder.runs[1].environment["ACTIOND_PRESS_TIME"] == nil)
  }

  @Test func aReloadThatChangesAPressedButtonCancelsItsPress() throws {
    let (engine, recorder, t0) = try pressable("org.example.photo")
    engine.keyEvent(button: "action", code: 148, value: 1, at: t0)
    engine.apply(
      configuration: try configuration(assigning: "org.example.photo", actionThresholdMs: 900),
      at: t0 + .milliseconds(100))
    #expect(recorder.events.contains(.cancelled(button: "action", kind: "org.example.photo", reason: "reload")))
    engine.deadlineReached(at: t0 + .milliseconds(900))
    #expect(recorder.runs.isEmpty, "the cancelled press is not performed under the new threshold")
  }

  /// The engine is the one owner of who provides what: a registration is checked and
  /// recorded there, and a closed connection ends exactly that client's kinds.
  @Test func providerRegistryIsTheEngines() throws {
    let config = try ConfigurationLoader.load(
      main: ConfigurationSource(
        name: "p.json",
        text: """
          {
            buttons: [{ name: "action", key: "KEY_PROG1" }],
            controls: [
              { kind: "org.example.lamp", type: "toggle", displayName: "Lamp",
                intent: { type: "provider" }, value: { type: "provider" } },
              { kind: "org.example.fan", type: "toggle", displayName: "Fan",
                intent: { type: "provider" }, value: { type: "store", initial: false } },
              { kind: "org.example.timer", type: "toggle", displayName: "Timer", intent: { type: "state" } },
            ],
            assignments: { action: "org.example.lamp" },
          }
          """))
    let recorder = Recorder()
    let engine = EngineHarness(configuration: config, output: recorder)
    engine.start()
    let first = ControlEngine.ProviderClient(rawValue: 1)
    let second = ControlEngine.ProviderClient(rawValue: 2)

    func code(_ body: () throws -> Void) -> ProtocolErrorCode? {
      do {
        try body()
        return nil
      } catch {
        return (error as? ProtocolError)?.code
      }
    }
    #expect(code { try engine.registerProvider(first, kinds: []) } == .badRequest)
    #expect(code { try engine.registerProvider(first, kinds: ["org.example.none"]) } == .unknownKind)
    #expect(code { try engine.registerProvider(first, kinds: ["org.example.timer"]) } == .notProvider)
    #expect(engine.provider(of: "org.example.lamp") == nil)

    var registered = 0
    let readsBefore = recorder.reads.count
    try engine.registerProvider(first, kinds: ["org.example.lamp"]) {
      #expect(recorder.reads.count == readsBefore, "the client is answered before its values are asked for")
      registered += 1
    }
    #expect(registered == 1)
    #expect(recorder.reads.count == readsBefore + 1)
    #expect(engine.provider(of: "org.example.lamp") == first)
    // The same client may register again; another may not, and nothing of its request is kept.
    try engine.registerProvider(first, kinds: ["org.example.lamp"])
    #expect(
      code { try engine.registerProvider(second, kinds: ["org.example.fan", "org.example.lamp"]) }
        == .alreadyRegistered)
    #expect(engine.provider(of: "org.example.fan") == nil)
    try engine.registerProvider(second, kinds: ["org.example.fan"])

    engine.providerDisconnected(first)
    #expect(engine.provider(of: "org.example.lamp") == nil)
    #expect(engine.kinds(providedBy: second) == ["org.example.fan"])
    let lamp = try #require(engine.assignment(of: "action"))
    #expect(engine.value(of: lamp) == .unavailable(reason: "the provider application disconnected"))
  }
}
