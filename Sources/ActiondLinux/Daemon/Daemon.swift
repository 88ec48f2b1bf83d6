import ActiondCore
import CActiondShim
import Glibc

/// The running daemon: wires the pure `ControlEngine` to the Linux world on one epoll
/// loop. Input devices feed the engine; the engine's requests (run an intent, read a
/// value, persist, announce) are carried out here; the socket server's requests are
/// answered here. Nothing in this file decides behaviour: that is the engine's job.
public final class Daemon {
  /// Where the daemon's pieces come from; `actiond` builds it from the command line.
  public struct Settings {
    /// nil: the default main file, or the embedded default configuration when absent.
    public var configPath: String?
    public var socketPath: String?
    public var stateDirectory: String?
    public var logLevel: LogLevel?
    public var environment: [String: String]
    public init(
      configPath: String? = nil, socketPath: String? = nil, stateDirectory: String? = nil, logLevel: LogLevel? = nil,
      environment: [String: String] = ProcessEnvironment.current()
    ) {
      self.configPath = configPath
      self.socketPath = socketPath
      self.stateDirectory = stateDirectory
      self.logLevel = logLevel
      self.environment = environment
    }
  }

  /// A start-up failure, printed by `actiond` before it exits non-zero.
  public struct StartError: Error, CustomStringConvertible {
    public var description: String
  }

  private let settings: Settings
  private let loop: EventLoop
  private let logger: Logger
  private let notifier: SystemdNotifier
  private var configuration: Configuration
  private let store: StateStore
  private var engine: ControlEngine!
  private var server: ControlServer!
  private let runner: ProcessRunner
  private let input: InputManager
  private var timer: TimerID?
  /// Every `user` the configuration names, resolved when it was loaded: a command never
  /// waits for the name service on the loop.
  private var users: [String: Result<ProcessUser, SpawnFailure>] = [:]
  /// Devices currently bound, by devnode, as announced. Which button a device serves is
  /// the input manager's alone to know (`input.device(forButton:)`).
  private var devices: [String: DeviceSnapshot] = [:]
  /// Kind → the client that registered as its provider.
  private var providers: [String: ClientID] = [:]
  private var stopping = false
  /// Pending retry of a failed save.
  private var saveRetry: TimerID?
  static let saveRetryInterval = TimeSpan.seconds(10)
  private var stopped = false
  /// Bounds the wait for commands at a stop.
  private var stopDeadline: TimerID?

  /// Loads the configuration and state, opens the socket and input devices. Nothing runs
  /// until `run()`.
  public init(settings: Settings) throws {
    self.settings = settings
    let sink = LogSinks.standard(environment: settings.environment)
    // Until the configuration is read, log at the command line's level (or info).
    logger = Logger(minimumLevel: settings.logLevel ?? .info, sink: sink)
    notifier = SystemdNotifier(environment: settings.environment)
    do {
      configuration = try ConfigurationFiles.load(mainPath: settings.configPath)
    } catch let error as ConfigurationError {
      throw StartError(
        description: "invalid configuration (\(error.problems.count) problem\(error.problems.count == 1 ? "" : "s")):\n"
          + error.description)
    } catch {
      throw StartError(description: "\(error)")
    }
    if let override = settings.stateDirectory { configuration.stateDirectory = override }
    if let override = settings.socketPath { configuration.socket.path = override }
    logger.minimumLevel = settings.logLevel ?? configuration.logLevel
    users = Daemon.resolveUsers(configuration, logger: logger)

    loop = try EventLoop()
    runner = ProcessRunner(loop: loop)
    do {
      input = try InputManager(loop: loop)
    } catch {
      throw StartError(description: "cannot start device discovery (libudev): \(error)")
    }

    try Daemon.makeDirectory(configuration.stateDirectory)
    store = StateStore(directory: configuration.stateDirectory, logger: logger)
    // The store logs what it found (missing, loaded, corrupt and kept aside, unreadable).
    let (snapshot, _) = store.load()
    engine = ControlEngine(configuration: configuration, state: snapshot, output: self)

    let socketDirectory = Daemon.parentDirectory(of: configuration.socket.path)
    if !socketDirectory.isEmpty { try? Daemon.makeDirectory(socketDirectory) }
    var serverConfiguration = ServerConfiguration(configuration.socket)
    serverConfiguration.path = configuration.socket.path
    server = try ControlServer(configuration: serverConfiguration, loop: loop, handler: self)
    server.log = { [logger] message in logger.info(message, event: "socket") }
    input.onEvent = { [unowned self] event in self.inputEvent(event) }
  }

