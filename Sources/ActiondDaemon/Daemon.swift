// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import CActiondShim
import Glibc

/// The running daemon: its lifecycle (start, SIGHUP reload, SIGTERM/SIGINT stop),
/// signals and sd_notify, and the wiring of the pure `ControlEngine` to the Linux world
/// on one epoll loop. Input devices feed the engine from here, through the
/// ``EffectInterpreter``, which holds the engine (a value) and carries out the effects it
/// returns; the socket's requests reach it through ``RequestRouter``. Nothing in this
/// file decides behaviour: that is the engine's job.
///
/// Ownership: the daemon holds the interpreter, the router, the server, the input source
/// and the runner; the interpreter holds the engine, the feedback driver and the server;
/// the server holds the router weakly (its handler); the router holds the interpreter and
/// the input source. Nothing points back and nothing forms a cycle. The state each piece
/// needs has one owner: the configuration generation, assignments, values and providers
/// are the engine's; bindings and bound devices the input source's; the engine's timer,
/// the save retry and the resolved users the interpreter's; the stop the daemon's.
public final class Daemon {
  /// Where the daemon's pieces come from; `actiond` builds it from the command line.
  public struct Settings {
    /// nil: the default main file, or the embedded default configuration when absent.
    public var configPath: String?
    public var socketPath: String?
    public var stateDirectory: String?
    public var logLevel: LogLevel?
    public var environment: [String: String]
    /// How actiond was invoked (`argv[0]`), so advice names the command to run
    /// (`.build/debug/actiond learn`).
    public var program: String
    /// Who the daemon runs as and whether it can read each `/dev/input/event*`, asked
    /// when a button has no device at start to say what to do; tests pass a fake.
    public var inputAccess: () -> InputAccessReport
    public init(
      configPath: String? = nil, socketPath: String? = nil, stateDirectory: String? = nil, logLevel: LogLevel? = nil,
      environment: [String: String] = ProcessEnvironment.current(), program: String = "actiond",
      inputAccess: @escaping () -> InputAccessReport = {
        InputAccessProbe.report(nodes: InputAccessProbe.eventNodes())
      }
    ) {
      self.configPath = configPath
      self.socketPath = socketPath
      self.stateDirectory = stateDirectory
      self.logLevel = logLevel
      self.environment = environment
      self.program = program
      self.inputAccess = inputAccess
    }
  }

  /// A start-up failure, printed by `actiond` before it exits non-zero.
  public struct StartError: Error, CustomStringConvertible {
    public var description: String
  }

  private let settings: Settings
  /// The daemon's one loop. Tests turn it themselves (``start()`` without ``run()``); an
  /// input source built outside the library watches its descriptors on it (the host
  /// benchmark's FIFO input, actiond-test-helper).
  public let loop: EventLoop
  private let logger: Logger
  private let notifier: SystemdNotifier
  /// The engine's value, as the interpreter holds it (internal for tests).
  var engine: ControlEngine { interpreter.engine }
  /// The configuration in force: the current generation's, whose one owner is the engine
  /// (a reload hands every part the next generation with ``EffectInterpreter/apply(_:at:)``).
  private var configuration: Configuration { interpreter.generation.configuration }
  /// Holds the engine and carries out what it asks (see ``EffectInterpreter``). Internal
  /// for tests (its `clientQuiet`, and requests in the middle of a press).
  let interpreter: EffectInterpreter
  /// The socket server's handler (see ``RequestRouter``).
  private let router: RequestRouter
  private let server: ControlServer
  private let runner: any ProcessRunning
  private let input: any InputSource
  private var stopping = false
  private var stopped = false
  /// Bounds the wait for commands at a stop.
  private var stopDeadline: TimerID?
  /// The buttons' feedback lights (see ``FeedbackDriver``).
  let feedback: FeedbackDriver

