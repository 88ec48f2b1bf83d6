// SPDX-License-Identifier: Apache-2.0
/// The daemon's brain, with no I/O: a value that takes one input at a time
/// (``handle(_:)``: key events, timer expiries, device changes, finished commands, values
/// read, saves, socket requests, configuration generations) and returns what the outside
/// world must do, as data (``EngineEffect``). Button announcements from the recognizers
/// become hints and performs; performs become commands to start; results become the
/// resulting state; every change is announced. It never calls out: the daemon's
/// interpreter carries the effects out and feeds their outcomes back as inputs.
///
/// It is composed of three parts a newcomer can name, each in its own file:
/// ``ButtonSessions`` (every button's press recognizer and virtual press: key events in,
/// the moments of a press out), ``AssignmentTable`` (what each gesture of each button
/// performs) and ``ControlRuntime`` (instances, values, running commands, providers,
/// what waits for a read or a save). The engine's own files say what the moments do:
/// ControlEngine+Buttons (moment → hint, perform, momentary toggles), +Perform (perform →
/// command → result), +Values (reads, `set`, `reload`, saves, providers), +Configuration
/// (`assign`, a new generation, the answers to questions). docs/architecture.md draws it.
///
/// Perform semantics (issue "Controls that do real things"):
/// - a hold performs exactly once, at the threshold;
/// - while an instance's intent runs, another hold or `perform` of it is `busy`, not queued;
/// - a toggle requests `!current`; a value never read yet is read first (the perform
///   counts as busy meanwhile); an unavailable value fails the hold with the reason
///   instead of guessing;
/// - after success the value is re-read (store-backed values are simply the requested
///   one) and the resulting `valueText` announced; after failure the reason is
///   announced and nothing changes.
public struct ControlEngine {
  /// The configuration generation in force (``EngineInput/configuration(_:at:)`` replaces it).
  public internal(set) var generation: ConfigurationGeneration
  /// The configuration in force: the generation's.
  public var configuration: Configuration { generation.configuration }
  /// Every button's recognizer and virtual press.
  var sessions: ButtonSessions
  /// What each gesture of each button performs.
  var table: AssignmentTable
  /// Instances, values, running commands, providers.
  var runtime: ControlRuntime
  /// The deadline the daemon's timer is armed for (``EngineEffect/armTimer(_:)``).
  var armedDeadline: MonotonicInstant?
  /// The effects of the input being handled, in the order they arose (``handle(_:)``
  /// returns them). The buffer is emptied, keeping its capacity, when the next input
  /// comes: the key path allocates no new array per input.
  var effects: [EngineEffect] = []
  /// Whether `effects` was returned and is to be emptied before the next input.
  var effectsReturned = false
  /// The sessions' report of the input being handled (a reused buffer).
  var sessionEvents: [ButtonSessions.Event] = []
  /// The button whose press's hold command was readied (``EngineEffect/prepareCommand(_:)``).
  var preparedFor: String?
  /// Button name → the momentary toggle its current press holds on.
  var momentaryHolds: [String: MomentaryHold] = [:]
  /// Instance id → the momentary perform waiting for its running intent.
  var queuedMomentary: [String: QueuedMomentary] = [:]
  /// Where in `effects` the input being handled placed its one save, and what its changes
  /// do once the outcome is known: ``handle(_:)`` fills the save in last (``emitSave()``).
  var saveIndex: Int?
  var saveContinuations: [ControlRuntime.SaveContinuation] = []

  /// A new engine on `generation`, restoring run-time assignments and store values from
  /// `state` (what no longer fits the configuration is dropped with a warning: the
  /// warnings are the first effects ``handle(_:)`` returns, or ``takeEffects()``).
  public init(generation: ConfigurationGeneration, state: StateSnapshot = .empty) {
    self.generation = generation
    sessions = ButtonSessions(generation.configuration)
    table = AssignmentTable(restoring: state.assignments)
    runtime = ControlRuntime(storeValues: state.values)
    resolveAssignments(announce: false)
    runtime.storeValuesChanged = reconcileStoreValues()
    syncGestures()
  }

