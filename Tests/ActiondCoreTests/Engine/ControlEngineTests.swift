import Testing

@testable import ActiondCore

/// Records what the engine asks of the outside world.
private final class Recorder: ControlEngineOutput {
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
  func readValue(_ job: ControlEngine.ValueReadJob) { reads.append(job) }
  func persist(_ state: StateSnapshot) { persisted.append(state) }
}

private func configuration(assigning kind: String = "org.example.timer") throws -> Configuration {
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
    let engine = ControlEngine(configuration: config, output: first)
    engine.start()
    let led = try engine.instance(kind: "org.example.led", configuration: ["led": "green"])
    _ = try engine.assign(led, to: "foot")
    engine.perform(try engine.instance(kind: "org.example.timer", configuration: nil), button: nil, source: .socket) {
      _ in
    }
    let saved = try #require(first.persisted.last)
    #expect(saved.values == ["org.example.timer": true])
    #expect(saved.assignments["foot"]?.kind == "org.example.led")
    #expect(saved.assignments["foot"]?.replaces == nil)  // the file assigned nothing to foot

    // A new engine (a restart) on the same configuration and the persisted state.
    let decoded = try StateSnapshot.decode(saved.encoded())
    let second = Recorder()
    let restarted = ControlEngine(configuration: config, state: decoded, output: second)
    #expect(restarted.assignment(of: "foot")?.id == "org.example.led{led=green}")
    #expect(restarted.hint(button: "action") == "Hold to Stop")
  }

  @Test func editingTheFilesAssignmentOverridesARunTimeOne() throws {
    let recorder = Recorder()
    let engine = ControlEngine(configuration: try configuration(), output: recorder)
    _ = try engine.assign(try engine.instance(kind: "org.example.photo", configuration: [:]), to: "action")
    let saved = try #require(recorder.persisted.last)
    #expect(saved.assignments["action"]?.replaces?.kind == "org.example.timer")

    // Same file: the run-time assignment stays.
    let same = ControlEngine(configuration: try configuration(), state: saved, output: Recorder())
    #expect(same.assignment(of: "action")?.kind == "org.example.photo")
    // The operator changed the file's assignment for that button: the file wins again.
    let edited = Recorder()
    let changed = ControlEngine(
      configuration: try configuration(assigning: "org.example.led"), state: saved, output: edited)
    #expect(changed.assignment(of: "action")?.kind == "org.example.led")
    #expect(changed.persistentState.assignments["action"] == nil)
    #expect(edited.logs.contains { $0.1.contains("file's assignment replaces the run-time one") })
  }

  @Test func aStoredAssignmentThatNoLongerFitsIsDroppedWithAWarning() throws {
    var state = StateSnapshot()
    state.assignments["action"] = StateSnapshot.Assignment(
      kind: "org.example.gone", replaces: StateSnapshot.Replaced(kind: "org.example.timer"))
    let recorder = Recorder()
    let engine = ControlEngine(configuration: try configuration(), state: state, output: recorder)
    #expect(engine.assignment(of: "action")?.kind == "org.example.timer")
    #expect(recorder.logs.contains { $0.0 == .warning && $0.1.contains("no longer fits") })
  }

  @Test func aFailedIntentChangesNothingAndIsNotRetried() throws {
    let recorder = Recorder()
    let engine = ControlEngine(configuration: try configuration(), output: recorder)
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
    let engine = ControlEngine(configuration: try configuration(), output: recorder)
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

  @Test func reloadingTheConfigurationCancelsPressesInProgress() throws {
    let recorder = Recorder()
    let engine = ControlEngine(configuration: try configuration(), output: recorder)
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    engine.deviceBound(button: 0, device: "/dev/input/event0", keyDown: false, at: t0)
    engine.keyEvent(button: 0, code: 148, value: 1, at: t0)
    #expect(recorder.armed == t0 + .milliseconds(600))
    engine.apply(configuration: try configuration(), at: t0 + .milliseconds(100))
    #expect(recorder.events.contains(.cancelled(button: "action", kind: "org.example.timer", reason: "reload")))
    #expect(recorder.armed == nil)
  }

  // MARK: The gesture's identity

  /// An engine on `kind` assigned to "action", its device bound, at t0.
  private func pressable(_ kind: String) throws -> (ControlEngine, Recorder, MonotonicInstant) {
    let recorder = Recorder()
    let engine = ControlEngine(configuration: try configuration(assigning: kind), output: recorder)
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    engine.start()
    engine.deviceBound(button: 0, device: "/dev/input/event0", keyDown: false, at: t0)
    return (engine, recorder, t0)
  }

  @Test func aHoldsCommandCarriesTheKeyDownTimeOfItsPress() throws {
    let (engine, recorder, t0) = try pressable("org.example.photo")
    // A short press runs nothing.
    engine.keyEvent(button: 0, code: 148, value: 1, at: t0 + .microseconds(1))
    engine.keyEvent(button: 0, code: 148, value: 0, at: t0 + .milliseconds(100))
    #expect(recorder.runs.isEmpty)
    // A hold: its command learns which key-down started it, in the `pressed` event's units.
    let down = t0 + .seconds(1) + .microseconds(234_567)
    engine.keyEvent(button: 0, code: 148, value: 1, at: down)
    engine.deadlineReached(at: down + .milliseconds(600))
    let job = try #require(recorder.runs.first)
    #expect(job.pressTime == down)
    #expect(job.environment["ACTIOND_PRESS_TIME"] == "2234567")
    #expect(
      recorder.events.contains {
        if case .pressed(_, _, _, let time, _) = $0 { return "\(time.microseconds)" == "2234567" }
        return false
      })
    // A socket perform is no gesture: no press time.
    engine.performFinished(job: job.id, .succeeded)
    let photo = try #require(engine.assignment(of: "action"))
    engine.perform(photo, button: nil, source: .socket) { _ in }
    #expect(recorder.runs.count == 2)
    #expect(recorder.runs[1].environment["ACTIOND_PRESS_TIME"] == nil)
  }
}