  /// Loads the configuration and state, opens the socket and input devices. Nothing runs
  /// until `run()`.
  ///
  /// `input`, `runner` and `logSink` default (nil) to the real ones: devices through
  /// libudev and libevdev, commands through `posix_spawn`, the standard log sink for
  /// `settings.environment`. Tests pass recording fakes (``RecordingInputSource``,
  /// ``RecordingProcessRunner``, ``RecordingLogSink``) to drive the daemon's wiring
  /// without a device or a child process. `feedbackLights` defaults to the real lights
  /// (``LinuxFeedbackLights``: `/sys/class/leds` and the LEDs of the input source's
  /// devices); tests pass ``RecordingFeedbackLights`` or real ones on a temporary directory.
  public init(
    settings: Settings, input: (any InputSource)? = nil, runner: (any ProcessRunning)? = nil,
    logSink: (any LogSink)? = nil, feedbackLights: (any FeedbackLightFactory)? = nil
  ) throws {
    self.settings = settings
    let sink = logSink ?? LogSinks.standard(environment: settings.environment)
    // Until the configuration is read, log at the command line's level (or info).
    logger = Logger(minimumLevel: settings.logLevel ?? .info, sink: sink)
    notifier = SystemdNotifier(environment: settings.environment)
    var configuration: Configuration
    do {
      configuration = try ConfigurationFiles.load(mainPath: settings.configPath)
    } catch let error as ConfigurationError {
      throw StartError(
        description: "invalid configuration (\(ConfigurationError.count(error.problems.count))):\n" + error.description)
    } catch {
      throw StartError(description: "\(error)")
    }
    if let override = settings.stateDirectory { configuration.stateDirectory = override }
    if let override = settings.socketPath { configuration.socket.path = override }
    logger.minimumLevel = settings.logLevel ?? configuration.logLevel

    loop = try EventLoop()
    self.runner = runner ?? ProcessRunner(loop: loop)
    if let input {
      self.input = input
    } else {
      do {
        self.input = try InputManager(loop: loop)
      } catch {
        throw StartError(description: "cannot start device discovery (libudev): \(error)")
      }
    }

    try Daemon.makeDirectory(configuration.stateDirectory)
    let store = StateStore(directory: configuration.stateDirectory, logger: logger)
    // The store logs what it found (missing, loaded, corrupt and kept aside, unreadable).
    let (snapshot, _) = store.load()
    feedback = FeedbackDriver(
      loop: loop, logger: logger,
      factory: feedbackLights ?? LinuxFeedbackLights(inputLEDs: self.input as? any ButtonDeviceLEDs))
    interpreter = EffectInterpreter(
      engine: ControlEngine(generation: ConfigurationGeneration(first: configuration), state: snapshot),
      loop: loop, logger: logger, store: store, runner: self.runner, input: self.input, feedback: feedback,
      environment: settings.environment)
    router = RequestRouter(interpreter: interpreter, input: self.input, loop: loop, logger: logger)

    let socketDirectory = Daemon.parentDirectory(of: configuration.socket.path)
    if !socketDirectory.isEmpty { try? Daemon.makeDirectory(socketDirectory) }
    var serverConfiguration = ServerConfiguration(configuration.socket)
    serverConfiguration.path = configuration.socket.path
    server = try ControlServer(configuration: serverConfiguration, loop: loop, handler: router)
    server.log = { [logger] message in logger.info(message, event: "socket") }
    interpreter.server = server
    // The closures below are the daemon's own: `unowned`, as the daemon holds what calls
    // them (the input source, the interpreter) and outlives them.
    interpreter.commandsEnded = { [unowned self] in self.finishShutdown() }
    self.input.onEvent = { [unowned self] event in self.inputEvent(event) }
  }

  /// Runs until SIGTERM or SIGINT. Ready (sd_notify READY=1) only once the configuration,
  /// state, socket and the devices present at start are up.
  public func run() throws {
    try loop.onSignal(SIGTERM) { [unowned self] _ in self.shutdown(reason: "SIGTERM") }
    try loop.onSignal(SIGINT) { [unowned self] _ in self.shutdown(reason: "SIGINT") }
    try loop.onSignal(SIGHUP) { [unowned self] _ in self.reloadConfiguration() }
    try start()
    try loop.run()
  }

  /// Everything `run()` does but the signals and the loop: listens, binds the devices,
  /// starts the engine and says it is ready. Internal for tests, which turn the loop
  /// themselves (a test process must not take SIGTERM and SIGINT into a signalfd).
  func start() throws {
    // A client vanishing mid-write must not kill the daemon.
    signal(SIGPIPE, SIG_IGN)
    // The hold deadline is the one timer that matters, and the kernel may fire a timer up
    // to the timer slack late (50 µs by default) to batch wake-ups. The daemon has no
    // periodic timers to batch: ask for the smallest slack.
    if actiond_set_timer_slack(1) != 0 {
      let error = Errno.current  // before the message is built: building it may change errno
      logger.debug("PR_SET_TIMERSLACK failed: \(error)")
    }
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
    interpreter.submit(.start)
    // A first run on a machine without a matching device must say why nothing happens,
    // and what to do: learn the button, fix the permissions.
    var access: InputAccessReport?
    for button in configuration.buttons where input.device(forButton: button.name) == nil {
      let report = access ?? settings.inputAccess()
      access = report
      let advice = report.waitingAdvice(tag: button.match.tags.first, learn: "\(settings.program) learn")
      logger.notice(
        "button \(button.name): no device with \(button.keyName) matches (\(button.match)) yet, "
          + "it binds when one appears; \(advice)", event: "button-waiting")
    }
    logger.notice(
      "actiond \(ActiondVersion.string) running: \(configuration.buttons.count) button(s), "
        + "\(configuration.controls.count) control(s), socket \(server.path)", event: "started")
    let status = statusLine()
    notify { try $0.ready(status: status) }
    notifier.startWatchdog(on: loop) { [logger] error in logger.warning("watchdog ping failed: \(error)") }
  }

