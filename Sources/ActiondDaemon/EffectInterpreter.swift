// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import Glibc

/// The one interpreter of the engine's effects: it holds the engine (a value), hands it
/// every input (``submit(_:)``) and carries out the ``EngineEffect``s it returns with the
/// event loop, the process runner, the socket server, the feedback lights and the state
/// store. It decides nothing: every outcome goes back to the engine as a new input.
///
/// Order (docs/architecture.md): the engine's, with what a turn announces batched: it
/// reaches each subscriber in one send, at the end of the turn or right before an effect
/// that does I/O of its own (a spawn, readying one, a value read, a save), so that nobody
/// waits for that I/O (at a deadline `held` and `performing` go out before the spawn).
/// The announcements' log lines follow their send; the feedback follows the send too: at
/// the end of the turn, or, in a turn that starts a command, its quick writes (the
/// threshold's tick on a light taken at the key-down) between the send and the spawn and
/// the rest once the command started (a sysfs LED's take waits for the kernel). A save the engine
/// waits for is answered (``EngineInput/saved(_:_:)``) right away, before the next
/// effect. Inputs that arrive while effects are carried out (a completion reported
/// synchronously) wait in a queue: the engine is never entered from inside itself.
///
/// Owns the engine's one timer, the retry of a failed save and the users every command
/// may run as (resolved from each configuration generation). ``Daemon`` creates it and
/// tells it when the daemon stops.
final class EffectInterpreter {
  /// The engine: read it for questions (`status`, `list`); change it only through ``submit(_:)``.
  private(set) var engine: ControlEngine
  /// The configuration generation in force: the engine's.
  var generation: ConfigurationGeneration { engine.generation }
  /// Where announcements reach subscribers and provider requests their clients; nil
  /// until the daemon made it (the engine announces nothing before).
  var server: ControlServer?
  /// Where the buttons' moments and hold values are shown on their lights.
  let feedback: FeedbackDriver
  /// Inputs that arrived while effects were being carried out.
  private var queue: [EngineInput] = []
  private var handling = false
  /// Open ``turn(_:)`` calls: while one is open, announcements wait in the socket server's
  /// batch until ``sendAnnounced()`` or the end of the outermost turn.
  private var turnDepth = 0
  /// The log lines of the effects being carried out (announcements and the engine's own),
  /// written after the send of what was announced before them, in order, and at the
  /// latest at the end of the input.
  private var pendingLogs: [LogRecord] = []
  /// The input's feedback and hold values, shown once what it announced is sent.
  private var pendingFeedback: [EngineEffect] = []
  /// The feedback's writes were held by a command's spawn in this turn
  /// (``showFeedbackBeforeSpawn()``): the rest go out at its end.
  private var heldForSpawn = false
  /// Who waits for the reply of each request, by token.
  private var replies: [UInt64: (Result<EngineAnswer, ProtocolError>) -> Void] = [:]
  private var nextRequest: UInt64 = 1
  /// Called when the daemon is stopping and the last running command ended.
  var commandsEnded: () -> Void = {}

