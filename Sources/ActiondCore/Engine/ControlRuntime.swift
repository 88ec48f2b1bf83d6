// SPDX-License-Identifier: Apache-2.0
/// The control runtime: what the engine knows about control instances while the daemon
/// runs. Their values (read from providers, or the store's), the commands running for
/// them, the reads and saves waited for, the provider clients. Pure bookkeeping and
/// decisions from the state alone (``plan(_:_:valueWasRead:forcing:)``, snapshots); the
/// engine announces what changes.
struct ControlRuntime {
  /// Every instance seen (assigned, listed, named in a request), by id.
  var instances: [String: ControlInstance] = [:]
  /// Values read from providers (exec, file, provider), by instance id.
  var values: [String: ControlValue] = [:]
  /// Store-backed values by ``ControlInstance/storeKey``.
  var storeValues: [String: Bool] = [:]
  /// Set when loading migrated or pruned store values: the start saves them.
  var storeValuesChanged = false
  /// The perform running for each instance, by instance id (at most one: another is `busy`).
  var inFlight: [String: InFlight] = [:]
  /// Instances whose value is being read before a perform can decide what to request.
  var readingToPerform: Set<String> = []
  /// Value reads handed to the daemon, by job id, and the one per instance.
  var pendingReads: [UInt64: PendingRead] = [:]
  var readsByInstance: [String: UInt64] = [:]
  /// Kind → the client that registered as its provider: the one record of who provides
  /// what. The daemon reports registrations and closed connections; it asks here which
  /// client to send a provider request to.
  var providers: [String: ControlEngine.ProviderClient] = [:]
  /// Saves the engine waits for, by token: what to do when the outcome is known, for each
  /// change the save holds (an input's changes are saved together), in the order made.
  var awaitedSaves: [UInt64: [SaveContinuation]] = [:]
  /// Reloads waiting for their reads, by id: how many are left and who to answer.
  var pendingReloads: [UInt64: PendingReload] = [:]
  private var nextJobID: UInt64 = 1

  init(storeValues: [String: Bool]) {
    self.storeValues = storeValues
  }

  /// A perform handed to the daemon and not yet finished.
  struct InFlight {
    var job: ControlEngine.PerformJob
    /// The definition the intent was planned from: a momentary toggle's off is announced
    /// from it when a reload removed the control while it ran.
    var definition: ControlDefinition
    var reply: RequestToken?
    /// Set once the intent succeeded and the value is being re-read.
    var rereading = false
  }

  struct PendingRead {
    var instanceID: String
    var waiters: [ReadWaiter]
  }

  /// What waits for a value read (data, not a closure: the engine is a value).
  enum ReadWaiter {
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
  struct PerformRequest {
    var instance: ControlInstance
    var button: String?
    var source: PerformSource
    var gesture: Gesture?
    var pressTime: MonotonicInstant?
    var reply: RequestToken?
  }

  struct PendingReload {
    var remaining: Int
    var kind: String?
    var reply: RequestToken?
  }

  /// What a change does once its save succeeded, or how it is undone when it failed.
  enum SaveContinuation {
    /// A store-backed perform: the value `requested` was stored under `key` (was `old`).
    case perform(instanceID: String, key: String, old: Bool?, requested: Bool)
    /// `set`: the value was stored under the instance's key (was `old`).
    case set(ControlInstance, old: Bool?, new: Bool, reply: RequestToken?)
    /// `assign`: what the assignment replaced, put back on failure.
    case assign(
      ControlInstance, button: String, gesture: Gesture, momentary: Bool, undo: AssignmentTable.Undo,
      reply: RequestToken?)
  }

  /// A fresh id for a job, a read, a save or a reload.
  mutating func takeJobID() -> UInt64 {
    defer { nextJobID += 1 }
    return nextJobID
  }

  /// The value of `instance` as known now: the store's for store-backed toggles (or the
  /// initial value), else the last read (unknown before the first).
  func value(of instance: ControlInstance, _ definition: ControlDefinition) -> ControlValue {
    if case .store(let initial) = definition.value ?? .store(initial: false) {
      return ControlValue(storeValues[instance.storeKey] ?? initial)
    }
    return values[instance.id] ?? .unknown
  }