  // MARK: - Lifecycle

  func shutdown(reason: String) {
    guard !stopping else {
      // A second SIGTERM (or SIGINT) while the stop waits: the operator wants out now.
      guard !stopped else { return }
      logger.notice(
        "\(reason) again: not waiting any longer; killing \(runner.runningCount) command(s) still running"
          + offsList(), event: "stopping-now")
      runner.killAll()
      finishShutdown()
      return
    }
    stopping = true
    // A momentary toggle held on goes off first, while commands may still start; its off
    // is spared from the SIGTERM below (nothing stays on because the daemon stopped). An
    // off waiting for its on's command starts once the SIGTERM below ended that command.
    interpreter.submit(.stopping)
    // No hold is decided any more and no command is started while the stop waits for
    // commands.
    interpreter.stop()
    // Every feedback light goes back to what it showed before actiond took it.
    feedback.stop()
    logger.notice("stopping (\(reason))", event: "stopping")
    notify { try $0.stopping() }
    notifier.stopWatchdog(on: loop)
    input.shutdown()
    runner.terminateAll(sparing: interpreter.sparedRuns)
    server.stop()
    guard runner.runningCount > 0 else {
      finishShutdown()
      return
    }
    // The runner SIGKILLs each group once its grace period has passed; the loop keeps
    // turning until every command is reaped (`run`'s completion calls back here), so a
    // command that ignores SIGTERM does not outlive the daemon. A momentary toggle's off
    // starts as its on's command ends, and is waited for. Bounded: whatever is left when
    // `stopBound` has passed is SIGKILLed here.
    logger.info(
      "waiting up to \(Daemon.stopBound) for \(runner.runningCount) command(s) to end"
        + (engine.hasMomentaryOffsPending || !interpreter.runningOffs.isEmpty
          ? "; momentary toggles held on go off first" : ""),
      event: "stopping-commands")
    stopDeadline = loop.schedule(at: loop.now() + Daemon.stopBound) { [unowned self] _ in
      self.stopDeadline = nil
      self.logger.warning(
        "the stop's bound of \(Daemon.stopBound) passed: killing \(self.runner.runningCount) command(s) still running"
          + self.offsList(), event: "stopping-now")
      self.runner.killAll()
      self.finishShutdown()
    }
  }

  /// What the stop's log adds about momentary offs still running.
  private func offsList() -> String {
    let offs = interpreter.runningOffs
    return offs.isEmpty ? "" : " (the off of \(offs.joined(separator: ", ")) among them)"
  }

  /// How long a stop waits in all for running commands and the offs of momentary toggles
  /// held on: commands get SIGTERM at once and SIGKILL after the runner's grace period
  /// (2 s), a momentary off starts as its on's command ends and runs under its own
  /// `timeoutMs`; what is still running after this is SIGKILLed and the daemon exits.
  /// 8 s: inside the unit's `TimeoutStopSec=10s`, with 2 s left for the kill, the last
  /// save and the exit, so systemd never has to kill actiond itself (docs/operations.md).
  static let stopBound = TimeSpan.seconds(8)

  /// The last step of a stop: once no command runs (or the wait is over).
  private func finishShutdown() {
    guard stopping, !stopped else { return }
    stopped = true
    if let stopDeadline { loop.cancel(stopDeadline) }
    stopDeadline = nil
    interpreter.saveFinalState()
    loop.stop()
  }

  /// SIGHUP: reads the configuration again and applies it. Internal for tests, which
  /// send no signals.
  func reloadConfiguration() {
    guard !stopping else { return }  // the devices are closed already
    let now = loop.now()
    notify { try $0.reloading(at: now) }
    logger.notice("reloading the configuration (SIGHUP)", event: "reloading")
    // One turn: what the new generation and `config-reloaded` announce reaches each
    // subscriber in one send.
    interpreter.turn { applyReloadedConfiguration(at: now) }
    let status = statusLine()
    notify { try $0.ready(status: status) }
  }