  private let loop: EventLoop
  private let logger: Logger
  private let store: StateStore
  private let runner: any ProcessRunning
  private let input: any InputSource
  /// The daemon's environment: intents get `LANG`, `LC_ALL` and `TZ` from it, nothing else.
  private let environment: [String: String]
  private var timer: TimerID?
  /// The clients' quiet before the engine's deadline (``clientQuiet``), until it fired.
  private var deadlineQuiet: QuietID?
  /// The clients' quiet after a command the deadline started, until it shows life.
  private var commandQuiet: (quiet: QuietID, token: UInt64)?
  private var nextCommandQuiet: UInt64 = 1
  /// True while the engine handles its deadline: the commands it starts then are a
  /// hold's (or another gesture's), started with a person's finger on the key.
  private var handlingDeadline = false
  /// Every `user` the configuration names, resolved when it was loaded: a command never
  /// waits for the name service on the loop.
  private var users: [String: Result<ProcessUser, SpawnFailure>] = [:]
  private var stopping = false
  /// The command a press's hold would run, readied at its key-down
  /// (``EngineEffect/prepareCommand(_:)``), until the hold runs it or the press ends.
  private var preparedHold: (job: ControlEngine.PerformJob, request: ProcessRequest)?
  /// Running offs of momentary toggles whose press ended (``ControlEngine/PerformJob/endsMomentaryHold``):
  /// a stop lets them finish rather than SIGTERMing them, within its bound.
  private var sparedRunsByJob: [UInt64: (run: ProcessRunID, kind: String)] = [:]
  var sparedRuns: Set<ProcessRunID> { Set(sparedRunsByJob.values.map(\.run)) }
  /// The kinds whose momentary off runs now, for the stop's log.
  var runningOffs: [String] { sparedRunsByJob.values.map(\.kind).sorted() }
  /// Pending retry of a failed save.
  private var saveRetry: TimerID?
  static let saveRetryInterval = TimeSpan.seconds(10)

  /// How long the socket clients wait around a button's deadline (a hold, a long hold,
  /// the end of a double-press window or of a debounce): from `before` ahead of it until
  /// it is handled, and after a command it started for at most `after`, or until that
  /// command's first output or its exit. Meanwhile the loop serves devices, timers,
  /// signals and commands only (``EventLoop/quiet(from:until:)``): busy clients cannot
  /// keep it running, so at the deadline it is asleep and woken at once, and the command
  /// gets the CPU. A client's request waits at most that long (docs/protocol.md,
  /// fairness). Zero spans turn either part off.
  struct ClientQuiet {
    var before: TimeSpan
    var after: TimeSpan
    static let standard = ClientQuiet(before: .milliseconds(50), after: .milliseconds(10))
  }
  var clientQuiet = ClientQuiet.standard

  /// An interpreter for `engine`, on the first generation: its users are resolved now.
  init(
    engine: ControlEngine, loop: EventLoop, logger: Logger, store: StateStore, runner: any ProcessRunning,
    input: any InputSource, feedback: FeedbackDriver, environment: [String: String]
  ) {
    self.engine = engine
    self.loop = loop
    self.logger = logger
    self.store = store
    self.runner = runner
    self.input = input
    self.feedback = feedback
    self.environment = environment
    users = EffectInterpreter.resolveUsers(engine.configuration, logger: logger)
    feedback.configure(engine.generation)
    // What restoring the state logged.
    turn { carryOut(self.engine.takeEffects()) }
  }

  // MARK: - Inputs

  /// Hands `input` to the engine and carries out its effects; an input that arrives while
  /// effects are carried out waits until they are done.
  func submit(_ input: EngineInput) {
    queue.append(input)
    guard !handling else { return }
    handling = true
    defer { handling = false }
    turn {
      while !queue.isEmpty {
        let next = queue.removeFirst()
        carryOut(engine.handle(next))
      }
      // The feedback after what the inputs announced: the subscriber does not wait for a
      // LED. A turn around this one (a reload's) sends its announcements with the rest.
      if turnDepth == 1 { server?.sendBatched() }
      writePendingLogs()
      showPendingFeedback()
      if heldForSpawn {
        heldForSpawn = false
        feedback.flushWrites()
      }
    }
  }

  private func showPendingFeedback() {
    let shown = pendingFeedback
    pendingFeedback.removeAll(keepingCapacity: true)
    for effect in shown { show(effect) }
  }

  /// Right before a command's spawn, once what the turn announced is sent: the turn's
  /// feedback so far goes to the lights, and of its writes the quick ones go out now (the
  /// threshold's tick: one write before the spawn, instead of after the child's exec, the
  /// spawn's milliseconds later); a write that would wait for the kernel (a sysfs LED's
  /// take) waits until the end of the turn, after the spawn (``FeedbackDriver/writeQuick()``).
  private func showFeedbackBeforeSpawn() {
    if !feedback.isHoldingWrites {
      feedback.holdWrites()
      heldForSpawn = true
    }
    showPendingFeedback()
    feedback.writeQuick()
  }

