// SPDX-License-Identifier: Apache-2.0
/// The daemon's brain, with no I/O: a value that takes one input at a time
/// (``handle(_:)``: key events, timer expiries, device changes, finished commands, values
/// read, saves, socket requests, configuration generations) and returns what the outside
/// world must do, as data (``EngineEffect``). Button announcements from the recognizers
/// become hints and performs; performs become commands to start; results become the
/// resulting state; every change is announced. It never calls out: the daemon's
/// interpreter carries the effects out and feeds their outcomes back as inputs.
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
  /// A perform handed to the adapter: run `intent` (already parameter-substituted).
  public struct PerformJob: Hashable, Sendable {
    public let id: UInt64
    public let kind: String
    public let instance: ControlInstance
    public let intent: IntentSpec
    public let controlType: ControlType
    /// For toggles, the requested new value (`ACTIOND_VALUE`).
    public let requestedValue: Bool?
    /// The button whose hold caused it; nil for socket performs.
    public let button: String?
    public let source: PerformSource
    /// For a button gesture, the kernel's timestamp of the key-down of the press that
    /// performed (for a double press, the second one): the identity of the gesture
    /// (`ACTIOND_PRESS_TIME`). nil for socket performs.
    public let pressTime: MonotonicInstant?
    /// The button gesture that performed it (`ACTIOND_GESTURE`); nil for socket performs.
    public let gesture: Gesture?
    /// The off of a momentary toggle whose press ended: a stop lets it finish.
    public var endsMomentaryHold = false

    /// Whether `other` does exactly what this job does (the same intent, value and
    /// environment), whatever the ids: a job prepared at key-down against the hold's.
    public func performsTheSame(as other: PerformJob) -> Bool {
      kind == other.kind && instance == other.instance && intent == other.intent && controlType == other.controlType
        && requestedValue == other.requestedValue && button == other.button && source == other.source
        && pressTime == other.pressTime && gesture == other.gesture && endsMomentaryHold == other.endsMomentaryHold
    }

    /// The environment contract of exec intents: `ACTIOND_KIND`, `ACTIOND_BUTTON`,
    /// `ACTIOND_GESTURE` (`hold`, `doublePress`, `longHold`), `ACTIOND_PRESS_TIME` (the
    /// performing press's key-down, CLOCK_MONOTONIC in microseconds: the `time` of its
    /// `pressed` or `double-pressed` event), `ACTIOND_VALUE` (toggles: 1 or 0) and one
    /// `ACTIOND_PARAM_<NAME>` per parameter.
    public var environment: [String: String] {
      var env = instance.parameterEnvironment
      env["ACTIOND_KIND"] = kind
      env["ACTIOND_INSTANCE"] = instance.id
      if let button { env["ACTIOND_BUTTON"] = button }
      if let gesture { env["ACTIOND_GESTURE"] = gesture.rawValue }
      if let pressTime { env["ACTIOND_PRESS_TIME"] = String(pressTime.microseconds) }
      if let requestedValue { env["ACTIOND_VALUE"] = requestedValue ? "1" : "0" }
      return env
    }
  }

  /// A value read handed to the adapter: run `provider` (exec, file or provider) and
  /// report with `valueRead(id:_:)`.
  public struct ValueReadJob: Hashable, Sendable {
    public let id: UInt64
    public let kind: String
    public let instance: ControlInstance
    public let provider: ValueProviderSpec
  }

  /// A connected client application that provides kinds (a socket connection), as the
  /// adapter identifies it. Opaque here: the engine records and compares it, never talks
  /// to it; the adapter sends the provider requests.
  public struct ProviderClient: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "client \(rawValue)" }
  }

  /// How an intent ended, as the adapter saw it.
  public enum PerformOutcome: Hashable, Sendable {
    case succeeded
    /// `reason` is for people ("exited with status 3", "timed out after 10s").
    case failed(code: ProtocolErrorCode, reason: String)
  }

  /// The configuration generation in force (``EngineInput/configuration(_:at:)`` replaces it).
  public private(set) var generation: ConfigurationGeneration
  /// The configuration in force: the generation's.
  public var configuration: Configuration { generation.configuration }
  private var recognizers: ButtonRecognizers
  private var armedDeadline: MonotonicInstant?
  /// What each button's gestures perform now (file or run time): button → gesture → assignment.
  private var gestureAssignments: [String: [Gesture: GestureAssignment]] = [:]
  /// The run-time assignments, as persisted: button → gesture → assignment.
  private var runtimeAssignments: [String: [Gesture: StateSnapshot.Assignment]] = [:]
  /// Each button's hold instance (the control a short press hints and a hold performs),
  /// by button name: a view of `gestureAssignments`, so the key-event path copies nothing.
  private var assignments: HoldAssignments { HoldAssignments(all: gestureAssignments) }

  private struct HoldAssignments {
    let all: [String: [Gesture: GestureAssignment]]
    subscript(button: String) -> ControlInstance? { all[button]?[.hold]?.instance }
  }
  private var instances: [String: ControlInstance] = [:]
  private var values: [String: ControlValue] = [:]
  /// Store-backed values by ``ControlInstance/storeKey``.
  private var storeValues: [String: Bool] = [:]
  /// Set when loading migrated or pruned store values: `start()` saves them.
  private var storeValuesChanged = false
  private var inFlight: [String: InFlight] = [:]
  /// Instances whose value is being read before a perform can decide what to request.
  private var readingToPerform: Set<String> = []
  private var pendingReads: [UInt64: PendingRead] = [:]
  private var readsByInstance: [String: UInt64] = [:]
  /// Kind → the client that registered as its provider: the one record of who provides
  /// what. The adapter reports registrations and closed connections; it asks here which
  /// client to send a provider request to.
  private var providers: [String: ProviderClient] = [:]
  private var nextJobID: UInt64 = 1
  /// The effects of the input being handled, in the order they arose (``handle(_:)``
  /// returns and empties it).
  private var effects: [EngineEffect] = []
  /// The button whose press's hold command was readied (``EngineEffect/prepareCommand(_:)``).
  private var preparedFor: String?
  /// Saves the engine waits for, by token: what to do when the outcome is known.
  private var awaitedSaves: [UInt64: SaveContinuation] = [:]
  /// Reloads waiting for their reads, by id: how many are left and who to answer.
  private var pendingReloads: [UInt64: PendingReload] = [:]

  private struct InFlight {
    var job: PerformJob
    /// The definition the intent was planned from: a momentary toggle's off is announced
    /// from it when a reload removed the control while it ran.
    var definition: ControlDefinition
    var reply: RequestToken?
    /// Set once the intent succeeded and the value is being re-read.
    var rereading = false
  }

  private struct PendingRead {
    var instanceID: String
    var waiters: [ReadWaiter]
  }

  /// What waits for a value read (data, not a closure: the engine is a value).
  private enum ReadWaiter {
    /// A perform of a value never read: it decides once the value is known.
    case perform(PerformRequest)
    /// A perform that succeeded re-read its value: it is announced now.
    case finishPerform(instanceID: String)
    /// One of a `reload`'s reads.
    case reload(UInt64)
    /// A `refresh` request: answered once the value is known.
    case reply(RequestToken)
  }

  /// A perform as asked, kept while its value is read first.
  private struct PerformRequest {
    var instance: ControlInstance
    var button: String?
    var source: PerformSource
    var gesture: Gesture?
    var pressTime: MonotonicInstant?
    var reply: RequestToken?
  }

  private struct PendingReload {
    var remaining: Int
    var kind: String?
    var reply: RequestToken?
  }

  /// What a change does once its save succeeded, or how it is undone when it failed.
  private enum SaveContinuation {
    /// A store-backed perform: the value `requested` was stored under `key` (was `old`).
    case perform(instanceID: String, key: String, old: Bool?, requested: Bool)
    /// `set`: the value was stored under the instance's key (was `old`).
    case set(ControlInstance, old: Bool?, new: Bool, reply: RequestToken?)
    /// `assign`: the button's assignments before it, restored on failure.
    case assign(
      ControlInstance, button: String, gesture: Gesture, momentary: Bool,
      oldStored: [Gesture: StateSnapshot.Assignment]?, oldAssigned: [Gesture: GestureAssignment]?,
      reply: RequestToken?)
  }

  /// A new engine on `generation`, restoring run-time assignments and store values from
  /// `state` (what no longer fits the configuration is dropped with a warning: the
  /// warnings are the first effects ``handle(_:)`` returns, or ``takeEffects()``).
  public init(generation: ConfigurationGeneration, state: StateSnapshot = .empty) {
    self.generation = generation
    self.recognizers = ControlEngine.makeRecognizers(generation.configuration)
    self.storeValues = state.values
    self.runtimeAssignments = state.assignments
    resolveAssignments(announce: false)
    storeValuesChanged = reconcileStoreValues()
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
    rearm()
    return takeEffects()
  }

  /// The effects produced since the last ``handle(_:)`` (by ``init(generation:state:)``:
  /// what restoring the state logged), emptied.
  public mutating func takeEffects() -> [EngineEffect] {
    defer { effects = [] }
    return effects
  }

  private mutating func handle(_ request: EngineRequest, reply token: RequestToken?) {
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
      refresh(instance, then: token.map(ReadWaiter.reply))
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

  private mutating func reply(_ token: RequestToken?, _ result: Result<EngineAnswer, ProtocolError>) {
    guard let token else { return }
    effects.append(.reply(token, result))
  }

  /// Answers a `perform` or `set` with the resulting control or the error.
  private mutating func answer(_ token: RequestToken?, _ result: Result<ControlSnapshot, ProtocolError>) {
    reply(token, result.map(EngineAnswer.control))
  }

  private mutating func log(_ level: LogLevel, _ message: String) {
    effects.append(.log(level, message))
  }

  // MARK: - Start

  /// Reads the value of every configured control instance (store-backed ones at once):
  /// the assigned ones, those named since, and the default instance of every definition
  /// nobody configured yet (what `list` shows).
  private mutating func start() {
    if storeValuesChanged {
      storeValuesChanged = false
      save()  // nobody to tell on failure: the daemon logs it and saves again later
    }
    for instance in valueInstances() { refresh(instance) }
  }

  /// Brings the store values in line with the configuration; true when something changed.
  ///
  /// - State files before store keys keyed a value by instance id, defaults included
  ///   (`kind{led=green}` for an assignment that gave no `led`). For every instance the
  ///   configuration names (assignments and each definition's default instance), such a
  ///   value is copied to the instance's store key unless one is already there.
  /// - Values of kinds the configuration no longer defines are dropped (logged), so the
  ///   state file does not keep what nothing can show. Values of kinds that still exist are
  ///   kept whatever their configuration: the user may assign that configuration again.
  private mutating func reconcileStoreValues() -> Bool {
    var changed = false
    var named = assignedInstances()
    for definition in configuration.controls {
      if let bare = try? ControlInstance(definition: definition, configuration: [:] as JSONObject) {
        named.append(bare)
      }
    }
    for instance in named.sorted(by: { $0.id < $1.id }) where instance.storeKey != instance.id {
      guard storeValues[instance.storeKey] == nil, let legacy = storeValues[instance.id] else { continue }
      storeValues[instance.storeKey] = legacy
      changed = true
    }
    for key in storeValues.keys.sorted() where configuration.control(kind: ControlInstance.kind(ofStoreKey: key)) == nil
    {
      storeValues[key] = nil
      changed = true
      log(.notice, "dropped the stored value of \(key): its kind is no longer configured")
    }
    return changed
  }

  // MARK: - Buttons

  /// A key event from a device serving button `button` (index in `configuration.buttons`).
  private mutating func keyEvent(button: Int, code: UInt16, value: Int32, at time: MonotonicInstant) {
    guard button < recognizers.count else { return }
    if !virtualPresses.isEmpty, code == recognizers[button].keyCode,
      realKeyTakesOver(button: button, value: value, at: time)
    {
      rearm()
      return
    }
    guard let out = recognizers.keyEvent(button: button, code: code, value: value, at: time) else { return }
    handle(out, button: button)
    rearm()
  }

  /// The engine's timer (armed through `armTimer`) fired at `now`.
  private mutating func deadlineReached(at now: MonotonicInstant) {
    armedDeadline = nil
    runVirtualPresses(upTo: now)
    var outs: [(Int, PressRecognizer.Output)] = []
    recognizers.deadlineReached(at: now) { outs.append(($0, $1)) }
    for (button, out) in outs { handle(out, button: button) }
    rearm()
  }

  /// The earliest recognizer deadline (what the timer should be armed for).
  public var nextDeadline: MonotonicInstant? {
    let virtual = virtualPresses.values.compactMap { $0.edges.first?.at }.min()
    guard let recognizer = recognizers.nextDeadline?.at else { return virtual }
    return virtual.map { min($0, recognizer) } ?? recognizer
  }

  /// A device serving `button` was opened; `keyDown` is the key's state at that moment
  /// (a key already down is not a press). Which device serves which button is the input
  /// layer's to know (`buttonStatus(_:devices:)` asks it); the engine only needs the key.
  private mutating func deviceBound(button: Int, keyDown: Bool, at time: MonotonicInstant) {
    guard button < recognizers.count else { return }
    endVirtualPress(button: button, at: time)
    handle(recognizers.deviceAppeared(button: button, keyDown: keyDown, at: time), button: button)
    rearm()
  }

  /// The device serving `button` vanished (unplugged, read error), or the kernel released
  /// its keys itself because it is going away: a pending hold is cancelled (`device-lost`).
  private mutating func deviceUnbound(button: Int, at time: MonotonicInstant) {
    guard button < recognizers.count else { return }
    endVirtualPress(button: button, at: time)
    handle(recognizers.deviceLost(button: button, at: time), button: button)
    rearm()
  }

  /// Events of the device serving `button` were dropped (SYN_DROPPED); the key is now `keyDown`.
  private mutating func resynchronized(button: Int, keyDown: Bool, at time: MonotonicInstant) {
    guard button < recognizers.count else { return }
    endVirtualPress(button: button, at: time)
    handle(recognizers.resynchronized(button: button, keyDown: keyDown, at: time), button: button)
    rearm()
  }

  private mutating func handle(_ out: PressRecognizer.Output, button index: Int) {
    let config = configuration.buttons[index]
    let name = config.name
    if let anomaly = out.anomaly {
      log(.warning, "recognizer anomaly on button \(name): \(anomaly) (a bug; ignored)")
    }
    for announcement in out.announcements {
      let hold = assignment(of: name, gesture: .hold)
      switch announcement {
      case .pressed(let at):
        let hints = gestureHints(button: name)
        announce(
          .pressed(
            button: name, kind: hold?.instance.kind, hint: joinedHint(hints, button: name), hints: hints, time: at,
            threshold: config.holdThreshold))
        prepareHold(hold, button: name, pressTime: at)
      case .releasedShort(let at, let heldFor):
        let hints = gestureHints(button: name)
        announce(
          .released(
            button: name, kind: hold?.instance.kind, hint: joinedHint(hints, button: name), hints: hints, time: at,
            duration: heldFor))
      case .held(let at, let pressedAt):
        let long = assignment(of: name, gesture: .longHold)
        let notice = long.flatMap { long -> LongHoldNotice? in
          guard let definition = configuration.control(kind: long.instance.kind) else { return nil }
          return LongHoldNotice(
            kind: long.instance.kind,
            hint: ControlPresentation.hint(
              .keepHolding, for: definition, missing: long.instance.missing, value: value(of: long.instance, definition)
            ),
            deadline: pressedAt + recognizers[index].recognizer.settings.longHoldThreshold)
        }
        announce(.held(button: name, kind: hold?.instance.kind, time: at, longHold: notice))
        if let hold {
          if hold.momentary {
            // On while held: whatever ends this press (release, lost device, reload)
            // turns it off again (`endMomentary`).
            if let definition = configuration.control(kind: hold.instance.kind) {
              momentaryHolds[name] = MomentaryHold(
                instance: hold.instance, definition: definition, pressTime: pressedAt)
            }
            performMomentary(hold.instance, on: true, button: name, pressTime: pressedAt)
          } else {
            perform(hold.instance, button: name, source: .button, gesture: .hold, pressTime: pressedAt, reply: nil)
          }
        } else if long == nil {
          log(.notice, "button \(name) held, but no control is assigned to it")
        }
      case .longHeld(let at, let pressedAt):
        let long = assignment(of: name, gesture: .longHold)
        announce(.longHeld(button: name, kind: long?.instance.kind, time: at))
        if let long {
          perform(
            long.instance, button: name, source: .button, gesture: .longHold, pressTime: pressedAt, reply: nil)
        }
      case .releasedAfterHold(let at, let heldFor, let longHeld):
        announce(
          .releasedAfterHold(button: name, kind: hold?.instance.kind, time: at, duration: heldFor, longHeld: longHeld))
        endMomentary(button: name)
      case .doublePressed(let at, _, let gap):
        let double = assignment(of: name, gesture: .doublePress)
        announce(.doublePressed(button: name, kind: double?.instance.kind, time: at, gap: gap))
        if let double {
          perform(double.instance, button: name, source: .button, gesture: .doublePress, pressTime: at, reply: nil)
        } else {
          // The assignment went away during the window; the recognizer was told, but this
          // press had already been read.
          log(.notice, "button \(name) double-pressed, but no control is assigned to its double press")
        }
      case .releasedAfterDoublePress(let at, let heldFor):
        let double = assignment(of: name, gesture: .doublePress)
        announce(
          .releasedAfterDoublePress(button: name, kind: double?.instance.kind, time: at, duration: heldFor))
      case .cancelled(_, let reason, let stage):
        // After a hold or a double press the perform already happened; there is nothing
        // left to cancel, but a momentary toggle held on must go off.
        if stage == .pending {
          announce(.cancelled(button: name, kind: hold?.instance.kind, reason: reason.description))
        } else {
          log(.debug, "button \(name): press ended by \(reason) after its \(stage)")
          // Not announced, but the press is over: a pattern lasting while the key is down ends.
          feedback(.cancelled, button: name)
          endMomentary(button: name, why: "its press ended (\(reason))")
        }
      }
    }
  }

  /// Hands the adapter the exec job `hold` would run for this press if nothing changed
  /// before the threshold, so that the command is ready when it comes
  /// (``EngineEffect/prepareCommand(_:)``). Decided as the hold will decide it, from
  /// the current state alone; nothing is recorded.
  private mutating func prepareHold(_ hold: GestureAssignment?, button: String, pressTime: MonotonicInstant) {
    guard let hold, let definition = configuration.control(kind: hold.instance.kind),
      case .run(let intent, let requested) = plan(
        hold.instance, definition, valueWasRead: false, forcing: hold.momentary ? true : nil),
      case .exec = intent
    else { return }
    preparedFor = button
    effects.append(
      .prepareCommand(
        PerformJob(
          id: 0, kind: hold.instance.kind, instance: hold.instance, intent: intent, controlType: definition.type,
          requestedValue: requested, button: button, source: .button, pressTime: pressTime, gesture: .hold)))
  }

  /// The hint of every gesture of `button` that has a control, hold first.
  private func gestureHints(button: String) -> [GestureHint] {
    guard let index = configuration.buttons.firstIndex(where: { $0.name == button }), index < recognizers.count
    else { return [] }
    let settings = recognizers[index].recognizer.settings
    var hints: [GestureHint] = []
    for gesture in Gesture.allCases {
      guard let assigned = assignment(of: button, gesture: gesture),
        let definition = configuration.control(kind: assigned.instance.kind)
      else { continue }
      let kind: ControlPresentation.HintGesture =
        switch gesture {
        case .hold: assigned.momentary ? .momentaryHold : .hold
        case .doublePress: .doublePress
        case .longHold: .longHold(settings.longHoldThreshold)
        }
      let text = ControlPresentation.hint(
        kind, for: definition, missing: assigned.instance.missing, value: value(of: assigned.instance, definition))
      hints.append(GestureHint(gesture: gesture, kind: assigned.instance.kind, hint: text))
    }
    return hints
  }

  private func joinedHint(_ hints: [GestureHint], button: String) -> String {
    hints.isEmpty ? ControlPresentation.unassignedHint(button: button) : ControlPresentation.joined(hints.map(\.hint))
  }

  /// The gestures beyond the hold `button` listens for: those with a control assigned.
  private func gestureSet(button: String) -> GestureSet {
    var set: GestureSet = []
    if assignment(of: button, gesture: .doublePress) != nil { set.insert(.doublePress) }
    if assignment(of: button, gesture: .longHold) != nil { set.insert(.longHold) }
    return set
  }

  /// Tells every recognizer which gestures its button has now (after assignments changed).
  /// A double-press window in progress on a button that lost the gesture ends as the
  /// short press it was.
  private mutating func syncGestures() {
    for (index, button) in configuration.buttons.enumerated() where index < recognizers.count {
      let set = gestureSet(button: button.name)
      guard recognizers[index].recognizer.gestures != set else { continue }
      handle(recognizers.setGestures(button: index, set), button: index)
    }
    rearm()
  }

  // MARK: - Momentary toggles

  /// A momentary toggle held on by a button's press: it goes off when the press ends.
  private struct MomentaryHold {
    var instance: ControlInstance
    /// The definition it was turned on with: its off is that definition's off, also when
    /// a reload changed or removed the control meanwhile.
    var definition: ControlDefinition
    var pressTime: MonotonicInstant
  }

  /// A momentary perform that arrived while the instance's intent ran: it runs as soon as
  /// that one finished (the one exception to "busy, not queued": an off must never be lost).
  private struct QueuedMomentary {
    /// Kept here: a reload may remove the control while it waits, and its off still runs.
    var instance: ControlInstance
    var on: Bool
    var button: String
    var pressTime: MonotonicInstant
    /// An off's definition (``MomentaryHold/definition``); nil: the configuration's.
    var definition: ControlDefinition?
  }

  /// Button name → the momentary toggle its current press holds on.
  private var momentaryHolds: [String: MomentaryHold] = [:]
  /// Instance id → the momentary perform waiting for its running intent.
  private var queuedMomentary: [String: QueuedMomentary] = [:]

  /// The daemon is stopping: every momentary toggle held on by a press goes off now, while
  /// commands may still start (the stop spares these offs, ``PerformJob/endsMomentaryHold``).
  /// An off waiting for its on's command runs once that command ended: the stop ends it.
  private mutating func endMomentaryHolds() {
    for button in momentaryHolds.keys.sorted() { endMomentary(button: button, why: "actiond is stopping") }
  }

  /// True while a momentary toggle is held on, or its off waits for a running intent: what a
  /// stop must still run before the daemon exits.
  public var hasMomentaryOffsPending: Bool {
    !momentaryHolds.isEmpty || queuedMomentary.values.contains { !$0.on }
  }

  /// The press that held a momentary toggle on ended (released, device lost, resync,
  /// reload, reassignment, stop): turn it off, whatever happened to the on. `why` is
  /// logged when it is not the release.
  private mutating func endMomentary(button: String, why: String? = nil) {
    guard let held = momentaryHolds.removeValue(forKey: button) else { return }
    if let why { log(.notice, "button \(button): \(held.instance.kind) goes off: \(why)") }
    performMomentary(
      held.instance, on: false, button: button, pressTime: held.pressTime, definition: held.definition)
  }

  /// A reload or an `assign` changed what `button`'s hold performs or the definition of the
  /// momentary toggle it holds on: that toggle goes off now, with the definition it was
  /// turned on with. The press goes on; its release does nothing more.
  private mutating func endMomentaryHoldsNoLongerAssigned(why: String) {
    for (button, held) in momentaryHolds.sorted(by: { $0.key < $1.key }) {
      let still = gestureAssignments[button]?[.hold]
      let current = configuration.control(kind: held.instance.kind)
      if current != held.definition {
        endMomentary(
          button: button, why: current == nil ? "\(why) removed the control" : "\(why) changed the control")
      } else if still?.momentary != true || still?.instance.id != held.instance.id {
        endMomentary(button: button, why: "\(why) assigned another control to the button's hold")
      }
    }
  }

  private mutating func performMomentary(
    _ instance: ControlInstance, on: Bool, button: String, pressTime: MonotonicInstant,
    definition: ControlDefinition? = nil
  ) {
    if inFlight[instance.id] != nil || readingToPerform.contains(instance.id) {
      // A later request replaces an earlier queued one: on then off while busy is off.
      queuedMomentary[instance.id] = QueuedMomentary(
        instance: instance, on: on, button: button, pressTime: pressTime, definition: definition)
      log(
        .info, "button \(button): \(instance.kind) turns \(on ? "on" : "off") once its running intent finished")
      return
    }
    perform(
      instance, button: button, source: .button, gesture: .hold, pressTime: pressTime, forcing: on,
      valueWasRead: false, endsMomentaryHold: !on, definition: definition, reply: nil)
  }

  /// An intent of `instanceID` finished (either way): run the momentary perform that waited for it.
  private mutating func runQueuedMomentary(_ instanceID: String) {
    guard let queued = queuedMomentary.removeValue(forKey: instanceID) else { return }
    performMomentary(
      queued.instance, on: queued.on, button: queued.button, pressTime: queued.pressTime, definition: queued.definition)
  }

  // MARK: - Virtual presses

  /// The key edges a `press` request still has to deliver to a button's recognizer, in
  /// time order (the first one may be due now). `isDown`: the virtual key is down.
  struct VirtualKey {
    var edges: [(down: Bool, at: MonotonicInstant)]
    var isDown = false
  }

  /// Button name → its virtual press in progress (at most one per button).
  private var virtualPresses: [String: VirtualKey] = [:]

  /// Why a `press` could not start.
  public enum VirtualPressRefusal: Error, Hashable, Sendable {
    case unknownButton
    /// The button's key is down (a real key, or another virtual press is in progress):
    /// a second key-down would be no press at all.
    case keyDown
  }

  /// `press`: a virtual press of `button`'s key, starting at `time`. Its key-down and
  /// key-up go through the button's recognizer exactly as the kernel's would, so a short
  /// press announces the hints, a hold performs at the threshold, a double press and a
  /// long hold act, a momentary toggle is on while the virtual key is down. The key-up of
  /// a hold is delivered by the engine's own timer at its absolute time, so nobody has to
  /// wait for it. Returns when the virtual key goes up for the last time.
  private mutating func simulatePress(
    button: String, _ press: VirtualPress = .short, at time: MonotonicInstant
  ) -> Result<MonotonicInstant, VirtualPressRefusal> {
    guard let index = configuration.buttons.firstIndex(where: { $0.name == button }), index < recognizers.count
    else { return .failure(.unknownButton) }
    guard virtualPresses[button] == nil, !recognizers[index].recognizer.isDown else { return .failure(.keyDown) }
    let edges: [(down: Bool, at: MonotonicInstant)]
    switch press {
    case .short: edges = [(true, time), (false, time)]
    case .hold(let span): edges = [(true, time), (false, time + span)]
    case .double:
      // The second key-down as soon as the first release is no longer chatter: inside
      // every valid window (the window is longer than the debounce).
      let second = time + recognizers[index].recognizer.settings.debounce
      edges = [(true, time), (false, time), (true, second), (false, second)]
    }
    virtualPresses[button] = VirtualKey(edges: edges)
    runVirtualPresses(upTo: time)
    rearm()
    return .success(edges[edges.count - 1].at)
  }

  /// Delivers every virtual key edge due at or before `t`, each stamped with its own time.
  private mutating func runVirtualPresses(upTo t: MonotonicInstant) {
    guard !virtualPresses.isEmpty else { return }
    for name in virtualPresses.keys.sorted() {
      guard let index = configuration.buttons.firstIndex(where: { $0.name == name }), index < recognizers.count else {
        virtualPresses[name] = nil
        continue
      }
      while let key = virtualPresses[name], let edge = key.edges.first, edge.at <= t {
        var rest = key
        rest.edges.removeFirst()
        rest.isDown = edge.down
        virtualPresses[name] = rest.edges.isEmpty ? nil : rest
        let code = recognizers[index].keyCode
        if let out = recognizers.keyEvent(button: index, code: code, value: edge.down ? 1 : 0, at: edge.at) {
          handle(out, button: index)
        }
      }
    }
  }

  /// A real key event of `button`'s key arrived during a virtual press. The hardware
  /// wins: the virtual edges not yet due are dropped. A real key-down while the virtual
  /// key is down takes the press over (it is not a new press: the real release ends it,
  /// so holding the real key on keeps a hold going); otherwise the real event is read as
  /// usual. True when the event was consumed.
  private mutating func realKeyTakesOver(button index: Int, value: Int32, at time: MonotonicInstant) -> Bool {
    let name = configuration.buttons[index].name
    guard virtualPresses[name] != nil else { return false }
    runVirtualPresses(upTo: time)
    guard let key = virtualPresses.removeValue(forKey: name) else { return false }
    log(.info, "button \(name): the key was pressed during a virtual press, which it ends")
    return key.isDown && value == 1
  }

  /// A device change on `button` (bound, lost, resynchronised) ends a virtual press on it:
  /// its key goes up at `time` (what was due before is delivered first), so the device's
  /// own state is then read against a key that is up, as the kernel reports it.
  private mutating func endVirtualPress(button index: Int, at time: MonotonicInstant) {
    guard !virtualPresses.isEmpty else { return }
    let name = configuration.buttons[index].name
    runVirtualPresses(upTo: time)
    guard let key = virtualPresses.removeValue(forKey: name), key.isDown else { return }
    if let out = recognizers.keyEvent(button: index, code: recognizers[index].keyCode, value: 0, at: time) {
      handle(out, button: index)
    }
  }

  // MARK: - Feedback

  /// Every announcement goes out here: to the output, and, when it is a moment of a
  /// button (or changes what a button's hold control shows), to the button's feedback.
  private mutating func announce(_ event: Event) {
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
  private mutating func feedback(_ moment: ButtonMoment, button: String) {
    if moment == .released || moment == .cancelled, preparedFor == button {
      preparedFor = nil
      effects.append(.discardPrepared)
    }
    effects.append(.feedback(moment, button: button))
  }

  /// The button moment an announcement is, if any: a press's moments, and a perform's
  /// outcome when a button asked for it (a socket `perform` names no button).
  static func buttonMoment(of event: Event) -> (String, ButtonMoment)? {
    switch event {
    case .pressed(let b, _, _, _, _, _): (b, .pressed)
    case .released(let b, _, _, _, _, _), .releasedAfterHold(let b, _, _, _, _),
      .releasedAfterDoublePress(let b, _, _, _):
      (b, .released)
    case .held(let b, _, _, _): (b, .held)
    case .longHeld(let b, _, _): (b, .longHeld)
    case .doublePressed(let b, _, _, _): (b, .doublePressed)
    case .cancelled(let b, _, _): (b, .cancelled)
    case .performed(let b?, _, _, _): (b, .performed)
    case .failed(_, let b?, _, _, _): (b, .failed)
    case .busy(_, let b?, _, _): (b, .busy)
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
    switch value(of: instance, definition) {
    case .on: return true
    case .off: return false
    case .unknown, .unavailable: return nil
    }
  }

  private mutating func rearm() {
    let next = nextDeadline
    if next != armedDeadline {
      armedDeadline = next
      effects.append(.armTimer(next))
    }
  }

  // MARK: - Perform

  /// Performs `instance` as a hold would. The reply (socket performs) is the resulting
  /// control or the error; button gestures announce instead.
  /// `pressTime`: the key-down of the press that asked for it, `gesture` which gesture
  /// it was (both nil for socket performs).
  private mutating func perform(
    _ instance: ControlInstance, button: String?, source: PerformSource, gesture: Gesture? = nil,
    pressTime: MonotonicInstant? = nil, reply token: RequestToken?
  ) {
    perform(
      instance, button: button, source: source, gesture: gesture, pressTime: pressTime, forcing: nil,
      valueWasRead: false, reply: token)
  }

  /// `forcing`: a momentary toggle's requested value (on at the hold, off at its end),
  /// run whatever the current value is; nil: a toggle requests the opposite of its value.
  private mutating func perform(
    _ instance: ControlInstance, button: String?, source: PerformSource, gesture: Gesture?,
    pressTime: MonotonicInstant?, forcing: Bool?, valueWasRead: Bool, endsMomentaryHold: Bool = false,
    definition given: ControlDefinition? = nil, reply token: RequestToken?
  ) {
    // `given`: a momentary toggle's off runs the off of the definition it was turned on
    // with, even if a reload changed or removed the control since.
    guard let definition = given ?? configuration.control(kind: instance.kind) else {
      let e = ProtocolError(.unknownKind, "no control of kind \"\(instance.kind)\"")
      announce(.failed(kind: instance.kind, button: button, source: source, gesture: gesture, error: e))
      answer(token, .failure(e))
      return
    }
    instances[instance.id] = instance
    let intent: IntentSpec
    let requested: Bool?
    switch plan(instance, definition, valueWasRead: valueWasRead, forcing: forcing) {
    case .fail(let error):
      announce(.failed(kind: instance.kind, button: button, source: source, gesture: gesture, error: error))
      log(.warning, "\(definition.displayName): \(error.message)")
      answer(token, .failure(error))
      return
    case .busy:
      announce(.busy(kind: instance.kind, button: button, source: source, gesture: gesture))
      answer(
        token,
        .failure(ProtocolError(.busy, "\(definition.displayName) is still performing; not queued")))
      return
    case .readFirst:
      // Never read yet: the hold came before the start-up read answered, or this
      // instance is first seen in this request (`perform --kind K led=...`). Read it
      // now and decide from the answer; meanwhile the instance counts as busy.
      readingToPerform.insert(instance.id)
      read(
        instance, definition,
        .perform(
          PerformRequest(
            instance: instance, button: button, source: source, gesture: gesture, pressTime: pressTime, reply: token)))
      return
    case .run(let planned, let value):
      intent = planned
      requested = value
    }
    var job = PerformJob(
      id: takeJobID(), kind: instance.kind, instance: instance, intent: intent, controlType: definition.type,
      requestedValue: requested, button: button, source: source, pressTime: pressTime, gesture: gesture)
    job.endsMomentaryHold = endsMomentaryHold
    inFlight[instance.id] = InFlight(job: job, definition: definition, reply: token)
    announce(
      .performing(kind: instance.kind, button: button, source: source, gesture: gesture, value: requested))
    if case .state = intent {
      // No outside effect: the store is the whole truth, so the perform is done at once.
      performFinished(job: job.id, .succeeded)
    } else {
      effects.append(.startCommand(job))
    }
  }

  /// The value read a perform waited for answered: it decides now.
  private mutating func performAfterRead(_ request: PerformRequest) {
    readingToPerform.remove(request.instance.id)
    perform(
      request.instance, button: request.button, source: request.source, gesture: request.gesture,
      pressTime: request.pressTime, forcing: nil, valueWasRead: true, reply: request.reply)
  }

  /// What a perform of `instance` would do now, decided from the current state alone.
  private enum Plan {
    case run(IntentSpec, requestedValue: Bool?)
    case busy
    /// The toggle's value was never read: read it, then decide.
    case readFirst
    case fail(ProtocolError)
  }

  private func plan(
    _ instance: ControlInstance, _ definition: ControlDefinition, valueWasRead: Bool, forcing: Bool? = nil
  ) -> Plan {
    guard instance.isConfigured else {
      return .fail(
        ProtocolError(
          .notConfigured, ControlPresentation.hint(for: definition, missing: instance.missing, value: .unknown)))
    }
    if inFlight[instance.id] != nil || readingToPerform.contains(instance.id) { return .busy }
    var requested: Bool?
    if definition.type == .toggle, let forcing {
      requested = forcing
    } else if definition.type == .toggle {
      switch value(of: instance, definition) {
      case .on: requested = false
      case .off: requested = true
      case .unknown where !valueWasRead: return .readFirst
      case .unknown:
        return .fail(ProtocolError(.unavailable, "the current value of \(definition.displayName) is not known"))
      case .unavailable(let reason):
        return .fail(
          ProtocolError(.unavailable, "the current value of \(definition.displayName) is unavailable: \(reason)"))
      }
    }
    let intent: IntentSpec
    do {
      intent = try definition.intent.substituting(instance.values)
    } catch {
      return .fail(ProtocolError(.failed, "cannot build the intent: \(error.message)"))
    }
    if case .provider = intent, providers[instance.kind] == nil {
      return .fail(ProtocolError(.unavailable, "no provider application is connected for \(instance.kind)"))
    }
    return .run(intent, requestedValue: requested)
  }

  /// The daemon finished running job `id`'s intent.
  private mutating func performFinished(job id: UInt64, _ outcome: PerformOutcome) {
    guard let entry = inFlight.first(where: { $0.value.job.id == id }) else {
      log(.warning, "finished intent \(id) is not in flight (a bug; ignored)")
      return
    }
    let job = entry.value.job
    let instanceID = entry.key
    switch outcome {
    case .failed(let code, let reason):
      inFlight[instanceID] = nil
      let error = ProtocolError(code, reason)
      announce(
        .failed(kind: job.kind, button: job.button, source: job.source, gesture: job.gesture, error: error))
      answer(entry.value.reply, .failure(error))
      runQueuedMomentary(instanceID)
    case .succeeded:
      guard let definition = configuration.control(kind: job.kind) else {
        if job.endsMomentaryHold {
          // A reload removed the control while its off ran: the off is done, and announced
          // from the definition it ran (nothing is stored for a control that is gone).
          inFlight[instanceID] = nil
          let snapshot = ControlPresentation(
            definition: entry.value.definition, instance: job.instance, value: .off
          ).snapshot(performing: false, providerMissing: false)
          announce(.performed(button: job.button, source: job.source, gesture: job.gesture, control: snapshot))
          runQueuedMomentary(instanceID)
          return
        }
        finishPerform(instanceID)
        return
      }
      if let requested = job.requestedValue, case .store = definition.value ?? .store(initial: false) {
        // Announced once saved (``saved(_:_:)``): not stored is not changed.
        let key = job.instance.storeKey
        let old = storeValues[key]
        storeValues[key] = requested
        save(then: .perform(instanceID: instanceID, key: key, old: old, requested: requested))
      } else if definition.type == .toggle {
        inFlight[instanceID]?.rereading = true
        read(job.instance, definition, .finishPerform(instanceID: instanceID))
      } else {
        finishPerform(instanceID)
      }
    }
  }

  /// A store-backed perform's save answered.
  private mutating func storedPerform(
    _ instanceID: String, key: String, old: Bool?, requested: Bool, _ error: ProtocolError?
  ) {
    guard let entry = inFlight[instanceID] else { return }
    let job = entry.job
    if let error {
      // Not stored is not changed: the value stays, and so does what was announced.
      storeValues[key] = old
      inFlight[instanceID] = nil
      announce(.failed(kind: job.kind, button: job.button, source: job.source, gesture: job.gesture, error: error))
      answer(entry.reply, .failure(error))
      runQueuedMomentary(instanceID)
      return
    }
    if let definition = configuration.control(kind: job.kind) {
      setValue(ControlValue(requested), of: job.instance, definition)
    }
    finishPerform(instanceID)
  }

  private mutating func finishPerform(_ instanceID: String) {
    guard let entry = inFlight.removeValue(forKey: instanceID) else { return }
    defer { runQueuedMomentary(instanceID) }
    guard let definition = configuration.control(kind: entry.job.kind) else {
      // A reload removed the definition while its intent ran: the intent finished, but
      // there is no control left to show. Say so rather than leaving the request unanswered.
      let error = ProtocolError(
        .unknownKind,
        "\(entry.job.kind) was removed from the configuration while its intent ran; the intent finished")
      announce(
        .failed(
          kind: entry.job.kind, button: entry.job.button, source: entry.job.source, gesture: entry.job.gesture,
          error: error))
      answer(entry.reply, .failure(error))
      return
    }
    let snapshot = self.snapshot(entry.job.instance, definition)
    announce(
      .performed(button: entry.job.button, source: entry.job.source, gesture: entry.job.gesture, control: snapshot))
    answer(entry.reply, .success(snapshot))
  }

  private mutating func takeJobID() -> UInt64 {
    defer { nextJobID += 1 }
    return nextJobID
  }

  // MARK: - Values

  /// The current value of `instance` as the engine knows it (unknown before the first read).
  public func value(of instance: ControlInstance) -> ControlValue {
    guard let definition = configuration.control(kind: instance.kind) else { return .unknown }
    return value(of: instance, definition)
  }

  private func value(of instance: ControlInstance, _ definition: ControlDefinition) -> ControlValue {
    if case .store(let initial) = definition.value ?? .store(initial: false) {
      return ControlValue(storeValues[instance.storeKey] ?? initial)
    }
    return values[instance.id] ?? .unknown
  }

  /// Re-reads `instance`'s value: store-backed ones at once, others through the daemon.
  /// Buttons have no value. `waiter` learns when the value is known.
  private mutating func refresh(_ instance: ControlInstance, then waiter: ReadWaiter? = nil) {
    guard let definition = configuration.control(kind: instance.kind), definition.type == .toggle else {
      if let waiter { resume(waiter) }
      return
    }
    instances[instance.id] = instance
    read(instance, definition, waiter)
  }

  private mutating func read(_ instance: ControlInstance, _ definition: ControlDefinition, _ waiter: ReadWaiter?) {
    let provider: ValueProviderSpec
    do {
      provider = try (definition.value ?? .store(initial: false)).substituting(instance.values)
    } catch {
      setValue(.unavailable(reason: error.message), of: instance, definition)
      if let waiter { resume(waiter) }
      return
    }
    switch provider {
    case .store:
      // The store is authoritative; reading it cannot fail. Announce once so lists learn it.
      setValue(value(of: instance, definition), of: instance, definition, force: values[instance.id] == nil)
      if let waiter { resume(waiter) }
      return
    case .provider where providers[instance.kind] == nil:
      setValue(.unavailable(reason: "no provider application is connected"), of: instance, definition)
      if let waiter { resume(waiter) }
      return
    default:
      break
    }
    if !instance.isConfigured {
      setValue(.unavailable(reason: "not configured"), of: instance, definition)
      if let waiter { resume(waiter) }
      return
    }
    // One read per instance at a time: later callers wait for the same answer.
    if let pending = readsByInstance[instance.id] {
      if let waiter { pendingReads[pending]?.waiters.append(waiter) }
      return
    }
    let id = takeJobID()
    readsByInstance[instance.id] = id
    pendingReads[id] = PendingRead(instanceID: instance.id, waiters: waiter.map { [$0] } ?? [])
    effects.append(.readValue(ValueReadJob(id: id, kind: instance.kind, instance: instance, provider: provider)))
  }

  /// The value a waiter waited for is known: it goes on.
  private mutating func resume(_ waiter: ReadWaiter) {
    switch waiter {
    case .reply(let token): reply(token, .success(.done))
    case .perform(let request): performAfterRead(request)
    case .finishPerform(let instanceID): finishPerform(instanceID)
    case .reload(let id):
      guard var reload = pendingReloads[id] else { return }
      reload.remaining -= 1
      if reload.remaining > 0 {
        pendingReloads[id] = reload
      } else {
        pendingReloads[id] = nil
        reply(reload.reply, .success(.controls(controlList(kind: reload.kind))))
      }
    }
  }

  /// The daemon read a value for job `id` (`.unavailable` when the provider failed or timed out).
  private mutating func valueRead(job id: UInt64, _ value: ControlValue) {
    guard let pending = pendingReads.removeValue(forKey: id) else {
      log(.warning, "value read \(id) is not pending (a bug; ignored)")
      return
    }
    readsByInstance[pending.instanceID] = nil
    if let instance = instances[pending.instanceID], let definition = configuration.control(kind: instance.kind) {
      setValue(value, of: instance, definition)
    }
    for waiter in pending.waiters { resume(waiter) }
  }

  private mutating func setValue(
    _ new: ControlValue, of instance: ControlInstance, _ definition: ControlDefinition, force: Bool = false
  ) {
    let old = values[instance.id]
    values[instance.id] = new
    guard force || old != new else { return }
    if case .unavailable(let reason) = new {
      log(.warning, "\(definition.displayName) is unavailable: \(reason)")
    }
    announce(.state(control: snapshot(instance, definition), buttons: buttons(showing: instance)))
  }

  /// `set`: an application changed the source of truth. Only store-backed toggles have
  /// the store as their truth; for the others (exec, file, provider) the request is
  /// `unsupported` rather than silently answered with whatever a re-read says.
  private mutating func set(_ instance: ControlInstance, to newValue: Bool, reply token: RequestToken?) {
    guard let definition = configuration.control(kind: instance.kind) else {
      answer(token, .failure(ProtocolError(.unknownKind, "no control of kind \"\(instance.kind)\"")))
      return
    }
    guard definition.type == .toggle else {
      answer(token, .failure(ProtocolError(.unsupported, "\(instance.kind) is a button: it has no value to set")))
      return
    }
    let provider = definition.value ?? .store(initial: false)
    guard case .store = provider else {
      answer(
        token,
        .failure(
          ProtocolError(
            .unsupported,
            "\(definition.displayName) takes its value from its \(provider.typeName) value provider, not the "
              + "store: perform it to change it, or reload to re-read it")))
      return
    }
    instances[instance.id] = instance
    let old = storeValues[instance.storeKey]
    if old != newValue {
      storeValues[instance.storeKey] = newValue
      save(then: .set(instance, old: old, new: newValue, reply: token))
      return
    }
    finishSet(instance, newValue, reply: token)
  }

  private mutating func finishSet(_ instance: ControlInstance, _ newValue: Bool, reply token: RequestToken?) {
    guard let definition = configuration.control(kind: instance.kind) else { return }
    setValue(ControlValue(newValue), of: instance, definition)
    answer(token, .success(snapshot(instance, definition)))
  }

  /// `reload`: re-runs the value providers of `kind`'s instances (all kinds when nil),
  /// assigned or not, and announces what changed (`ControlCenter.reloadControls(ofKind:)`);
  /// the reply lists the controls once every read answered.
  private mutating func reload(kind: String?, reply token: RequestToken?) {
    let targets = valueInstances().filter { kind == nil || $0.kind == kind }
    guard !targets.isEmpty else {
      reply(token, .success(.controls(controlList(kind: kind))))
      return
    }
    let id = takeJobID()
    pendingReloads[id] = PendingReload(remaining: targets.count, kind: kind, reply: token)
    for instance in targets { refresh(instance, then: .reload(id)) }
  }

  // MARK: - Saving

  /// Saves the state; nobody waits for the outcome (the daemon reports and retries a failure).
  private mutating func save() {
    effects.append(.save(persistentState, awaiting: nil))
  }

  /// Saves the state and goes on with `continuation` once the outcome is known
  /// (``EngineInput/saved(_:_:)``, which the daemon hands back before anything else).
  private mutating func save(then continuation: SaveContinuation) {
    let token = takeJobID()
    awaitedSaves[token] = continuation
    effects.append(.save(persistentState, awaiting: SaveToken(rawValue: token)))
  }

  private mutating func saved(_ token: SaveToken, _ error: ProtocolError?) {
    guard let continuation = awaitedSaves.removeValue(forKey: token.rawValue) else {
      log(.warning, "save \(token.rawValue) is not awaited (a bug; ignored)")
      return
    }
    switch continuation {
    case .perform(let instanceID, let key, let old, let requested):
      storedPerform(instanceID, key: key, old: old, requested: requested, error)
    case .set(let instance, let old, let new, let token):
      if let error {
        storeValues[instance.storeKey] = old
        answer(token, .failure(error))
      } else {
        finishSet(instance, new, reply: token)
      }
    case .assign(let instance, let button, let gesture, let momentary, let oldStored, let oldAssigned, let token):
      if let error {
        (runtimeAssignments[button], gestureAssignments[button]) = (oldStored, oldAssigned)
        reply(token, .failure(error))
      } else {
        if let control = finishAssign(instance, to: button, gesture: gesture, momentary: momentary) {
          reply(token, .success(.assigned(button: button, control: control)))
        } else {
          reply(token, .failure(ProtocolError(.unknownKind, "no control of kind \"\(instance.kind)\"")))
        }
      }
    }
  }

  // MARK: - Providers

  /// `client` becomes the provider for `kinds` (the socket's `register`): their values
  /// are read from it and their `provider` intents sent to it. Every kind must exist and
  /// use a provider (intent or value), and none may be provided by another client; on an
  /// error nothing is recorded. The reply comes once they are recorded and before their
  /// values are asked for, so the client gets its answer before the first value request.
  private mutating func registerProvider(_ client: ProviderClient, kinds: [String], reply token: RequestToken?) {
    do throws(ProtocolError) {
      try checkRegistration(client, kinds: kinds)
    } catch {
      reply(token, .failure(error))
      return
    }
    for kind in kinds { providers[kind] = client }
    reply(token, .success(.registered(kinds: kinds)))
    for instance in valueInstances() where kinds.contains(instance.kind) { refresh(instance) }
  }

  private func checkRegistration(_ client: ProviderClient, kinds: [String]) throws(ProtocolError) {
    guard !kinds.isEmpty else { throw ProtocolError(.badRequest, "register needs at least one kind") }
    for kind in kinds {
      guard let definition = configuration.control(kind: kind) else {
        throw ProtocolError(.unknownKind, "no control of kind \"\(kind)\"")
      }
      var usesProvider = false
      if case .provider = definition.intent { usesProvider = true }
      if case .provider? = definition.value { usesProvider = true }
      guard usesProvider else {
        throw ProtocolError(.notProvider, "\(kind) has no `provider` intent or value provider")
      }
      // A client that closed is no longer recorded (``providerDisconnected(_:)``), so a
      // recorded one is connected.
      if let other = providers[kind], other != client {
        throw ProtocolError(.alreadyRegistered, "another client already provides \(kind)")
      }
    }
  }

  /// The client providing `kind`, if one is connected: where the adapter sends `kind`'s
  /// provider requests.
  public func provider(of kind: String) -> ProviderClient? { providers[kind] }

  /// The kinds `client` provides, sorted.
  public func kinds(providedBy client: ProviderClient) -> [String] {
    providers.filter { $0.value == client }.map(\.key).sorted()
  }

  /// `client`'s connection closed: the kinds it provided are no longer provided and their
  /// values become unavailable (never a guess).
  private mutating func providerDisconnected(_ client: ProviderClient) {
    let kinds = self.kinds(providedBy: client)
    guard !kinds.isEmpty else { return }
    for kind in kinds { providers[kind] = nil }
    for instance in knownInstances() where kinds.contains(instance.kind) {
      guard let definition = configuration.control(kind: instance.kind), case .provider = definition.value else {
        continue
      }
      setValue(.unavailable(reason: "the provider application disconnected"), of: instance, definition)
    }
  }

  // MARK: - Assignment

  /// Assigns `instance` to `gesture` of `button` at run time and persists it (`assign`).
  /// `momentary` is only for the hold of a toggle: `bad-request` for another gesture,
  /// `unsupported` for a button-type control. The other gestures of the button keep
  /// their assignments. On `state-not-saved` nothing changed.
  private mutating func assign(
    _ instance: ControlInstance, to button: String, gesture: Gesture, momentary: Bool, reply token: RequestToken?
  ) {
    do throws(ProtocolError) {
      try checkAssignment(instance, to: button, gesture: gesture, momentary: momentary)
    } catch {
      reply(token, .failure(error))
      return
    }
    let assignment = GestureAssignment(instance: instance, momentary: momentary)
    var stored = StateSnapshot.Assignment(assignment)
    stored.replaces = configuration.assignment(of: button, gesture: gesture).map(StateSnapshot.Replaced.init)
    let (oldStored, oldAssigned) = (runtimeAssignments[button], gestureAssignments[button])
    runtimeAssignments[button, default: [:]][gesture] = stored
    gestureAssignments[button, default: [:]][gesture] = assignment
    save(
      then: .assign(
        instance, button: button, gesture: gesture, momentary: momentary, oldStored: oldStored,
        oldAssigned: oldAssigned, reply: token))
  }

  private func checkAssignment(
    _ instance: ControlInstance, to button: String, gesture: Gesture, momentary: Bool
  ) throws(ProtocolError) {
    guard configuration.button(named: button) != nil else {
      throw ProtocolError(.unknownButton, "no button named \"\(button)\"")
    }
    guard let definition = configuration.control(kind: instance.kind) else {
      throw ProtocolError(.unknownKind, "no control of kind \"\(instance.kind)\"")
    }
    if momentary {
      guard gesture == .hold else {
        throw ProtocolError(.badRequest, "only a hold can be momentary, not a \(gesture)")
      }
      guard definition.type == .toggle else {
        throw ProtocolError(
          .unsupported,
          "only a toggle can be momentary (on while held, off at the release): \(instance.kind) is a button")
      }
    }
  }

  /// An assignment was saved: it is announced and takes effect.
  private mutating func finishAssign(
    _ instance: ControlInstance, to button: String, gesture: Gesture, momentary: Bool
  ) -> ControlSnapshot? {
    guard let definition = configuration.control(kind: instance.kind) else { return nil }
    let assignment = GestureAssignment(instance: instance, momentary: momentary)
    instances[instance.id] = instance
    let snap = snapshot(instance, definition)
    announce(.assigned(button: button, gesture: gesture, momentary: momentary, control: snap))
    log(
      .notice, "button \(button)\(gesture == .hold ? "" : " \(gesture)") is now assigned \(assignment)")
    syncGestures()
    // The press holding a momentary toggle on goes on, but no longer holds it.
    if gesture == .hold { endMomentaryHoldsNoLongerAssigned(why: "an assign request") }
    if values[instance.id] == nil { refresh(instance) }
    return snap
  }

  /// The instance assigned to the hold of `button`, if any (what `perform` of a button performs).
  public func assignment(of button: String) -> ControlInstance? { gestureAssignments[button]?[.hold]?.instance }

  /// What `gesture` of `button` performs now (run time or file), if anything.
  public func assignment(of button: String, gesture: Gesture) -> GestureAssignment? {
    gestureAssignments[button]?[gesture]
  }

  /// Every gesture `button` has an assignment for (empty: unassigned or no such button).
  public func assignments(of button: String) -> [Gesture: GestureAssignment] { gestureAssignments[button] ?? [:] }

  private mutating func resolveAssignments(announce: Bool) {
    var resolved: [String: [Gesture: GestureAssignment]] = [:]
    for button in configuration.buttons {
      var stored = runtimeAssignments[button.name] ?? [:]
      for gesture in Gesture.allCases {
        let fromFile = configuration.assignment(of: button.name, gesture: gesture)
        let subject = gesture == .hold ? "button \(button.name)" : "button \(button.name) \(gesture)"
        if let run = stored[gesture] {
          // The operator edited this gesture's assignment in the file since the run-time
          // assignment was made: the file wins again.
          if run.replaces != fromFile.map(StateSnapshot.Replaced.init) {
            stored[gesture] = nil
            log(.notice, "\(subject): the configuration file's assignment replaces the run-time one")
          } else if let definition = configuration.control(kind: run.kind),
            !run.momentary || (gesture == .hold && definition.type == .toggle),
            let instance = try? ControlInstance(
              definition: definition,
              configuration: JSONObject(run.configuration.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
          {
            resolved[button.name, default: [:]][gesture] = GestureAssignment(
              instance: instance, momentary: run.momentary)
            continue
          } else {
            stored[gesture] = nil
            log(.warning, "\(subject): stored assignment \(run.kind) no longer fits the configuration; dropped")
          }
        }
        if let fromFile { resolved[button.name, default: [:]][gesture] = fromFile }
      }
      runtimeAssignments[button.name] = stored.isEmpty ? nil : stored
    }
    runtimeAssignments = runtimeAssignments.filter { configuration.button(named: $0.key) != nil }
    let old = gestureAssignments
    gestureAssignments = resolved
    for gestures in resolved.values { for a in gestures.values { instances[a.instance.id] = a.instance } }
    guard announce else { return }
    for button in configuration.buttons {
      for gesture in Gesture.allCases where old[button.name]?[gesture] != resolved[button.name]?[gesture] {
        let now = resolved[button.name]?[gesture]
        let snap = now.flatMap { a in configuration.control(kind: a.instance.kind).map { snapshot(a.instance, $0) } }
        self.announce(
          .assigned(button: button.name, gesture: gesture, momentary: now?.momentary ?? false, control: snap))
      }
    }
  }

  // MARK: - Configuration

  /// Replaces the configuration (SIGHUP, `reload` of everything) with one that already
  /// validated. A button whose configuration did not change keeps its recognizer, so a
  /// press or hold in progress on it goes on as if nothing happened (the input layer keeps
  /// its device binding by the same rule, ``Configuration/unchangedButtons(since:)``). On a
  /// button that changed or went away, a press that was announced and not yet decided is
  /// `cancelled` (reason `reload`); a hold already performed or a key never announced
  /// ends silently, and a release waiting for its debounce is confirmed. Store values and
  /// run-time assignments that still fit are kept.
  private mutating func apply(_ generation: ConfigurationGeneration, at time: MonotonicInstant) {
    let new = generation.configuration
    let unchanged = generation.unchangedButtons
    // The command readied for a press was built from the old configuration.
    if preparedFor != nil {
      preparedFor = nil
      effects.append(.discardPrepared)
    }
    let carried = Set(unchanged.values)
    // A virtual press on a button that changes ends like a real one: the abandon below
    // cancels it (reason `reload`); its key-up is never delivered.
    let carriedNames = Set(carried.map { configuration.buttons[$0].name })
    virtualPresses = virtualPresses.filter { carriedNames.contains($0.key) }
    for index in 0..<recognizers.count where !carried.contains(index) {
      handle(recognizers.abandon(button: index, at: time), button: index)
    }
    self.generation = generation
    recognizers = ControlEngine.makeRecognizers(new, keeping: unchanged, from: recognizers)
    // Instances are rebuilt from what the user chose against the new definitions (a
    // default may have changed, and with it the instance); those that no longer fit go.
    var rebuilt: [String: ControlInstance] = [:]
    for old in instances.values {
      guard let definition = new.control(kind: old.kind),
        let instance = try? ControlInstance(definition: definition, configuration: old.configuration)
      else { continue }
      rebuilt[instance.id] = instance
    }
    instances = rebuilt
    // Values read under the old definitions are re-read by `start()` below; until then
    // only those of instances that still exist are shown.
    values = values.filter { rebuilt[$0.key] != nil }
    resolveAssignments(announce: true)
    // A press that goes on (its button did not change) may now hold a control that changed,
    // went away or is no longer its hold's: that one goes off now, not at the release.
    endMomentaryHoldsNoLongerAssigned(why: "the reload")
    _ = reconcileStoreValues()
    save()
    syncGestures()
    start()
  }

  /// Fresh recognizers for `configuration`'s buttons, except those in `unchanged` (new
  /// index → old index), which carry over from `old` with whatever press they are in.
  private static func makeRecognizers(
    _ configuration: Configuration, keeping unchanged: [Int: Int] = [:], from old: ButtonRecognizers? = nil
  ) -> ButtonRecognizers {
    ButtonRecognizers(
      configuration.buttons.enumerated().map { index, b in
        if let old, let from = unchanged[index], from < old.count { return old[from] }
        return ButtonRecognizers.Button(
          keyCode: b.keyCode,
          // A loaded configuration's buttons always have valid settings (the loader checked them).
          settings: (try? b.recognizerSettings()) ?? .default)
      })
  }

  // MARK: - Snapshots

  /// The wire picture of `instance` right now.
  public func snapshot(_ instance: ControlInstance) -> ControlSnapshot? {
    configuration.control(kind: instance.kind).map { snapshot(instance, $0) }
  }

  private func snapshot(_ instance: ControlInstance, _ definition: ControlDefinition) -> ControlSnapshot {
    var providerMissing = false
    if case .provider = definition.intent { providerMissing = providers[definition.kind] == nil }
    return ControlPresentation(definition: definition, instance: instance, value: value(of: instance, definition))
      .snapshot(performing: inFlight[instance.id] != nil, providerMissing: providerMissing)
  }

  /// The hint a short press on `button` announces (every gesture's, joined).
  public func hint(button: String) -> String { joinedHint(gestureHints(button: button), button: button) }

  /// `status`: every button (or one), its key, devices, timing and each gesture's control.
  /// `devices` names the devices serving a button index: the input layer owns that.
  public func buttonStatus(_ name: String? = nil, devices: (Int) -> [String] = { _ in [] }) -> [ButtonStatus] {
    configuration.buttons.enumerated().compactMap { index, b in
      guard name == nil || b.name == name else { return nil }
      let gestures = gestureAssignments[b.name] ?? [:]
      var status = ButtonStatus(
        name: b.name, key: b.keyName, devices: devices(index).sorted(), holdThreshold: b.holdThreshold,
        doublePressWindow: b.doublePressWindow, longHoldThreshold: b.longHoldThreshold,
        control: gestures[.hold].flatMap { snapshot($0.instance) }, momentary: gestures[.hold]?.momentary ?? false,
        doublePress: gestures[.doublePress].flatMap { snapshot($0.instance) },
        longHold: gestures[.longHold].flatMap { snapshot($0.instance) })
      status.feedback = configuration.feedback[b.name] ?? []
      return status
    }
  }

  /// `list`: every definition with its known instances (an unconfigured default instance
  /// for definitions nobody has configured yet), like `ControlCenter.currentControls()`.
  public func controlList(kind: String? = nil) -> [ControlSnapshot] {
    var out: [ControlSnapshot] = []
    for definition in configuration.controls where kind == nil || definition.kind == kind {
      out += listedInstances(of: definition).map { snapshot($0, definition) }
    }
    return out
  }

  /// The instances `list` shows for `definition`: the known ones, or its default
  /// (unconfigured) instance when none is known yet.
  private func listedInstances(of definition: ControlDefinition) -> [ControlInstance] {
    let known = knownInstances().filter { $0.kind == definition.kind }
    if known.isEmpty, let bare = try? ControlInstance(definition: definition, configuration: [:] as JSONObject) {
      return [bare]
    }
    return known
  }

  /// Every instance whose value is read at start, on `reload` and when a provider
  /// connects: the assigned ones (even unconfigured: they then show why they are
  /// unavailable) and every other listed instance that is configured (an unassigned
  /// one the user never configured has no value to read: its hint says what is missing).
  private func valueInstances() -> [ControlInstance] {
    var seen = Set<String>()
    var out: [ControlInstance] = []
    for instance in assignedInstances() where seen.insert(instance.id).inserted { out.append(instance) }
    for definition in configuration.controls where definition.type == .toggle {
      for instance in listedInstances(of: definition) where instance.isConfigured && seen.insert(instance.id).inserted {
        out.append(instance)
      }
    }
    return out
  }

  /// Resolves a kind and a JSON configuration to an instance, with protocol errors.
  public func instance(kind: String, configuration json: JSONObject?) throws(ProtocolError) -> ControlInstance {
    guard let definition = configuration.control(kind: kind) else {
      throw ProtocolError(.unknownKind, "no control of kind \"\(kind)\"")
    }
    if json == nil, let assigned = assignedInstances().first(where: { $0.kind == kind }) {
      return assigned
    }
    do {
      return try ControlInstance(definition: definition, configuration: json ?? [:])
    } catch {
      throw ProtocolError(.invalidConfiguration, error.description)
    }
  }

  /// Buttons with their assigned instance, in configuration order.
  public var buttonNames: [String] { configuration.buttons.map(\.name) }

  /// What must be persisted: run-time assignments and store-backed values.
  public var persistentState: StateSnapshot {
    StateSnapshot(assignments: runtimeAssignments, values: storeValues)
  }

  /// The instances assigned to any gesture, in configuration order (per button: hold,
  /// doublePress, longHold), each once.
  private func assignedInstances() -> [ControlInstance] {
    var seen = Set<String>()
    var out: [ControlInstance] = []
    for b in configuration.buttons {
      for gesture in Gesture.allCases {
        guard let i = gestureAssignments[b.name]?[gesture]?.instance, seen.insert(i.id).inserted else { continue }
        out.append(i)
      }
    }
    return out
  }

  private func knownInstances() -> [ControlInstance] {
    var seen = Set<String>()
    var out: [ControlInstance] = []
    for i in assignedInstances() + instances.values.sorted(by: { $0.id < $1.id }) where seen.insert(i.id).inserted {
      out.append(i)
    }
    return out
  }

  /// The buttons where `instance` is assigned to any gesture (a `state` event's `buttons`).
  private func buttons(showing instance: ControlInstance) -> [String] {
    configuration.buttons.map(\.name).filter { name in
      gestureAssignments[name]?.values.contains { $0.instance.id == instance.id } ?? false
    }
  }

}