  private func applyReloadedConfiguration(at now: MonotonicInstant) {
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
      logger.minimumLevel = settings.logLevel ?? new.logLevel
      // One generation for every part, applied in one call: buttons whose entry did not
      // change keep their recognizer and their device, by one rule for both, so a press
      // or hold in progress on them goes on.
      interpreter.apply(interpreter.generation.next(new), at: now)
      interpreter.announce(.configReloaded(applied: true, problems: []))
    } catch let error as ConfigurationError {
      for problem in error.problems { logger.error(problem.description, event: "config-problem") }
      interpreter.announce(.configReloaded(applied: false, problems: error.problems.map(\.description)))
    } catch {
      logger.error("\(error)", event: "config-problem")
      interpreter.announce(.configReloaded(applied: false, problems: ["\(error)"]))
    }
  }

  /// The sd_notify STATUS line, from the input source's bindings and bound devices (their
  /// one owner).
  /// Logged at debug too, so what systemd shows can be followed outside systemd.
  func statusLine() -> String {
    let bound = configuration.buttons.filter { input.device(forButton: $0.name) != nil }.count
    let line =
      "\(bound)/\(configuration.buttons.count) button(s) bound, \(input.boundDevices.count) device(s), "
      + "\(server.clientCount) client(s)"
    logger.debug("status: \(line)", event: "status")
    return line
  }

  private func notify(_ body: (SystemdNotifier) throws -> Void) {
    guard notifier.isEnabled else { return }
    do { try body(notifier) } catch { logger.warning("sd_notify failed: \(error)", event: "notify-failed") }
  }

  // MARK: - Input

  /// An input layer event. Buttons are named as everywhere: an event for a name the
  /// configuration no longer has (an input source behind a reload) reaches the engine,
  /// which ignores it, and the log.
  private func inputEvent(_ event: InputEvent) {
    switch event {
    case .key(let button, let code, let value, let at):
      interpreter.submit(.key(button: button, code: code, value: value, at: at))
    case .appeared(let button, let device, let isDown, let at):
      let node = device.devnode ?? device.syspath
      interpreter.submit(.deviceAppeared(button: button, keyDown: isDown, at: at))
      feedback.deviceAppeared(button: button)
      if isDown { logger.info("button \(button): key already down on \(node); not a press") }
    case .resync(let button, let isDown, let at):
      logger.info(
        "button \(button): events were dropped (SYN_DROPPED); key is now " + (isDown ? "down" : "up"), event: "resync")
      interpreter.submit(.resynchronized(button: button, keyDown: isDown, at: at))
    case .releasedByKernel(let button, let at):
      // Not a SYN_DROPPED: the kernel released the key because the device is going away
      // (or was reset). A press in progress is `device-lost`, as the unplug is.
      logger.info(
        "button \(button): the kernel released its key (device going away or reset)", event: "released-by-kernel")
      interpreter.submit(.deviceLost(button: button, at: at))
    case .lost(let button, let at):
      interpreter.submit(.deviceLost(button: button, at: at))
    case .deviceBound(let device, let readOnly):
      let snap = DeviceSnapshot(device)
      if readOnly { logger.warning("\(snap.devnode) opened read-only (no write access)", event: "device-read-only") }
      interpreter.announce(.deviceAdded(snap))
      let status = statusLine()
      notify { try $0.status(status) }
    case .deviceUnbound(let device, let reason):
      // As it was announced bound: `device-removed` repeats what `device-added` said.
      let snap = DeviceSnapshot(device)
      if case .readFailed(let why) = reason {
        logger.notice("\(snap.devnode): reading failed: \(why)", event: "device-read-failed")
      }
      interpreter.announce(.deviceRemoved(snap, reason: reason.code))
      let status = statusLine()
      notify { try $0.status(status) }
    case .refused(let button, let device, let reason):
      logger.warning(
        "button \(button): not binding \(device.devnode ?? device.syspath) \"\(device.name)\": \(reason)",
        event: "device-refused")
    case .ignoredExtraMatch(let button, let device, let boundTo):
      logger.notice(
        "button \(button): \(device.devnode ?? device.syspath) also matches; "
          + "staying on \(boundTo.devnode ?? boundTo.syspath)", event: "device-extra-match")
    case .deviceFailed(let device, let reason):
      logger.warning("device \(device.devnode ?? device.syspath) \"\(device.name)\": \(reason)", event: "device-failed")
    case .discoveryProblem(let message):
      logger.warning("device discovery: \(message)", event: "discovery-problem")
    }
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
        throw StartError(description: SystemCallError.last("cannot create directory \(current)").description)
      }
    }
  }
}

extension DeviceSnapshot {
  /// A bound device as `device-added`, `device-removed` and `devices` show it.
  init(_ device: BoundInputDevice) {
    let info = device.info
    self.init(
      devnode: info.devnode ?? info.syspath, name: info.name, phys: info.phys,
      id: DeviceSnapshot.formatID(vendor: info.vendor, product: info.product), buttons: device.buttons,
      grabbed: device.grabbed)
  }
}