  /// Runs `body` as one turn of the loop: everything it announces reaches each subscriber
  /// in one send, when the outermost turn ends or before an effect that does I/O of its
  /// own (``sendAnnounced()``). Every input is one (``submit(_:)``); the daemon opens one
  /// around several (a reload: the new generation and `config-reloaded`).
  func turn(_ body: () -> Void) {
    let server = self.server  // the one whose batch this turn opened
    turnDepth += 1
    server?.beginBatch()
    body()
    turnDepth -= 1
    writePendingLogs()
    server?.endBatch()
  }

  /// Sends what the turn announced so far (one send per subscriber), then writes its log
  /// lines: before a spawn, a save or a read, which would make the subscriber wait.
  private func sendAnnounced() {
    server?.sendBatched()
    writePendingLogs()
  }

  private func writePendingLogs() {
    guard !pendingLogs.isEmpty else { return }
    for record in pendingLogs { logger.sink.write(record) }
    pendingLogs.removeAll(keepingCapacity: true)
  }

  /// Shows a feedback effect on the lights.
  private func show(_ effect: EngineEffect) {
    switch effect {
    case .feedback(let moment, let button): feedback.moment(moment, button: button)
    case .holdValue(let button, let isOn): feedback.valueChanged(button: button, isOn: isOn)
    default: break
    }
  }

  /// Submits `request`; `reply` gets the engine's answer (now or once its work is done).
  func request(_ request: EngineRequest, reply: @escaping (Result<EngineAnswer, ProtocolError>) -> Void) {
    let token = nextRequest
    nextRequest += 1
    replies[token] = reply
    submit(.request(request, token: RequestToken(rawValue: token)))
  }

  /// A new configuration generation, applied by every part in one call, in this order:
  /// the users its commands run as, the engine (which cancels presses on changed buttons
  /// and re-reads values), the input layer (changed buttons rebind), the feedback lights
  /// (changed outputs give their lights back, new ones show the hold values the engine
  /// knows). Each reads the same immutable generation; none keeps a copy of its own.
  func apply(_ generation: ConfigurationGeneration, at now: MonotonicInstant) {
    users = EffectInterpreter.resolveUsers(generation.configuration, logger: logger)
    submit(.configuration(generation, at: now))
    input.reconfigure(generation.configuration.buttons.map(ButtonBinding.init), keeping: generation.unchangedButtons)
    feedback.configure(generation)
    for button in generation.configuration.buttons where generation.configuration.feedback[button.name] != nil {
      feedback.valueChanged(button: button.name, isOn: engine.holdValue(button: button.name))
    }
  }

  /// Carries out `effects` in the documented order (see the type's comment).
  private func carryOut(_ effects: [EngineEffect]) {
    for effect in effects {
      switch effect {
      case .startCommand(let job):
        // At a deadline what was announced before it (`held`, `performing`) goes out now,
        // one send per subscriber, then the tick, then the spawn: the subscriber reads
        // `held` at once, the LED shows it, and the command waits for one send and one
        // write, not one per line nor a take of the LED.
        sendAnnounced()
        showFeedbackBeforeSpawn()
        runIntent(job)
      case .prepareCommand(let job):
        // At a key-down `pressed` goes out first: readying the command takes a while.
        sendAnnounced()
        prepareIntent(job)
      case .discardPrepared: discardPreparedHold()
      case .announce(let event): announceEffect(event)
      case .log(let level, let message):
        if level >= logger.minimumLevel { pendingLogs.append(LogRecord(level: level, message: message)) }
      case .feedback, .holdValue:
        if handling { pendingFeedback.append(effect) } else { show(effect) }
      case .armTimer(let deadline): armTimer(at: deadline)
      case .readValue(let job):
        sendAnnounced()
        readValue(job)
      case .save(let state, let token):
        sendAnnounced()
        let error = save(state)
        if let token { carryOut(engine.handle(.saved(token, error))) }
      case .reply(let token, let result):
        // Whoever waits may log (a provider's registration): after the engine's lines.
        writePendingLogs()
        replies.removeValue(forKey: token.rawValue)?(result)
      }
    }
  }