  /// Runs until SIGTERM or SIGINT. Ready (sd_notify READY=1) only once the configuration,
  /// state, socket and the devices present at start are up.
  public func run() throws {
    try loop.onSignal(SIGTERM) { [unowned self] _ in self.shutdown(reason: "SIGTERM") }
    try loop.onSignal(SIGINT) { [unowned self] _ in self.shutdown(reason: "SIGINT") }
    try loop.onSignal(SIGHUP) { [unowned self] _ in self.reloadConfiguration() }
    // A client vanishing mid-write must not kill the daemon.
    signal(SIGPIPE, SIG_IGN)
    // The hold deadline is the one timer that matters, and the kernel may fire a timer up
    // to the timer slack late (50 µs by default) to batch wake-ups. The daemon has no
    // periodic timers to batch: ask for the smallest slack.
    if actiond_set_timer_slack(1) != 0 { logger.debug("PR_SET_TIMERSLACK failed: \(Errno.current)") }
    do {
      try server.start()
    } catch {
      throw StartError(description: "cannot listen on \(configuration.socket.path): \(error)")
    }
    do {
      try input.start(configuration.buttons.map(ButtonBinding.init))
    } catch {
      throw StartError(description: "cannot start input discovery: \(error)")
    }
    engine.start()
    // A first run on a machine without a matching device must say why nothing happens.
    for (index, button) in configuration.buttons.enumerated() where input.device(forButton: index) == nil {
      logger.notice(
        "button \(button.name): no device with \(button.keyName) matches (\(button.match)) yet; "
          + "it binds when one appears", event: "button-waiting")
    }
    logger.notice(
      "actiond \(ActiondVersion.string) running: \(configuration.buttons.count) button(s), "
        + "\(configuration.controls.count) control(s), socket \(server.path)", event: "started")
    let status = statusLine()
    notify { try $0.ready(status: status) }
    notifier.startWatchdog(on: loop) { [logger] error in logger.warning("watchdog ping failed: \(error)") }
    try loop.run()
  }

  // MARK: - Lifecycle

  private func shutdown(reason: String) {
    guard !stopping else { return }
    stopping = true
    logger.notice("stopping (\(reason))", event: "stopping")
    notify { try $0.stopping() }
    notifier.stopWatchdog(on: loop)
    input.shutdown()
    // No hold is decided any more while the stop waits for commands.
    if let timer { loop.cancel(timer) }
    timer = nil
    runner.terminateAll()
    server.stop()
    guard runner.runningCount > 0 else {
      finishShutdown()
      return
    }
    // The runner SIGKILLs each group once its grace period has passed; the loop keeps
    // turning until every command is reaped (`run`'s completion calls back here), so a
    // command that ignores SIGTERM does not outlive the daemon. Bounded: whatever is
    // left when the grace and a margin have passed is SIGKILLed here.
    logger.info(
      "waiting up to \(Daemon.stopGrace) for \(runner.runningCount) command(s) to end", event: "stopping-commands")
    stopDeadline = loop.schedule(at: loop.now() + Daemon.stopGrace) { [unowned self] _ in
      self.stopDeadline = nil
      self.runner.killAll()
      self.finishShutdown()
    }
  }

  /// How long a stop waits for running commands: their SIGKILL comes after the runner's
  /// grace period (2 s); the margin lets the kill be reaped.
  static let stopGrace = ProcessRequest(argv: ["-"]).killGracePeriod + .seconds(1)

  /// The last step of a stop: once no command runs (or the wait is over).
  private func finishShutdown() {
    guard stopping, !stopped else { return }
    stopped = true
    if let stopDeadline { loop.cancel(stopDeadline) }
    stopDeadline = nil
    if let saveRetry { loop.cancel(saveRetry) }
    saveRetry = nil
    save(engine.persistentState)
    loop.stop()
  }

