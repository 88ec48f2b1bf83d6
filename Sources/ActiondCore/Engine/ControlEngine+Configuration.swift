// SPDX-License-Identifier: Apache-2.0
/// Configuration: `assign`, a new configuration generation, and the answers to questions
/// (`status`, `list`, snapshots, the persistent state), read from the engine's value.
extension ControlEngine {
  // MARK: - Assignment

  /// Assigns `instance` to `gesture` of `button` at run time and persists it (`assign`).
  /// `momentary` is only for the hold of a toggle: `bad-request` for another gesture,
  /// `unsupported` for a button-type control. The other gestures of the button keep
  /// their assignments. On `state-not-saved` nothing changed.
  mutating func assign(
    _ instance: ControlInstance, to button: String, gesture: Gesture, momentary: Bool, reply token: RequestToken?
  ) {
    do throws(ProtocolError) {
      try checkAssignment(instance, to: button, gesture: gesture, momentary: momentary)
    } catch {
      reply(token, .failure(error))
      return
    }
    let undo = table.assign(
      GestureAssignment(instance: instance, momentary: momentary), to: button, gesture: gesture, in: configuration)
    save(then: .assign(instance, button: button, gesture: gesture, momentary: momentary, undo: undo, reply: token))
  }

  func checkAssignment(
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
  mutating func finishAssign(
    _ instance: ControlInstance, to button: String, gesture: Gesture, momentary: Bool
  ) -> ControlSnapshot? {
    guard let definition = configuration.control(kind: instance.kind) else { return nil }
    let assignment = GestureAssignment(instance: instance, momentary: momentary)
    runtime.instances[instance.id] = instance
    let snap = runtime.snapshot(instance, definition)
    announce(.assigned(button: button, gesture: gesture, momentary: momentary, control: snap))
    log(
      .notice, "button \(button)\(gesture == .hold ? "" : " \(gesture)") is now assigned \(assignment)")
    syncGestures()
    // The press holding a momentary toggle on goes on, but no longer holds it.
    if gesture == .hold { endMomentaryHoldsNoLongerAssigned(why: "an assign request") }
    if runtime.values[instance.id] == nil { refresh(instance) }
    return snap
  }

  /// The instance assigned to the hold of `button`, if any (what `perform` of a button performs).
  public func assignment(of button: String) -> ControlInstance? {
    table.assignment(of: button, gesture: .hold)?.instance
  }

  /// What `gesture` of `button` performs now (run time or file), if anything.
  public func assignment(of button: String, gesture: Gesture) -> GestureAssignment? {
    table.assignment(of: button, gesture: gesture)
  }

  /// Every gesture `button` has an assignment for (empty: unassigned or no such button).
  public func assignments(of button: String) -> [Gesture: GestureAssignment] { table.assignments(of: button) }

  /// Resolves the assignment table against the configuration
  /// (``AssignmentTable/resolve(_:)``); with `announce`, every gesture whose assignment
  /// changed is announced (`assigned`).
  mutating func resolveAssignments(announce: Bool) {
    let (old, notes) = table.resolve(configuration)
    for (level, message) in notes { log(level, message) }
    for gestures in table.current.values { for a in gestures.values { runtime.instances[a.instance.id] = a.instance } }
    guard announce else { return }
    for button in configuration.buttons {
      for gesture in Gesture.allCases
      where old[button.name]?[gesture] != table.assignment(of: button.name, gesture: gesture) {
        let now = table.assignment(of: button.name, gesture: gesture)
        let snap = now.flatMap { a in
          configuration.control(kind: a.instance.kind).map { runtime.snapshot(a.instance, $0) }
        }
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
  mutating func apply(_ generation: ConfigurationGeneration, at time: MonotonicInstant) {
    let new = generation.configuration
    let unchanged = generation.unchangedButtons
    // The command readied for a press was built from the old configuration.
    if preparedFor != nil {
      preparedFor = nil
      effects.append(.discardPrepared)
    }
    // Buttons that change end their press while the old configuration names them.
    handle(sessions.endChanged(keeping: unchanged, at: time))
    self.generation = generation
    sessions.adopt(new, keeping: unchanged)
    // Instances are rebuilt from what the user chose against the new definitions (a
    // default may have changed, and with it the instance); those that no longer fit go.
    // Values read under the old definitions are re-read by `start()` below; until then
    // only those of instances that still exist are shown.
    runtime.rebuildInstances(for: new)
    resolveAssignments(announce: true)
    // A press that goes on (its button did not change) may now hold a control that changed,
    // went away or is no longer its hold's: that one goes off now, not at the release.
    endMomentaryHoldsNoLongerAssigned(why: "the reload")
    _ = reconcileStoreValues()
    save()
    syncGestures()
    start()
  }

  // MARK: - Snapshots

  /// The wire picture of `instance` right now.
  public func snapshot(_ instance: ControlInstance) -> ControlSnapshot? {
    configuration.control(kind: instance.kind).map { runtime.snapshot(instance, $0) }
  }

  /// The hint a short press on `button` announces (every gesture's, joined).
  public func hint(button: String) -> String { joinedHint(gestureHints(button: button), button: button) }

  /// `status`: every button (or one), its key, devices, timing and each gesture's control.
  /// `devices` names the devices serving a button (by name): the input layer owns that.
  public func buttonStatus(_ name: String? = nil, devices: (String) -> [String] = { _ in [] }) -> [ButtonStatus] {
    configuration.buttons.compactMap { b in
      guard name == nil || b.name == name else { return nil }
      let gestures = table.assignments(of: b.name)
      var status = ButtonStatus(
        name: b.name, key: b.keyName, devices: devices(b.name).sorted(), holdThreshold: b.holdThreshold,
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
      out += listedInstances(of: definition).map { runtime.snapshot($0, definition) }
    }
    return out
  }

  /// The instances `list` shows for `definition`: the known ones, or its default
  /// (unconfigured) instance when none is known yet.
  func listedInstances(of definition: ControlDefinition) -> [ControlInstance] {
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
  func valueInstances() -> [ControlInstance] {
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

  /// What must be persisted: run-time assignments and store-backed values.
  public var persistentState: StateSnapshot {
    StateSnapshot(assignments: table.runtime, values: runtime.storeValues)
  }

  /// The instances assigned to any gesture, in configuration order, each once.
  func assignedInstances() -> [ControlInstance] { table.assignedInstances(configuration) }

  func knownInstances() -> [ControlInstance] {
    var seen = Set<String>()
    var out: [ControlInstance] = []
    for i in assignedInstances() + runtime.instances.values.sorted(by: { $0.id < $1.id })
    where seen.insert(i.id).inserted {
      out.append(i)
    }
    return out
  }

  /// The buttons where `instance` is assigned to any gesture (a `state` event's `buttons`).
  func buttons(showing instance: ControlInstance) -> [String] { table.buttons(showing: instance, in: configuration) }
}
