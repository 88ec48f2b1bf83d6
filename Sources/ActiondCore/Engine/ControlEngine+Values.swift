// SPDX-License-Identifier: Apache-2.0
/// Values: reads through the value providers (and what waits for them), `set`, `reload`,
/// the saves the engine waits for, and the provider clients.
extension ControlEngine {
  // MARK: - Values

  /// The current value of `instance` as the engine knows it (unknown before the first read).
  public func value(of instance: ControlInstance) -> ControlValue {
    guard let definition = configuration.control(kind: instance.kind) else { return .unknown }
    return runtime.value(of: instance, definition)
  }

  /// Re-reads `instance`'s value: store-backed ones at once, others through the daemon.
  /// Buttons have no value. `waiter` learns when the value is known.
  mutating func refresh(_ instance: ControlInstance, then waiter: ControlRuntime.ReadWaiter? = nil) {
    guard let definition = configuration.control(kind: instance.kind), definition.type == .toggle else {
      if let waiter { resume(waiter) }
      return
    }
    runtime.instances[instance.id] = instance
    read(instance, definition, waiter)
  }

  mutating func read(_ instance: ControlInstance, _ definition: ControlDefinition, _ waiter: ControlRuntime.ReadWaiter?)
  {
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
      setValue(
        runtime.value(of: instance, definition), of: instance, definition, force: runtime.values[instance.id] == nil)
      if let waiter { resume(waiter) }
      return
    case .provider where runtime.providers[instance.kind] == nil:
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
    if let pending = runtime.readsByInstance[instance.id] {
      if let waiter { runtime.pendingReads[pending]?.waiters.append(waiter) }
      return
    }
    let id = runtime.takeJobID()
    runtime.readsByInstance[instance.id] = id
    runtime.pendingReads[id] = ControlRuntime.PendingRead(instanceID: instance.id, waiters: waiter.map { [$0] } ?? [])
    effects.append(.readValue(ValueReadJob(id: id, kind: instance.kind, instance: instance, provider: provider)))
  }

  /// The value a waiter waited for is known: it goes on.
  mutating func resume(_ waiter: ControlRuntime.ReadWaiter) {
    switch waiter {
    case .reply(let token): reply(token, .success(.done))
    case .perform(let request): performAfterRead(request)
    case .finishPerform(let instanceID): finishPerform(instanceID)
    case .reload(let id):
      guard var reload = runtime.pendingReloads[id] else { return }
      reload.remaining -= 1
      if reload.remaining > 0 {
        runtime.pendingReloads[id] = reload
      } else {
        runtime.pendingReloads[id] = nil
        reply(reload.reply, .success(.controls(controlList(kind: reload.kind))))
      }
    }
  }

  /// The daemon read a value for job `id` (`.unavailable` when the provider failed or timed out).
  mutating func valueRead(job id: UInt64, _ value: ControlValue) {
    guard let pending = runtime.pendingReads.removeValue(forKey: id) else {
      log(.warning, "value read \(id) is not pending (a bug; ignored)")
      return
    }
    runtime.readsByInstance[pending.instanceID] = nil
    if let instance = runtime.instances[pending.instanceID], let definition = configuration.control(kind: instance.kind)
    {
      setValue(value, of: instance, definition)
    }
    for waiter in pending.waiters { resume(waiter) }
  }

  mutating func setValue(
    _ new: ControlValue, of instance: ControlInstance, _ definition: ControlDefinition, force: Bool = false
  ) {
    let old = runtime.values[instance.id]
    runtime.values[instance.id] = new
    guard force || old != new else { return }
    if case .unavailable(let reason) = new {
      log(.warning, "\(definition.displayName) is unavailable: \(reason)")
    }
    announce(.state(control: runtime.snapshot(instance, definition), buttons: buttons(showing: instance)))
  }

  /// `set`: an application changed the source of truth. Only store-backed toggles have
  /// the store as their truth; for the others (exec, file, provider) the request is
  /// `unsupported` rather than silently answered with whatever a re-read says.
  mutating func set(_ instance: ControlInstance, to newValue: Bool, reply token: RequestToken?) {
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
    runtime.instances[instance.id] = instance
    let old = runtime.storeValues[instance.storeKey]
    if old != newValue {
      runtime.storeValues[instance.storeKey] = newValue
      save(then: .set(instance, old: old, new: newValue, reply: token))
      return
    }
    finishSet(instance, newValue, reply: token)
  }

  mutating func finishSet(_ instance: ControlInstance, _ newValue: Bool, reply token: RequestToken?) {
    guard let definition = configuration.control(kind: instance.kind) else { return }
    setValue(ControlValue(newValue), of: instance, definition)
    answer(token, .success(runtime.snapshot(instance, definition)))
  }

  /// `reload`: re-runs the value providers of `kind`'s instances (all kinds when nil),
  /// assigned or not, and announces what changed (`ControlCenter.reloadControls(ofKind:)`);
  /// the reply lists the controls once every read answered.
  mutating func reload(kind: String?, reply token: RequestToken?) {
    let targets = valueInstances().filter { kind == nil || $0.kind == kind }
    guard !targets.isEmpty else {
      reply(token, .success(.controls(controlList(kind: kind))))
      return
    }
    let id = runtime.takeJobID()
    runtime.pendingReloads[id] = ControlRuntime.PendingReload(remaining: targets.count, kind: kind, reply: token)
    for instance in targets { refresh(instance, then: .reload(id)) }
  }