  /// Whether a perform of `instanceID` runs or waits for its value.
  func isBusy(_ instanceID: String) -> Bool { inFlight[instanceID] != nil || readingToPerform.contains(instanceID) }

  /// The wire picture of `instance` right now.
  func snapshot(_ instance: ControlInstance, _ definition: ControlDefinition) -> ControlSnapshot {
    var providerMissing = false
    if case .provider = definition.intent { providerMissing = providers[definition.kind] == nil }
    return ControlPresentation(definition: definition, instance: instance, value: value(of: instance, definition))
      .snapshot(performing: inFlight[instance.id] != nil, providerMissing: providerMissing)
  }

  /// What a perform of `instance` would do now, decided from the current state alone.
  enum Plan {
    case run(IntentSpec, requestedValue: Bool?)
    case busy
    /// The toggle's value was never read: read it, then decide.
    case readFirst
    case fail(ProtocolError)
  }

  /// `forcing`: a momentary toggle's requested value; nil: a toggle requests the
  /// opposite of its value. `valueWasRead`: an unknown value was just read (and is still
  /// unknown): fail rather than read again.
  func plan(
    _ instance: ControlInstance, _ definition: ControlDefinition, valueWasRead: Bool, forcing: Bool? = nil
  ) -> Plan {
    guard instance.isConfigured else {
      return .fail(
        ProtocolError(
          .notConfigured, ControlPresentation.hint(for: definition, missing: instance.missing, value: .unknown)))
    }
    if isBusy(instance.id) { return .busy }
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

  /// Brings the store values in line with `configuration`; the log lines of what was
  /// dropped, and whether anything changed. `named`: every instance the configuration
  /// names (assignments and each definition's default instance).
  ///
  /// - State files before store keys keyed a value by instance id, defaults included
  ///   (`kind{led=green}` for an assignment that gave no `led`). For every named
  ///   instance such a value is copied to the instance's store key unless one is there.
  /// - Values of kinds the configuration no longer defines are dropped (logged), so the
  ///   state file does not keep what nothing can show. Values of kinds that still exist are
  ///   kept whatever their configuration: the user may assign that configuration again.
  mutating func reconcileStoreValues(
    _ configuration: Configuration, named: [ControlInstance]
  ) -> (changed: Bool, log: [String]) {
    var changed = false
    var log: [String] = []
    for instance in named.sorted(by: { $0.id < $1.id }) where instance.storeKey != instance.id {
      guard storeValues[instance.storeKey] == nil, let legacy = storeValues[instance.id] else { continue }
      storeValues[instance.storeKey] = legacy
      changed = true
    }
    for key in storeValues.keys.sorted() where configuration.control(kind: ControlInstance.kind(ofStoreKey: key)) == nil
    {
      storeValues[key] = nil
      changed = true
      log.append("dropped the stored value of \(key): its kind is no longer configured")
    }
    return (changed, log)
  }

  /// A new configuration: instances are rebuilt from what the user chose against the
  /// new definitions (a default may have changed, and with it the instance); those that
  /// no longer fit go, and so do their values (the start re-reads the rest).
  mutating func rebuildInstances(for configuration: Configuration) {
    var rebuilt: [String: ControlInstance] = [:]
    for old in instances.values {
      guard let definition = configuration.control(kind: old.kind),
        let instance = try? ControlInstance(definition: definition, configuration: old.configuration)
      else { continue }
      rebuilt[instance.id] = instance
    }
    instances = rebuilt
    values = values.filter { rebuilt[$0.key] != nil }
  }

  /// Whether `client` may become the provider of `kinds` in `configuration`: every kind
  /// exists, uses a provider (intent or value) and is provided by no other client.
  func checkRegistration(
    _ client: ControlEngine.ProviderClient, kinds: [String], in configuration: Configuration
  ) throws(ProtocolError) {
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
      // A client that closed is no longer recorded (the engine's providerDisconnected),
      // so a recorded one is connected.
      if let other = providers[kind], other != client {
        throw ProtocolError(.alreadyRegistered, "another client already provides \(kind)")
      }
    }
  }

  /// The kinds `client` provides, sorted.
  func kinds(providedBy client: ControlEngine.ProviderClient) -> [String] {
    providers.filter { $0.value == client }.map(\.key).sorted()
  }
}