  /// The daemon is stopping: no hold is decided any more and no command is started.
  func stop() {
    stopping = true
    discardPreparedHold()
    if let timer { loop.cancel(timer) }
    timer = nil
    endQuiet()
  }

  private func endQuiet() {
    if let deadlineQuiet { loop.endQuiet(deadlineQuiet) }
    deadlineQuiet = nil
    endCommandQuiet()
  }

  /// Starts the quiet after a gesture's command (replacing an earlier one), ended early
  /// by that command's output or exit through `token`.
  private func beginCommandQuiet(token: UInt64) {
    endCommandQuiet()
    let now = loop.now()
    commandQuiet = (loop.quiet(from: now, until: now + clientQuiet.after), token)
  }

  private func endCommandQuiet() {
    if let commandQuiet { loop.endQuiet(commandQuiet.quiet) }
    commandQuiet = nil
  }

  /// The last save of a stop: no retry is pending afterwards.
  func saveFinalState() {
    if let saveRetry { loop.cancel(saveRetry) }
    saveRetry = nil
    do {
      try store.save(engine.persistentState)
    } catch {
      logger.error("cannot save the state to \(store.path): \(error)", event: "state-save-failed")
    }
  }

  /// Resolves every configured `user`; one that cannot be resolved is logged now and
  /// fails its commands (a user created later is found by the next reload).
  private static func resolveUsers(
    _ configuration: Configuration, logger: Logger
  ) -> [String: Result<ProcessUser, SpawnFailure>] {
    let users = UserResolution.resolveAll(in: configuration)
    for (_, resolved) in users.sorted(by: { $0.key < $1.key }) {
      if case .failure(let failure) = resolved {
        logger.warning("\(failure); commands configured to run as this user will fail", event: "user-unknown")
      }
    }
    return users
  }

  /// Runs `body` on the next loop iteration: a completion known at once is reported as
  /// the command's would be, on a later turn.
  private func later(_ body: @escaping () -> Void) {
    loop.schedule(at: loop.now()) { _ in body() }
  }
}

// MARK: - What the engine asks for

extension EffectInterpreter {
  /// Announces `event` to subscribers and the log: the daemon's own announcements, such
  /// as `config-reloaded`. Its line is logged now, in order with the daemon's other
  /// lines; its send waits for the end of the turn, if one is open.
  func announce(_ event: Event) {
    server?.broadcast(event)
    if let record = logRecord(of: event) { logger.sink.write(record) }
  }

  /// An announcement of the engine's: subscribers first (they wait for `pressed` and
  /// `held` with a person's finger on the key, the log does not), so its log line waits
  /// for the turn's send (``sendAnnounced()``).
  private func announceEffect(_ event: Event) {
    server?.broadcast(event)
    if let record = logRecord(of: event) { pendingLogs.append(record) }
  }

  private func logRecord(of event: Event) -> LogRecord? {
    guard EventLogLine.level(of: event) >= logger.minimumLevel else { return nil }
    let line = EventLogLine(event)
    return LogRecord(
      level: line.level, message: line.message, event: line.event,
      fields: line.fields.filter { !$0.value.isEmpty }.map { LogField($0.key, $0.value) })
  }

  private func prepareIntent(_ job: ControlEngine.PerformJob) {
    guard !stopping, case .exec(let spec) = job.intent,
      case .success(let request) = processRequest(spec, extra: job.environment)
    else { return }
    preparedHold = (job, request)
    runner.prepare(request)
  }

  private func discardPreparedHold() {
    guard preparedHold != nil else { return }
    preparedHold = nil
    runner.discardPrepared()
  }