  /// A new engine on the first generation of `configuration`.
  public init(configuration: Configuration, state: StateSnapshot = .empty) {
    self.init(generation: ConfigurationGeneration(first: configuration), state: state)
  }

  // MARK: - Inputs

  /// Handles one input and returns its effects, in the order they arose (the daemon's
  /// interpreter decides the order it carries them out in: docs/architecture.md).
  public mutating func handle(_ input: EngineInput) -> [EngineEffect] {
    if effectsReturned {
      effects.removeAll(keepingCapacity: true)
      effectsReturned = false
    }
    switch input {
    case .start: start()
    case .key(let button, let code, let value, let at): keyEvent(button: button, code: code, value: value, at: at)
    case .deadline(let at): deadlineReached(at: at)
    case .deviceAppeared(let button, let keyDown, let at): deviceBound(button: button, keyDown: keyDown, at: at)
    case .deviceLost(let button, let at): deviceUnbound(button: button, at: at)
    case .resynchronized(let button, let keyDown, let at): resynchronized(button: button, keyDown: keyDown, at: at)
    case .commandFinished(let job, let outcome): performFinished(job: job, outcome)
    case .valueRead(let job, let value): valueRead(job: job, value)
    case .saved(let token, let error): saved(token, error)
    case .request(let request, let token): handle(request, reply: token)
    case .configuration(let generation, let at): apply(generation, at: at)
    case .stopping: endMomentaryHolds()
    }
    // The input's one decision about the timer, then its one save, which holds the state
    // after the whole input. The timer's effect goes before the save: an awaited save is
    // answered inside this input's effects (docs/architecture.md), and what the answer
    // decides about the deadline is newer, so it must be carried out later.
    rearm()
    emitSave()
    effectsReturned = true
    return effects
  }

  /// The effects produced since the last ``handle(_:)`` (by ``init(generation:state:)``:
  /// what restoring the state logged), emptied.
  public mutating func takeEffects() -> [EngineEffect] {
    // What the last handle(_:) returned is not returned again.
    defer { (effects, effectsReturned) = ([], false) }
    emitSave()
    return effectsReturned ? [] : effects
  }

  mutating func handle(_ request: EngineRequest, reply token: RequestToken?) {
    switch request {
    case .perform(let instance, let button, let source):
      perform(instance, button: button, source: source, reply: token)
    case .set(let instance, let value):
      set(instance, to: value, reply: token)
    case .assign(let instance, let button, let gesture, let momentary):
      assign(instance, to: button, gesture: gesture, momentary: momentary, reply: token)
    case .reload(let kind):
      reload(kind: kind, reply: token)
    case .refresh(let instance):
      refresh(instance, then: token.map(ControlRuntime.ReadWaiter.reply))
    case .press(let button, let press, let at):
      switch simulatePress(button: button, press, at: at) {
      case .success: reply(token, .success(.button(button)))
      case .failure(.unknownButton):
        reply(token, .failure(ProtocolError(.unknownButton, "no button is named \(JSONEncoding.quoted(button))")))
      case .failure(.keyDown):
        reply(
          token,
          .failure(
            ProtocolError(
              .busy,
              "button \(button) is down (its key or another press is in progress); press again once it is up")))
      }
    case .register(let client, let kinds):
      registerProvider(client, kinds: kinds, reply: token)
    case .providerDisconnected(let client):
      providerDisconnected(client)
      reply(token, .success(.done))
    }
  }

  mutating func reply(_ token: RequestToken?, _ result: Result<EngineAnswer, ProtocolError>) {
    guard let token else { return }
    effects.append(.reply(token, result))
  }

  /// Answers a `perform` or `set` with the resulting control or the error.
  mutating func answer(_ token: RequestToken?, _ result: Result<ControlSnapshot, ProtocolError>) {
    reply(token, result.map(EngineAnswer.control))
  }