  private func reloadConfiguration() {
    guard !stopping else { return }  // the devices are closed already
    let now = loop.now()
    notify { try $0.reloading(at: now) }
    logger.notice("reloading the configuration (SIGHUP)", event: "reloading")
    do {
      var new = try ConfigurationFiles.load(mainPath: settings.configPath)
      if let override = settings.stateDirectory { new.stateDirectory = override }
      if let override = settings.socketPath { new.socket.path = override }
      if new.socket != configuration.socket || new.stateDirectory != configuration.stateDirectory {
        logger.warning(
          "socket and state directory changes take effect at the next restart", event: "reload-needs-restart")
        new.socket = configuration.socket
        new.stateDirectory = configuration.stateDirectory
      }
      // Buttons whose entry did not change keep their recognizer and their device, by
      // one rule for both, so a press or hold in progress on them goes on.
      let unchanged = new.unchangedButtons(since: configuration)
      configuration = new
      logger.minimumLevel = settings.logLevel ?? new.logLevel
      users = Daemon.resolveUsers(new, logger: logger)
      engine.apply(configuration: new, at: now)
      input.reconfigure(new.buttons.map(ButtonBinding.init), keeping: unchanged)
      announce(.configReloaded(applied: true, problems: []))
    } catch let error as ConfigurationError {
      for problem in error.problems { logger.error(problem.description, event: "config-problem") }
      announce(.configReloaded(applied: false, problems: error.problems.map(\.description)))
    } catch {
      logger.error("\(error)", event: "config-problem")
      announce(.configReloaded(applied: false, problems: ["\(error)"]))
    }
    let status = statusLine()
    notify { try $0.ready(status: status) }
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

  /// The sd_notify STATUS line, from the input manager's bindings (their one owner).
  /// Logged at debug too, so what systemd shows can be followed outside systemd.
  private func statusLine() -> String {
    let bound = configuration.buttons.indices.filter { input.device(forButton: $0) != nil }.count
    let line =
      "\(bound)/\(configuration.buttons.count) button(s) bound, \(devices.count) device(s), "
      + "\(server?.clientCount ?? 0) client(s)"
    logger.debug("status: \(line)", event: "status")
    return line
  }

  private func notify(_ body: (SystemdNotifier) throws -> Void) {
    guard notifier.isEnabled else { return }
    do { try body(notifier) } catch { logger.warning("sd_notify failed: \(error)", event: "notify-failed") }
  }

  // MARK: - Input

  private func inputEvent(_ event: InputEvent) {
    switch event {
    case .key(let button, let value, let at):
      guard button < configuration.buttons.count else { return }
      engine.keyEvent(button: button, code: configuration.buttons[button].keyCode, value: value, at: at)
    case .appeared(let button, let device, let isDown, let at):
      let node = device.devnode ?? device.syspath
      engine.deviceBound(button: button, device: node, keyDown: isDown, at: at)
      if isDown {
        logger.info("button \(configuration.buttons[button].name): key already down on \(node); not a press")
      }
    case .resync(let button, let isDown, let at):
      logger.info(
        "button \(configuration.buttons[button].name): events were dropped (SYN_DROPPED); key is now "
          + (isDown ? "down" : "up"), event: "resync")
      engine.resynchronized(button: button, keyDown: isDown, at: at)
    case .releasedByKernel(let button, let at):
      // Not a SYN_DROPPED: the kernel released the key because the device is going away
      // (or was reset). A press in progress is `device-lost`, as the unplug is.
      logger.info(
        "button \(configuration.buttons[button].name): the kernel released its key (device going away or reset)",
        event: "released-by-kernel")
      engine.deviceUnbound(button: button, device: "", at: at)
    case .lost(let button, let at):
      engine.deviceUnbound(button: button, device: "", at: at)
    case .deviceBound(let info, let buttons, let grabbed, let readOnly):
      let snap = deviceSnapshot(info, buttons: buttons, grabbed: grabbed)
      devices[snap.devnode] = snap
      if readOnly { logger.warning("\(snap.devnode) opened read-only (no write access)", event: "device-read-only") }
      announce(.deviceAdded(snap))
      let status = statusLine()
      notify { try $0.status(status) }
    case .deviceUnbound(let info, let reason):
      let node = info.devnode ?? info.syspath
      let snap = devices.removeValue(forKey: node) ?? deviceSnapshot(info, buttons: [], grabbed: false)
      if case .readFailed(let why) = reason {
        logger.notice("\(node): reading failed: \(why)", event: "device-read-failed")
      }
      announce(.deviceRemoved(snap, reason: reason.code))
      let status = statusLine()
      notify { try $0.status(status) }
    case .refused(let button, let device, let reason):
      logger.warning(
        "button \(configuration.buttons[button].name): not binding \(device.devnode ?? device.syspath) "
          + "\"\(device.name)\": \(reason)", event: "device-refused")
    case .ignoredExtraMatch(let button, let device, let boundTo):
      logger.notice(
        "button \(configuration.buttons[button].name): \(device.devnode ?? device.syspath) also matches; "
          + "staying on \(boundTo.devnode ?? boundTo.syspath)", event: "device-extra-match")
    case .deviceFailed(let device, let reason):
      logger.warning("device \(device.devnode ?? device.syspath) \"\(device.name)\": \(reason)", event: "device-failed")
    case .discoveryProblem(let message):
      logger.warning("device discovery: \(message)", event: "discovery-problem")
    }
  }

  private func deviceSnapshot(_ info: InputDeviceInfo, buttons: [Int], grabbed: Bool) -> DeviceSnapshot {
    DeviceSnapshot(
      devnode: info.devnode ?? info.syspath, name: info.name, phys: info.phys,
      id: DeviceSnapshot.formatID(vendor: info.vendor, product: info.product),
      buttons: buttons.compactMap { $0 < configuration.buttons.count ? configuration.buttons[$0].name : nil },
      grabbed: grabbed)
  }

  // MARK: - Files

  private static func parentDirectory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "" }
    return String(path[..<slash])
  }

  /// `mkdir -p` with mode 0755; an existing directory is fine.
  static func makeDirectory(_ path: String) throws {
    guard !path.isEmpty else { return }
    var current = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
      current += "/" + part
      if mkdir(current, 0o755) != 0 && errno != EEXIST {
        throw StartError(description: "cannot create directory \(current): \(Errno.current)")
      }
    }
  }

  private func save(_ state: StateSnapshot) {
    do {
      try store.save(state)
    } catch {
      logger.error("cannot save the state to \(store.path): \(error)", event: "state-save-failed")
    }
  }

  /// Writes `text` to an existing file (sysfs attributes, FIFOs, regular files), the way
  /// a `write` intent does: no creation, truncation for regular files, one write.
  static func writeFile(_ path: String, _ text: String) -> String? {
    let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
    guard fd >= 0 else { return "cannot open \(path): \(Errno.current)" }
    defer { close(fd) }
    do {
      try Syscall.writeAll(fd, Array(text.utf8))
      return nil
    } catch {
      return "cannot write \(path): \(error)"
    }
  }

  /// Reads at most 64 KiB of a file (a value provider's file is a flag, not a document).
  static func readFile(_ path: String) -> (text: String?, error: String?) {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
    guard fd >= 0 else { return (nil, "cannot open \(path): \(Errno.current)") }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 65536)
    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard n >= 0 else { return (nil, "cannot read \(path): \(Errno.current)") }
    return (String(decoding: buffer[0..<n], as: UTF8.self), nil)
  }

  /// Runs `body` on the next loop iteration: completions never re-enter the engine from
  /// inside the call that started the work.
  private func later(_ body: @escaping () -> Void) {
    loop.schedule(at: loop.now()) { _ in body() }
  }
}

