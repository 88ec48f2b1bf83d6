// SPDX-License-Identifier: Apache-2.0
/// Buttons: the moments of a press (from ``ButtonSessions``) become announcements with
/// hints, performs of the assigned gestures, and momentary toggles held on while the key
/// is down.
extension ControlEngine {
  // MARK: - Sessions in, moments out

  /// A key event from a device serving the button named `button`.
  mutating func keyEvent(button: String, code: UInt16, value: Int32, at time: MonotonicInstant) {
    sessionEvents.removeAll(keepingCapacity: true)
    sessions.keyEvent(button: button, code: code, value: value, at: time, into: &sessionEvents)
    handleSessionEvents()
  }

  /// The engine's timer fired at `now`.
  mutating func deadlineReached(at now: MonotonicInstant) {
    armedDeadline = nil
    sessionEvents.removeAll(keepingCapacity: true)
    sessions.deadlineReached(at: now, into: &sessionEvents)
    handleSessionEvents()
  }

  /// What the sessions reported into the reused buffer, in order.
  mutating func handleSessionEvents() {
    let events = sessionEvents  // shares the buffer: nothing here appends to it
    handle(events)
  }

  /// The earliest deadline of a recognizer or a virtual press (what the timer is armed for).
  public var nextDeadline: MonotonicInstant? { sessions.nextDeadline }

  /// A device serving `button` was opened; `keyDown` is the key's state at that moment
  /// (a key already down is not a press). Which device serves which button is the input
  /// layer's to know (`buttonStatus(_:devices:)` asks it); the engine only needs the key.
  mutating func deviceBound(button: String, keyDown: Bool, at time: MonotonicInstant) {
    handle(sessions.deviceAppeared(button: button, keyDown: keyDown, at: time))
  }

  /// The device serving `button` vanished (unplugged, read error), or the kernel released
  /// its keys itself because it is going away: a pending hold is cancelled (`device-lost`).
  mutating func deviceUnbound(button: String, at time: MonotonicInstant) {
    handle(sessions.deviceLost(button: button, at: time))
  }

  /// Events of the device serving `button` were dropped (SYN_DROPPED); the key is now `keyDown`.
  mutating func resynchronized(button: String, keyDown: Bool, at time: MonotonicInstant) {
    handle(sessions.resynchronized(button: button, keyDown: keyDown, at: time))
  }

  /// `press`: a virtual press of `button`'s key (``ButtonSessions/simulatePress(button:_:at:)``).
  mutating func simulatePress(
    button: String, _ press: VirtualPress, at time: MonotonicInstant
  ) -> Result<Void, VirtualPressRefusal> {
    switch sessions.simulatePress(button: button, press, at: time) {
    case .success(let events):
      handle(events)
      return .success(())
    case .failure(let refusal):
      return .failure(refusal)
    }
  }

  /// What the sessions reported, in order.
  mutating func handle(_ events: [ButtonSessions.Event]) {
    for event in events {
      switch event {
      case .output(let button, let out): handle(out, button: button)
      case .log(let level, let message): log(level, message)
      }
    }
  }

  // MARK: - Moments