  private func armTimer(at deadline: MonotonicInstant?) {
    if let timer { loop.cancel(timer) }
    timer = nil
    if let deadlineQuiet { loop.endQuiet(deadlineQuiet) }
    deadlineQuiet = nil
    guard let deadline, !stopping else { return }
    if clientQuiet.before > .zero { deadlineQuiet = loop.quiet(from: deadline - clientQuiet.before) }
    timer = loop.schedule(at: deadline) { [unowned self] now in
      self.timer = nil
      // Kept until the engine is done: a command it starts continues the quiet.
      let quiet = self.deadlineQuiet
      self.deadlineQuiet = nil
      // A release stamped before the deadline may still be unread: drain first, so the
      // kernel's timestamps decide, not the order in which the loop saw things.
      for button in self.engine.configuration.buttons { self.input.drain(button: button.name) }
      self.handlingDeadline = true
      // The tick is shown once `held` is sent: right before the hold's command starts
      // when it is a quick write, the rest after the spawn (``showFeedbackBeforeSpawn()``).
      // What the deadline announces goes to each subscriber in one send: `held` and
      // `performing` right before the spawn (``carryOut(_:)``), the rest at the end.
      self.submit(.deadline(at: now))
      self.handlingDeadline = false
      if let quiet { self.loop.endQuiet(quiet) }
    }
  }

  private func runIntent(_ job: ControlEngine.PerformJob) {
    let finished: (ControlEngine.PerformOutcome) -> Void = { [unowned self] in
      self.submit(.commandFinished(job: job.id, $0))
    }
    switch job.intent {
    case .exec(let spec):
      // A momentary toggle's off still runs during a stop: nothing stays on because
      // actiond stopped (docs/configuration.md, momentary holds).
      let id = run(request(for: job, spec), tag: job.kind, evenWhileStopping: job.endsMomentaryHold) {
        [unowned self] result in
        self.sparedRunsByJob[job.id] = nil
        self.submit(
          .commandFinished(job: job.id, EffectInterpreter.performOutcome(result.outcome, timeout: spec.timeout)))
      }
      if let id, job.endsMomentaryHold { sparedRunsByJob[job.id] = (id, job.kind) }
    case .write(let path, let on, let off):
      let text = job.requestedValue ?? true ? on : off
      let error = SmallFile.write(path, text)
      later { finished(error.map { .failed(code: .failed, reason: $0) } ?? .succeeded) }
    case .provider:
      guard let client = engine.provider(of: job.kind).map(ClientID.init), let server else {
        later { finished(.failed(code: .unavailable, reason: "no provider is connected")) }
        return
      }
      let body = ProviderRequest.Body.perform(
        kind: job.kind,
        configuration: job.instance.configurationJSON, value: job.requestedValue)
      server.sendProviderRequest(to: client, body, timeout: .seconds(10)) { outcome in
        switch outcome {
        case .replied: finished(.succeeded)
        case .failed(let e): finished(.failed(code: e.code, reason: e.message))
        case .timedOut: finished(.failed(code: .timeout, reason: "the provider did not answer in 10s"))
        case .disconnected: finished(.failed(code: .unavailable, reason: "the provider disconnected"))
        }
      }
    case .state:
      // The engine completes state intents itself; reaching here is a bug.
      later { finished(.succeeded) }
    }
  }