// MARK: - What the engine asks for

extension Daemon: ControlEngineOutput {
  public func announce(_ event: Event) {
    // Subscribers first: they wait for `pressed` and `held` with a person's finger on
    // the key, the log does not.
    server?.broadcast(event)
    if EventLogLine.level(of: event) >= logger.minimumLevel {
      let line = EventLogLine(event)
      logger.sink.write(
        LogRecord(
          level: line.level, message: line.message, event: line.event,
          fields: line.fields.filter { !$0.value.isEmpty }.map { LogField($0.key, $0.value) }))
    }
  }

  public func log(_ level: LogLevel, _ message: String) {
    logger.log(level, message)
  }

  public func armTimer(at deadline: MonotonicInstant?) {
    if let timer { loop.cancel(timer) }
    timer = nil
    guard let deadline, !stopping else { return }
    timer = loop.schedule(at: deadline) { [unowned self] now in
      self.timer = nil
      // A release stamped before the deadline may still be unread: drain first, so the
      // kernel's timestamps decide, not the order in which the loop saw things.
      for button in self.configuration.buttons.indices { self.input.drain(button: button) }
      self.engine.deadlineReached(at: now)
    }
  }

  public func runIntent(_ job: ControlEngine.PerformJob) {
    switch job.intent {
    case .exec(let spec):
      run(spec, extra: job.environment, tag: job.kind) { [unowned self] result in
        let outcome: ControlEngine.PerformOutcome
        switch result.outcome {
        case .exited(0): outcome = .succeeded
        case .exited(let status): outcome = .failed(code: .failed, reason: "the command exited with status \(status)")
        case .signaled(let sig): outcome = .failed(code: .failed, reason: "the command was killed by signal \(sig)")
        case .timedOut: outcome = .failed(code: .timeout, reason: "the command timed out after \(spec.timeout)")
        case .spawnFailed(let failure): outcome = .failed(code: .failed, reason: "cannot run the command: \(failure)")
        }
        self.engine.performFinished(job: job.id, outcome)
      }
    case .write(let path, let on, let off):
      let text = job.requestedValue ?? true ? on : off
      let error = Daemon.writeFile(path, text)
      later { [unowned self] in
        self.engine.performFinished(job: job.id, error.map { .failed(code: .failed, reason: $0) } ?? .succeeded)
      }
    case .provider:
      guard let client = providers[job.kind] else {
        later { [unowned self] in
          self.engine.performFinished(job: job.id, .failed(code: .unavailable, reason: "no provider is connected"))
        }
        return
      }
      let body = ProviderRequest.Body.perform(
        kind: job.kind,
        configuration: job.instance.configurationJSON, value: job.requestedValue)
      server.sendProviderRequest(to: client, body, timeout: .seconds(10)) { [unowned self] outcome in
        switch outcome {
        case .replied: self.engine.performFinished(job: job.id, .succeeded)
        case .failed(let e): self.engine.performFinished(job: job.id, .failed(code: e.code, reason: e.message))
        case .timedOut:
          self.engine.performFinished(
            job: job.id, .failed(code: .timeout, reason: "the provider did not answer in 10s"))
        case .disconnected:
          self.engine.performFinished(job: job.id, .failed(code: .unavailable, reason: "the provider disconnected"))
        }
      }
    case .state:
      // The engine completes state intents itself; reaching here is a bug.
      later { [unowned self] in self.engine.performFinished(job: job.id, .succeeded) }
    }
  }