  // MARK: - Saving

  // An input's changes are saved together: its effects hold at most one `save`, of the
  // state after the whole input, where the input last asked for a save (``requestSave()``,
  // ``emitSave()``). Two saves in one input (two holds at one deadline, a reload that ends
  // a momentary hold) would each carry the state as it was when asked for; when the first
  // failed and its change was undone, the second still held that change and wrote it
  // (issue 32). One save of the final state holds nothing the engine undoes without
  // undoing it all, and what its answer does next is a new input with its own save.

  /// Saves the state; nobody waits for the outcome (the daemon reports and retries a failure).
  mutating func save() {
    requestSave()
  }

  /// Saves the state and goes on with `continuation` once the outcome is known
  /// (``EngineInput/saved(_:_:)``, which the daemon hands back before anything else).
  mutating func save(then continuation: ControlRuntime.SaveContinuation) {
    requestSave()
    saveContinuations.append(continuation)
  }

  /// Moves the input's one save to here: after everything the input asked for so far, so
  /// what announces a change still comes where the change was made (a double press's
  /// `performed` before its release). ``emitSave()`` fills it in.
  mutating func requestSave() {
    if let index = saveIndex { effects.remove(at: index) }
    saveIndex = effects.count
    effects.append(.save(.empty, awaiting: nil))
  }

  /// Fills in the input's save, if it asked for one: the state now, with a token when a
  /// change waits for it.
  mutating func emitSave() {
    guard let index = saveIndex else { return }
    saveIndex = nil
    var token: SaveToken?
    if !saveContinuations.isEmpty {
      let id = runtime.takeJobID()
      runtime.awaitedSaves[id] = saveContinuations
      saveContinuations = []
      token = SaveToken(rawValue: id)
    }
    effects[index] = .save(persistentState, awaiting: token)
  }

  mutating func saved(_ token: SaveToken, _ error: ProtocolError?) {
    guard let continuations = runtime.awaitedSaves.removeValue(forKey: token.rawValue) else {
      log(.warning, "save \(token.rawValue) is not awaited (a bug; ignored)")
      return
    }
    if error != nil {
      // Not stored is not changed: every change the save held is undone before anything
      // is said, newest first (two changes of one key come back to the first one's old value).
      for continuation in continuations.reversed() { undo(continuation) }
    }
    for continuation in continuations { finishSaved(continuation, error) }
  }

  /// Puts back what the change that asked for a failed save replaced.
  mutating func undo(_ continuation: ControlRuntime.SaveContinuation) {
    switch continuation {
    case .perform(_, let key, let old, _): runtime.storeValues[key] = old
    case .set(let instance, let old, _, _): runtime.storeValues[instance.storeKey] = old
    case .assign(_, _, _, _, let undo, _): table.undo(undo)
    }
  }

  /// Goes on with a change once its save answered (`error`: it failed and was undone).
  mutating func finishSaved(_ continuation: ControlRuntime.SaveContinuation, _ error: ProtocolError?) {
    switch continuation {
    case .perform(let instanceID, _, _, let requested):
      storedPerform(instanceID, requested: requested, error)
    case .set(let instance, _, let new, let token):
      if let error {
        answer(token, .failure(error))
      } else {
        finishSet(instance, new, reply: token)
      }
    case .assign(let instance, let button, let gesture, let momentary, _, let token):
      if let error {
        reply(token, .failure(error))
      } else if let control = finishAssign(instance, to: button, gesture: gesture, momentary: momentary) {
        reply(token, .success(.assigned(button: button, control: control)))
      } else {
        reply(token, .failure(ProtocolError(.unknownKind, "no control of kind \"\(instance.kind)\"")))
      }
    }
  }

  // MARK: - Providers

  /// `client` becomes the provider for `kinds` (the socket's `register`): their values
  /// are read from it and their `provider` intents sent to it. Every kind must exist and
  /// use a provider (intent or value), and none may be provided by another client; on an
  /// error nothing is recorded. The reply comes once they are recorded and before their
  /// values are asked for, so the client gets its answer before the first value request.
  mutating func registerProvider(_ client: ProviderClient, kinds: [String], reply token: RequestToken?) {
    do throws(ProtocolError) {
      try runtime.checkRegistration(client, kinds: kinds, in: configuration)
    } catch {
      reply(token, .failure(error))
      return
    }
    for kind in kinds { runtime.providers[kind] = client }
    reply(token, .success(.registered(kinds: kinds)))
    for instance in valueInstances() where kinds.contains(instance.kind) { refresh(instance) }
  }

  /// The client providing `kind`, if one is connected: where the daemon sends `kind`'s
  /// provider requests.
  public func provider(of kind: String) -> ProviderClient? { runtime.providers[kind] }

  /// The kinds `client` provides, sorted.
  public func kinds(providedBy client: ProviderClient) -> [String] { runtime.kinds(providedBy: client) }

  /// `client`'s connection closed: the kinds it provided are no longer provided and their
  /// values become unavailable (never a guess).
  mutating func providerDisconnected(_ client: ProviderClient) {
    let kinds = self.kinds(providedBy: client)
    guard !kinds.isEmpty else { return }
    for kind in kinds { runtime.providers[kind] = nil }
    for instance in knownInstances() where kinds.contains(instance.kind) {
      guard let definition = configuration.control(kind: instance.kind), case .provider = definition.value else {
        continue
      }
      setValue(.unavailable(reason: "the provider application disconnected"), of: instance, definition)
    }
  }
}