  private func readValue(_ job: ControlEngine.ValueReadJob) {
    let read: (ControlValue) -> Void = { [unowned self] in self.submit(.valueRead(job: job.id, $0)) }
    switch job.provider {
    case .exec(let spec):
      let extra = job.instance.parameterEnvironment.merging(["ACTIOND_KIND": job.kind]) { $1 }
      run(processRequest(spec, extra: extra), tag: job.kind) { result in
        let value: ControlValue
        switch result.outcome {
        case .exited(let status): value = ValueProviderSpec.interpretExitStatus(status)
        case .timedOut: value = .unavailable(reason: "the value command timed out after \(spec.timeout)")
        case .stopped: value = .unavailable(reason: "the value command was stopped by actiond (it is stopping)")
        case .signaled(let sig): value = .unavailable(reason: "the value command was killed by signal \(sig)")
        case .spawnFailed(let f): value = .unavailable(reason: "cannot run the value command: \(f)")
        }
        read(value)
      }
    case .file(let path, let on):
      let text = SmallFile.read(path)
      let value =
        text.text.map { ValueProviderSpec.interpretFile($0, on: on) } ?? .unavailable(reason: text.error ?? "")
      later { read(value) }
    case .provider:
      guard let client = engine.provider(of: job.kind).map(ClientID.init), let server else {
        later { read(.unavailable(reason: "no provider application is connected")) }
        return
      }
      let body = ProviderRequest.Body.value(
        kind: job.kind,
        configuration: job.instance.configurationJSON)
      server.sendProviderRequest(to: client, body, timeout: .seconds(5)) { outcome in
        switch outcome {
        case .replied(let object):
          read(object["value"]?.boolValue.map(ControlValue.init) ?? .unavailable(reason: "the provider sent no value"))
        case .failed(let e): read(.unavailable(reason: "the provider failed: \(e.message)"))
        case .timedOut: read(.unavailable(reason: "the provider did not answer in 5s"))
        case .disconnected: read(.unavailable(reason: "the provider disconnected"))
        }
      }
    case .store:
      later { read(.unknown) }
    }
  }

  /// Saves `state`; the error (`state-not-saved`) when it cannot be written, for the
  /// engine to undo the change that asked for the save. A failure is logged and the state
  /// saved again later.
  private func save(_ state: StateSnapshot) -> ProtocolError? {
    do {
      try store.save(state)
    } catch {
      logger.error("cannot save the state to \(store.path): \(error)", event: "state-save-failed")
      retrySaving()
      return ProtocolError(
        .stateNotSaved, "the state cannot be saved to \(store.path) (\(error)); the change was not made")
    }
    if let timer = saveRetry {
      loop.cancel(timer)
      saveRetry = nil
      logger.notice("the state is saved again to \(store.path)", event: "state-saved")
    }
    return nil
  }

  /// After a failed save, the state is saved again every ``saveRetryInterval`` until it
  /// succeeds: what the engine did not undo (a reload's cleanup, a migration) is then
  /// written as soon as the disk allows. Each request meanwhile gets its own error.
  private func retrySaving() {
    guard saveRetry == nil, !stopping else { return }
    saveRetry = loop.schedule(at: loop.now() + EffectInterpreter.saveRetryInterval) { [unowned self] _ in
      self.saveRetry = nil
      do {
        try self.store.save(self.engine.persistentState)
        self.logger.notice("the state is saved again to \(self.store.path)", event: "state-saved")
      } catch {
        self.logger.debug("saving the state still fails: \(error)")
        self.retrySaving()
      }
    }
  }

  /// A perform's request: the one readied at its press's key-down when the job is the one
  /// prepared then (the runner then only spawns it), else built now.
  private func request(for job: ControlEngine.PerformJob, _ spec: ExecSpec) -> Result<ProcessRequest, SpawnFailure> {
    if let prepared = preparedHold, prepared.job.performsTheSame(as: job) {
      preparedHold = nil
      return .success(prepared.request)
    }
    return processRequest(spec, extra: job.environment)
  }

  /// How a command's end is reported, one word each (docs/protocol.md, error codes): exit
  /// status 0 is success; another status, a signal or a failed start is `failed`; running
  /// past `timeout` is `timeout`; actiond ending it (a stop) is `stopped`, never `timeout`.
  static func performOutcome(_ outcome: ProcessOutcome, timeout: TimeSpan) -> ControlEngine.PerformOutcome {
    switch outcome {
    case .exited(0): .succeeded
    case .exited(let status): .failed(code: .failed, reason: "the command exited with status \(status)")
    case .signaled(let sig): .failed(code: .failed, reason: "the command was killed by signal \(sig)")
    case .timedOut: .failed(code: .timeout, reason: "the command timed out after \(timeout)")
    case .stopped: .failed(code: .stopped, reason: "the command was stopped by actiond (it is stopping)")
    case .spawnFailed(let failure): .failed(code: .failed, reason: "cannot run the command: \(failure)")
    }
  }