  public func readValue(_ job: ControlEngine.ValueReadJob) {
    switch job.provider {
    case .exec(let spec):
      run(spec, extra: job.instance.parameterEnvironment.merging(["ACTIOND_KIND": job.kind]) { $1 }, tag: job.kind) {
        [unowned self] result in
        let value: ControlValue
        switch result.outcome {
        case .exited(let status): value = ValueProviderSpec.interpretExitStatus(status)
        case .timedOut: value = .unavailable(reason: "the value command timed out after \(spec.timeout)")
        case .signaled(let sig): value = .unavailable(reason: "the value command was killed by signal \(sig)")
        case .spawnFailed(let f): value = .unavailable(reason: "cannot run the value command: \(f)")
        }
        self.engine.valueRead(job: job.id, value)
      }
    case .file(let path, let on):
      let read = Daemon.readFile(path)
      let value =
        read.text.map { ValueProviderSpec.interpretFile($0, on: on) } ?? .unavailable(reason: read.error ?? "")
      later { [unowned self] in self.engine.valueRead(job: job.id, value) }
    case .provider:
      guard let client = providers[job.kind] else {
        later { [unowned self] in
          self.engine.valueRead(job: job.id, .unavailable(reason: "no provider application is connected"))
        }
        return
      }
      let body = ProviderRequest.Body.value(
        kind: job.kind,
        configuration: job.instance.configurationJSON)
      server.sendProviderRequest(to: client, body, timeout: .seconds(5)) { [unowned self] outcome in
        let value: ControlValue
        switch outcome {
        case .replied(let object):
          value =
            object["value"]?.boolValue.map(ControlValue.init) ?? .unavailable(reason: "the provider sent no value")
        case .failed(let e): value = .unavailable(reason: "the provider failed: \(e.message)")
        case .timedOut: value = .unavailable(reason: "the provider did not answer in 5s")
        case .disconnected: value = .unavailable(reason: "the provider disconnected")
        }
        self.engine.valueRead(job: job.id, value)
      }
    case .store:
      later { [unowned self] in self.engine.valueRead(job: job.id, .unknown) }
    }
  }