  mutating func handle(_ out: PressRecognizer.Output, button index: Int) {
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
      case .released(let at, let heldFor):
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
              .keepHolding, for: definition, missing: long.instance.missing,
              value: runtime.value(of: long.instance, definition)
            ),
            deadline: pressedAt + sessions.settings(of: index).longHoldThreshold)
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

  /// Hands the daemon the exec job `hold` would run for this press if nothing changed
  /// before the threshold, so that the command is ready when it comes
  /// (``EngineEffect/prepareCommand(_:)``). Decided as the hold will decide it, from
  /// the current state alone; nothing is recorded.
  mutating func prepareHold(_ hold: GestureAssignment?, button: String, pressTime: MonotonicInstant) {
    guard let hold, let definition = configuration.control(kind: hold.instance.kind),
      case .run(let intent, let requested) = runtime.plan(
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
  func gestureHints(button: String) -> [GestureHint] {
    guard let index = sessions.index(of: button) else { return [] }
    let settings = sessions.settings(of: index)
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
        kind, for: definition, missing: assigned.instance.missing,
        value: runtime.value(of: assigned.instance, definition))
      hints.append(GestureHint(gesture: gesture, kind: assigned.instance.kind, hint: text))
    }
    return hints
  }

  func joinedHint(_ hints: [GestureHint], button: String) -> String {
    hints.isEmpty ? ControlPresentation.unassignedHint(button: button) : ControlPresentation.joined(hints.map(\.hint))
  }

  /// Tells every recognizer which gestures its button has now (after assignments changed).
  /// A double-press window in progress on a button that lost the gesture ends as the
  /// short press it was.
  mutating func syncGestures() {
    for (index, button) in configuration.buttons.enumerated() {
      if let out = sessions.setGestures(button: index, table.gestureSet(button: button.name)) {
        handle(out, button: index)
      }
    }
    // The timer follows at the end of the input (``handle(_:)``): one decision per input.
  }

  // MARK: - Momentary toggles

  /// A momentary toggle held on by a button's press: it goes off when the press ends.
  struct MomentaryHold {
    var instance: ControlInstance
    /// The definition it was turned on with: its off is that definition's off, also when
    /// a reload changed or removed the control meanwhile.
    var definition: ControlDefinition
    var pressTime: MonotonicInstant
  }

  /// A momentary perform that arrived while the instance's intent ran: it runs as soon as
  /// that one finished (the one exception to "busy, not queued": an off must never be lost).
  struct QueuedMomentary {
    /// Kept here: a reload may remove the control while it waits, and its off still runs.
    var instance: ControlInstance
    var on: Bool
    var button: String
    var pressTime: MonotonicInstant
    /// An off's definition (``MomentaryHold/definition``); nil: the configuration's.
    var definition: ControlDefinition?
  }

  /// The daemon is stopping: every momentary toggle held on by a press goes off now, while
  /// commands may still start (the stop spares these offs, ``PerformJob/endsMomentaryHold``).
  /// An off waiting for its on's command runs once that command ended: the stop ends it.
  mutating func endMomentaryHolds() {
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
  mutating func endMomentary(button: String, why: String? = nil) {
    guard let held = momentaryHolds.removeValue(forKey: button) else { return }
    if let why { log(.notice, "button \(button): \(held.instance.kind) goes off: \(why)") }
    performMomentary(
      held.instance, on: false, button: button, pressTime: held.pressTime, definition: held.definition)
  }

  /// A reload or an `assign` changed what `button`'s hold performs or the definition of the
  /// momentary toggle it holds on: that toggle goes off now, with the definition it was
  /// turned on with. The press goes on; its release does nothing more.
  mutating func endMomentaryHoldsNoLongerAssigned(why: String) {
    for (button, held) in momentaryHolds.sorted(by: { $0.key < $1.key }) {
      let still = table.assignment(of: button, gesture: .hold)
      let current = configuration.control(kind: held.instance.kind)
      if current != held.definition {
        endMomentary(
          button: button, why: current == nil ? "\(why) removed the control" : "\(why) changed the control")
      } else if still?.momentary != true || still?.instance.id != held.instance.id {
        endMomentary(button: button, why: "\(why) assigned another control to the button's hold")
      }
    }
  }

  mutating func performMomentary(
    _ instance: ControlInstance, on: Bool, button: String, pressTime: MonotonicInstant,
    definition: ControlDefinition? = nil
  ) {
    if runtime.inFlight[instance.id] != nil || runtime.readingToPerform.contains(instance.id) {
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
  mutating func runQueuedMomentary(_ instanceID: String) {
    guard let queued = queuedMomentary.removeValue(forKey: instanceID) else { return }
    performMomentary(
      queued.instance, on: queued.on, button: queued.button, pressTime: queued.pressTime, definition: queued.definition)
  }
}