  mutating func log(_ level: LogLevel, _ message: String) {
    effects.append(.log(level, message))
  }

  // MARK: - Start

  /// Reads the value of every configured control instance (store-backed ones at once):
  /// the assigned ones, those named since, and the default instance of every definition
  /// nobody configured yet (what `list` shows).
  mutating func start() {
    if runtime.storeValuesChanged {
      runtime.storeValuesChanged = false
      save()  // nobody to tell on failure: the daemon logs it and saves again later
    }
    for instance in valueInstances() { refresh(instance) }
  }

  /// Brings the store values in line with the configuration
  /// (``ControlRuntime/reconcileStoreValues(_:named:)``); true when something changed.
  mutating func reconcileStoreValues() -> Bool {
    var named = assignedInstances()
    for definition in configuration.controls {
      if let bare = try? ControlInstance(definition: definition, configuration: [:] as JSONObject) {
        named.append(bare)
      }
    }
    let (changed, notes) = runtime.reconcileStoreValues(configuration, named: named)
    for note in notes { log(.notice, note) }
    return changed
  }

  // MARK: - Feedback

  /// Every announcement goes out here: to the output, and, when it is a moment of a
  /// button (or changes what a button's hold control shows), to the button's feedback.
  mutating func announce(_ event: Event) {
    effects.append(.announce(event))
    if let (button, moment) = ControlEngine.buttonMoment(of: event) {
      feedback(moment, button: button)
    }
    switch event {
    case .state(_, let buttons):
      for button in buttons where assignment(of: button, gesture: .hold) != nil {
        effects.append(.holdValue(button: button, isOn: holdValue(button: button)))
      }
    case .assigned(let button, .hold, _, _):
      effects.append(.holdValue(button: button, isOn: holdValue(button: button)))
    default:
      break
    }
  }

  /// A moment of `button`'s press for its feedback. The end of a press also ends the
  /// command readied for its hold, if the hold did not run it.
  mutating func feedback(_ moment: EventName, button: String) {
    if moment.endsPress, preparedFor == button {
      preparedFor = nil
      effects.append(.discardPrepared)
    }
    effects.append(.feedback(moment, button: button))
  }

  /// The button moment an announcement is, if any: a press's moments, and a perform's
  /// outcome when a button asked for it (a socket `perform` names no button).
  static func buttonMoment(of event: Event) -> (String, EventName)? {
    switch event {
    case .pressed(let b, _, _, _, _, _), .released(let b, _, _, _, _, _), .releasedAfterHold(let b, _, _, _, _),
      .releasedAfterDoublePress(let b, _, _, _), .held(let b, _, _, _), .longHeld(let b, _, _),
      .doublePressed(let b, _, _, _), .cancelled(let b, _, _), .performed(let b?, _, _, _),
      .failed(_, let b?, _, _, _), .busy(_, let b?, _, _):
      (b, event.name)
    default: nil
    }
  }

  /// The value of the toggle assigned to `button`'s hold: what its state indicators show.
  /// nil when the hold has no control, it is a button, or its value is unknown or
  /// unavailable.
  public func holdValue(button: String) -> Bool? {
    guard let instance = assignment(of: button, gesture: .hold)?.instance,
      let definition = configuration.control(kind: instance.kind), definition.type == .toggle
    else { return nil }
    switch runtime.value(of: instance, definition) {
    case .on: return true
    case .off: return false
    case .unknown, .unavailable: return nil
    }
  }

  /// The input's decision about the timer (called once per input, by ``handle(_:)``): an
  /// ``EngineEffect/armTimer(_:)`` when the next deadline moved, placed before the input's
  /// save if it has one, so that every decision is carried out after the older ones.
  mutating func rearm() {
    let next = nextDeadline
    guard next != armedDeadline else { return }
    armedDeadline = next
    if let index = saveIndex {
      effects.insert(.armTimer(next), at: index)
      saveIndex = index + 1
    } else {
      effects.append(.armTimer(next))
    }
  }
}