  public func persist(_ state: StateSnapshot) throws(ProtocolError) {
    do {
      try store.save(state)
    } catch {
      logger.error("cannot save the state to \(store.path): \(error)", event: "state-save-failed")
      retrySaving()
      throw ProtocolError(
        .stateNotSaved, "the state cannot be saved to \(store.path) (\(error)); the change was not made")
    }
    if let timer = saveRetry {
      loop.cancel(timer)
      saveRetry = nil
      logger.notice("the state is saved again to \(store.path)", event: "state-saved")
    }
  }

  /// After a failed save, the state is saved again every ``saveRetryInterval`` until it
  /// succeeds: what the engine did not undo (a reload's cleanup, a migration) is then
  /// written as soon as the disk allows. Each request meanwhile gets its own error.
  private func retrySaving() {
    guard saveRetry == nil, !stopping else { return }
    saveRetry = loop.schedule(at: loop.now() + Daemon.saveRetryInterval) { [unowned self] _ in
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

  private func run(
    _ spec: ExecSpec, extra: [String: String], tag: String, completion: @escaping (ProcessResult) -> Void
  ) {
    guard !stopping else {
      // A finished intent's re-read during a stop: nothing new is started.
      later {
        completion(
          ProcessResult(outcome: .spawnFailed(SpawnFailure(step: "run", errnoName: "", message: "actiond is stopping")))
        )
      }
      return
    }
    let request: ProcessRequest
    switch processRequest(spec, extra: extra) {
    case .success(let made): request = made
    case .failure(let failure):
      later { completion(ProcessResult(outcome: .spawnFailed(failure))) }
      return
    }
    runner.run(request) { [logger] line in
      logger.info("[\(tag)] \(line.text)\(line.truncated ? " …(truncated)" : "")", event: "intent-output")
    } completion: { [logger, unowned self] result in
      if result.discardedLines > 0 {
        logger.notice(
          "[\(tag)] \(result.discardedLines) more output line(s) (\(result.discardedBytes) bytes) not logged",
          event: "intent-output")
      }
      completion(result)
      if self.stopping && self.runner.runningCount == 0 { self.finishShutdown() }
    }
  }

  private func processRequest(_ spec: ExecSpec, extra: [String: String]) -> Result<ProcessRequest, SpawnFailure> {
    // Intents get a small, explicit environment: never the daemon's own (it may hold
    // NOTIFY_SOCKET, LISTEN_FDS or secrets), plus what the definition and the contract add.
    var env: [String: String] = ["PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
    for key in ["LANG", "LC_ALL", "TZ"] where settings.environment[key] != nil { env[key] = settings.environment[key] }
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

// MARK: - Socket requests

extension Daemon: RequestHandler {
  public func snapshot() -> [ButtonStatus] { engine.buttonStatus(devices: buttonDevices) }

  /// The devnode serving button `index`, as the input manager has it.
  private func buttonDevices(_ index: Int) -> [String] {
    input.device(forButton: index).map { [$0.devnode ?? $0.syspath] } ?? []
  }

  public func handle(_ request: Request, from client: ClientInfo, reply: Responder) {
    do {
      try handle(request.body, client, reply)
    } catch {
      reply.fail(error)
    }
  }

  private func handle(_ body: Request.Body, _ client: ClientInfo, _ reply: Responder) throws(ProtocolError) {
    switch body {
    case .status(let button):
      if let button { try requireButton(button) }
      reply.succeed(.buttons(engine.buttonStatus(button, devices: buttonDevices)))
    case .list:
      reply.succeed(.controls(engine.controlList()))
    case .get(let kind):
      try requireKind(kind)
      reply.succeed(.controls(engine.controlList(kind: kind)))
    case .assign(let button, let kind, let configuration):
      try requireButton(button)
      let instance = try engine.instance(kind: kind, configuration: configuration)
      _ = try engine.assign(instance, to: button)
      reply.succeed(.button(engine.buttonStatus(button, devices: buttonDevices)[0]))
    case .set(let kind, let value, let configuration):
      let instance = try engine.instance(kind: kind, configuration: configuration)
      engine.set(instance, to: value) { Daemon.answer(reply, with: $0) }
    case .perform(.button(let name)):
      let button: String
      if let name {
        button = name
      } else if configuration.buttons.count == 1 {
        button = configuration.buttons[0].name
      } else {
        throw ProtocolError(
          .badRequest, "name a button or a kind: \(configuration.buttons.count) buttons are configured")
      }
      try requireButton(button)
      guard let instance = engine.assignment(of: button) else {
        throw ProtocolError(.unassigned, "no control is assigned to \(button)")
      }
      engine.perform(instance, button: button, source: .socket) { Daemon.answer(reply, with: $0) }
    case .perform(.control(let kind, let configuration)):
      let instance = try engine.instance(kind: kind, configuration: configuration)
      engine.perform(instance, button: nil, source: .socket) { Daemon.answer(reply, with: $0) }
    case .press(let button):
      try requireButton(button)
      engine.simulatePress(button: button, at: loop.now())
      reply.succeed(.button(engine.buttonStatus(button, devices: buttonDevices)[0]))
    case .reload(let kind):
      if let kind { try requireKind(kind) }
      engine.reload(kind: kind) { [unowned self] in reply.succeed(.controls(self.engine.controlList(kind: kind))) }
    case .devices:
      reply.succeed(.devices(devices.values.sorted { $0.devnode < $1.devnode }))
    case .register(let kinds):
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
        if let other = providers[kind], other != client.id, server.isConnected(other) {
          throw ProtocolError(.alreadyRegistered, "another client already provides \(kind)")
        }
      }
      for kind in kinds { providers[kind] = client.id }
      logger.notice("\(client.id) is now the provider for \(kinds.joined(separator: ", "))", event: "provider")
      reply.succeed(.registered(kinds: kinds))
      engine.providerConnected(kinds: kinds)
    case .subscribe, .unsubscribe, .ping, .version:
      // The server answers these itself.
      throw ProtocolError(.internal, "request handled by the server")
    }
  }

  public func clientDisconnected(_ client: ClientInfo) {
    let kinds = providers.filter { $0.value == client.id }.map(\.key).sorted()
    guard !kinds.isEmpty else { return }
    for kind in kinds { providers[kind] = nil }
    logger.notice("provider for \(kinds.joined(separator: ", ")) disconnected", event: "provider")
    engine.providerDisconnected(kinds: kinds)
  }

  /// Answers a `set` or `perform` with the resulting control or the error.
  private static func answer(_ reply: Responder, with result: Result<ControlSnapshot, ProtocolError>) {
    switch result {
    case .success(let snapshot): reply.succeed(.control(snapshot))
    case .failure(let error): reply.fail(error)
    }
  }

  private func requireButton(_ name: String) throws(ProtocolError) {
    guard configuration.button(named: name) != nil else {
      throw ProtocolError(.unknownButton, "no button named \"\(name)\"")
    }
  }

  private func requireKind(_ kind: String) throws(ProtocolError) {
    guard configuration.control(kind: kind) != nil else {
      throw ProtocolError(.unknownKind, "no control of kind \"\(kind)\"")
    }
  }
}
