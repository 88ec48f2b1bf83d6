// SPDX-License-Identifier: Apache-2.0
/// Perform: a gesture or a request becomes a command to start (``EngineEffect/startCommand(_:)``);
/// its end becomes the resulting state, announced (`performing`, `performed`, `failed`, `busy`).
extension ControlEngine {
  // MARK: - Perform

  /// Performs `instance` as a hold would. The reply (socket performs) is the resulting
  /// control or the error; button gestures announce instead.
  /// `pressTime`: the key-down of the press that asked for it, `gesture` which gesture
  /// it was (both nil for socket performs).
  mutating func perform(
    _ instance: ControlInstance, button: String?, source: PerformSource, gesture: Gesture? = nil,
    pressTime: MonotonicInstant? = nil, reply token: RequestToken?
  ) {
    perform(
      instance, button: button, source: source, gesture: gesture, pressTime: pressTime, forcing: nil,
      valueWasRead: false, reply: token)
  }

  /// `forcing`: a momentary toggle's requested value (on at the hold, off at its end),
  /// run whatever the current value is; nil: a toggle requests the opposite of its value.
  mutating func perform(
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
    runtime.instances[instance.id] = instance
    let intent: IntentSpec
    let requested: Bool?
    switch runtime.plan(instance, definition, valueWasRead: valueWasRead, forcing: forcing) {
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
      runtime.readingToPerform.insert(instance.id)
      read(
        instance, definition,
        .perform(
          ControlRuntime.PerformRequest(
            instance: instance, button: button, source: source, gesture: gesture, pressTime: pressTime, reply: token)))
      return
    case .run(let planned, let value):
      intent = planned
      requested = value
    }
    var job = PerformJob(
      id: runtime.takeJobID(), kind: instance.kind, instance: instance, intent: intent, controlType: definition.type,
      requestedValue: requested, button: button, source: source, pressTime: pressTime, gesture: gesture)
    job.endsMomentaryHold = endsMomentaryHold
    runtime.inFlight[instance.id] = ControlRuntime.InFlight(job: job, definition: definition, reply: token)
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
  mutating func performAfterRead(_ request: ControlRuntime.PerformRequest) {
    runtime.readingToPerform.remove(request.instance.id)
    perform(
      request.instance, button: request.button, source: request.source, gesture: request.gesture,
      pressTime: request.pressTime, forcing: nil, valueWasRead: true, reply: request.reply)
  }

  /// The daemon finished running job `id`'s intent.
  mutating func performFinished(job id: UInt64, _ outcome: PerformOutcome) {
    guard let entry = runtime.inFlight.first(where: { $0.value.job.id == id }) else {
      log(.warning, "finished intent \(id) is not in flight (a bug; ignored)")
      return
    }
    let job = entry.value.job
    let instanceID = entry.key
    switch outcome {
    case .failed(let code, let reason):
      runtime.inFlight[instanceID] = nil
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
          runtime.inFlight[instanceID] = nil
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
        let old = runtime.storeValues[key]
        runtime.storeValues[key] = requested
        save(then: .perform(instanceID: instanceID, key: key, old: old, requested: requested))
      } else if definition.type == .toggle {
        runtime.inFlight[instanceID]?.rereading = true
        read(job.instance, definition, .finishPerform(instanceID: instanceID))
      } else {
        finishPerform(instanceID)
      }
    }
  }

  /// A store-backed perform's save answered (on failure, ``saved(_:_:)`` already put the
  /// old value back).
  mutating func storedPerform(_ instanceID: String, requested: Bool, _ error: ProtocolError?) {
    guard let entry = runtime.inFlight[instanceID] else { return }
    let job = entry.job
    if let error {
      // Not stored is not changed: the value stays, and so does what was announced.
      runtime.inFlight[instanceID] = nil
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

  mutating func finishPerform(_ instanceID: String) {
    guard let entry = runtime.inFlight.removeValue(forKey: instanceID) else { return }
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
    let snapshot = runtime.snapshot(entry.job.instance, definition)
    announce(
      .performed(button: entry.job.button, source: entry.job.source, gesture: entry.job.gesture, control: snapshot))
    answer(entry.reply, .success(snapshot))
  }
}