  /// `evenWhileStopping`: a momentary toggle's off, which a stop still runs; anything else
  /// is not started once the daemon is stopping, and reported ``ProcessOutcome/stopped``.
  @discardableResult
  private func run(
    _ made: Result<ProcessRequest, SpawnFailure>, tag: String, evenWhileStopping: Bool = false,
    completion: @escaping (ProcessResult) -> Void
  ) -> ProcessRunID? {
    guard !stopping || evenWhileStopping else {
      // A finished intent's re-read during a stop: nothing new is started.
      logger.info("[\(tag)] not started: actiond is stopping", event: "not-started")
      later { completion(ProcessResult(outcome: .stopped)) }
      return nil
    }
    let request: ProcessRequest
    switch made {
    case .success(let made): request = made
    case .failure(let failure):
      later { completion(ProcessResult(outcome: .spawnFailed(failure))) }
      return nil
    }
    // A gesture's command: the clients keep waiting until it has run (its first output
    // or exit shows it has), for at most `clientQuiet.after`. The deadline's own quiet
    // lasts until its handler returns, so this one begins after the spawn: arming it
    // (a timerfd update) is not on the command's way.
    var quietToken: UInt64?
    if handlingDeadline && clientQuiet.after > .zero {
      quietToken = nextCommandQuiet
      nextCommandQuiet += 1
    }
    let id = runner.run(request) { [logger, unowned self, quietToken] line in
      if let quietToken, self.commandQuiet?.token == quietToken { self.endCommandQuiet() }
      logger.info("[\(tag)] \(line.text)\(line.truncated ? " …(truncated)" : "")", event: "intent-output")
    } completion: { [logger, unowned self, quietToken] result in
      if let quietToken, self.commandQuiet?.token == quietToken { self.endCommandQuiet() }
      if result.discardedLines > 0 {
        logger.notice(
          "[\(tag)] \(result.discardedLines) more output line(s) (\(result.discardedBytes) bytes) not logged",
          event: "intent-output")
      }
      completion(result)
      if self.stopping && self.runner.runningCount == 0 { self.commandsEnded() }
    }
    if let quietToken { beginCommandQuiet(token: quietToken) }
    return id
  }

  private func processRequest(_ spec: ExecSpec, extra: [String: String]) -> Result<ProcessRequest, SpawnFailure> {
    // Intents get a small, explicit environment: never the daemon's own (it may hold
    // NOTIFY_SOCKET, LISTEN_FDS or secrets), plus what the definition and the contract add.
    var env: [String: String] = ["PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
    for key in ["LANG", "LC_ALL", "TZ"] where environment[key] != nil { env[key] = environment[key] }
    env.merge(spec.environment) { $1 }
    env.merge(extra) { $1 }
    // The documented default is `/`, not wherever the daemon was started from (under
    // systemd that is `/` anyway; from a shell it would be the shell's directory).
    var user: ProcessUser?
    if let reference = spec.user?.description {
      // Never resolved here, on the loop: every configured user was resolved at load.
      let unresolved = SpawnFailure(
        step: "user \(reference)", errnoName: "", message: "not resolved when the configuration was loaded (a bug)")
      switch users[reference] ?? .failure(unresolved) {
      case .success(let resolved): user = resolved
      case .failure(let failure): return .failure(failure)
      }
    }
    return .success(
      ProcessRequest(
        argv: spec.argv, environment: env, workingDirectory: spec.workingDirectory ?? "/", user: user,
        timeout: spec.timeout))
  }
}
