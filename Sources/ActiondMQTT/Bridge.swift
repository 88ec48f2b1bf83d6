// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import Glibc

/// actiond-mqtt: actiond's socket on one side, the MQTT broker on the other, the pure
/// ``BridgeModel`` in between, all on one ``EventLoop`` thread.
///
/// - actiond: `hello`, then `subscribe` (gestures, states, assignments, reloads), `status`
///   and `list`; once both replies are in, the model is ready and discovery, every state
///   and the daemon's `online` are published. While actiond is unreachable the daemon
///   availability is `offline` (every entity unavailable) and the link reconnects with backoff.
/// - The broker: the bridge's availability is its Last Will (`offline`, retained) and
///   `online` at every connect; then discovery and every state again, also whenever
///   Home Assistant announces `online` on `<prefix>/status`.
/// - Commands (QoS 1): a redelivery is dropped (``CommandDeduplicator``), a malformed or
///   retained one logged (once per topic a minute) and dropped; the rest go to actiond as
///   `perform` or `assign`, one at a time per control (``CommandLanes``).
public final class Bridge {
  private let loop: EventLoop
  private let logger: Logger
  private let settings: BridgeSettings
  private var model: BridgeModel
  private let daemon: DaemonLink
  private let mqtt: MQTTConnection
  private var dedupe = CommandDeduplicator()
  private var reports = RateLimitedReports()
  private var statusRequest: RequestID?
  private var listRequest: RequestID?
  private var snapshotButtons: [ButtonStatus]?
  private var snapshotControls: [ControlSnapshot]?
  /// Requests sent for commands: the control id whose perform is pending, if any.
  private var commands: [RequestID: (what: String, topic: String, control: String?)] = [:]
  /// Fires when the oldest command held for actiond's snapshot has waited too long.
  private var holdTimer: TimerID?
  /// Commands per control: actiond refuses a perform of a control still performing
  /// ("busy"), so a command waits for the answer to the one before it on the same control,
  /// in the order they were sent; other controls' commands do not wait for it.
  private var lanes = CommandLanes(capacity: BridgeModel.maxHeld)

  /// What the bridge found about its host.
  public struct Host: Sendable {
    public var name: String
    public var machineID: String?
    public var password: String?
    public init(name: String, machineID: String?, password: String?) {
      self.name = name
      self.machineID = machineID
      self.password = password
    }
  }

  public init(settings: BridgeSettings, host: Host, logger: Logger) throws {
    loop = try EventLoop()
    self.logger = logger
    self.settings = settings
    let topics = settings.topics(hostName: host.name)
    let identity = BridgeIdentity(
      deviceID: settings.deviceID ?? host.machineID ?? topics.nodeID, deviceName: settings.deviceName ?? topics.nodeID)
    model = BridgeModel(topics: topics, identity: identity)
    daemon = DaemonLink(loop: loop, logger: logger, path: settings.socketPath)
    let clientID = settings.clientID ?? String("actiond-mqtt-\(topics.nodeID)".utf8.prefix(23))!
    mqtt = try MQTTConnection(
      loop: loop, logger: logger, settings: settings, clientID: clientID, willTopic: topics.bridgeAvailability,
      password: host.password)
    daemon.onHello = { [unowned self] hello in self.daemonConnected(hello) }
    daemon.onMessage = { [unowned self] message in self.daemonMessage(message) }
    daemon.onLost = { [unowned self] in self.daemonLost() }
    mqtt.onConnected = { [unowned self] in self.brokerConnected() }
    mqtt.onMessage = { [unowned self] message in self.received(message) }
  }

  /// Runs until SIGTERM or SIGINT, then publishes the bridge's `offline` and disconnects.
  public func run() throws {
    for signo in [SIGTERM, SIGINT] {
      try loop.onSignal(signo) { [unowned self] _ in
        self.logger.notice("stopping", event: "stopping")
        self.mqtt.stop(last: self.bridgeAvailability(false), timeout: .seconds(2))
        self.loop.stop()
      }
    }
    logger.notice(
      "actiond-mqtt \(ActiondVersion.string): node \(model.topics.nodeID), topics \(model.topics.base)/…, "
        + "discovery \(model.topics.discovery)", event: "starting")
    daemon.start()
    mqtt.start()
    try loop.run()
  }

  private func bridgeAvailability(_ online: Bool) -> MQTTMessage {
    MQTTMessage(
      topic: model.topics.bridgeAvailability, text: online ? BridgeModel.online : BridgeModel.offline, retain: true)
  }

  private func publish(_ messages: [MQTTMessage]) {
    for m in messages { mqtt.publish(m) }
  }

  /// Discovery, the retained topics that describe nothing any more cleared, the states
  /// (every one with `all`, else those that changed), and actiond's availability (or only
  /// that it is offline).
  private func publishAll(all: Bool) {
    guard mqtt.isConnected else { return }
    if model.ready {
      mqtt.publish(model.discovery())
      let clears = model.takeClears()
      if !clears.isEmpty {
        logger.info(
          "clearing \(clears.count) retained topic(s) of controls or buttons actiond no longer has: "
            + clears.map(\.topic).joined(separator: ", "), event: "retained-cleanup")
      }
      publish(clears)
      publish(model.publishStates(all: all))
    }
    mqtt.publish(model.daemonAvailability)
  }

  // MARK: actiond

  private func daemonConnected(_ hello: Hello) {
    if !hello.client.control {
      logger.warning(
        "actiond does not let uid \(hello.client.uid) act: commands will fail (socket.controlUsers/controlGroup)",
        event: "daemon-no-control")
    }
    let events: Set<EventName> = [
      .released, .held, .releasedAfterHold, .doublePressed, .longHeld, .state, .assigned, .performed, .configReloaded,
    ]
    daemon.send(.subscribe(SubscriptionFilter(events: events)))
    requestSnapshot()
  }

  private func requestSnapshot() {
    snapshotButtons = nil
    snapshotControls = nil
    statusRequest = daemon.send(.status(button: nil))
    listRequest = daemon.send(.list)
  }

  private func daemonLost() {
    model.daemonLost()
    commands.removeAll()
    // Those still waiting go back to the model, held for actiond's next snapshot; those on
    // their way are not known to have been performed or not, and are not sent again.
    reportExpired(model.requeue(lanes.drain()))
    scheduleHoldExpiry()
    statusRequest = nil
    listRequest = nil
    if mqtt.isConnected { mqtt.publish(model.daemonAvailability) }
  }

  private func daemonMessage(_ message: ServerMessage) {
    switch message {
    case .reply(let reply):
      guard let id = reply.id else { return }
      if id == statusRequest, case .buttons(let buttons) = reply.result {
        statusRequest = nil
        snapshotButtons = buttons
        snapshotArrived()
      } else if id == listRequest, case .controls(let controls) = reply.result {
        listRequest = nil
        snapshotControls = controls
        snapshotArrived()
      } else if let command = commands.removeValue(forKey: id) {
        if let control = command.control { model.finished(controlID: control) }
        if case .control(let c) = reply.result { publish(model.refresh(c)) }
        logger.info("\(command.what): done", event: "command-done")
        carryOut(lanes.finish(lane: command.topic))
      }
    case .error(let id, let error):
      guard let id else {
        logger.warning("actiond: \(error.message) (\(error.code.rawValue))", event: "daemon-error")
        return
      }
      if id == statusRequest || id == listRequest {
        logger.error(
          "actiond refused the snapshot: \(error.message) (\(error.code.rawValue))", event: "snapshot-failed")
      } else if let command = commands.removeValue(forKey: id) {
        if let control = command.control { model.finished(controlID: control) }
        logger.warning(
          "\(command.what) failed: \(error.message) (\(error.code.rawValue))", event: "command-failed")
        // Home Assistant shows what is, not what was asked for.
        publish(model.restate(commandTopic: command.topic))
        carryOut(lanes.finish(lane: command.topic))
      }
    case .event(let event):
      let update = model.apply(event, unixOffset: Self.unixOffsetMicroseconds())
      publish(update.messages)
      if update.rediscover && mqtt.isConnected { mqtt.publish(model.discovery()) }
      if update.resnapshot { requestSnapshot() }
    case .hello, .providerRequest, .unknownEvent:
      // An event this version does not know (a newer actiond's) is ignored, as the
      // protocol's versioning rule asks; it changes nothing the bridge publishes.
      break
    }
  }

  private func snapshotArrived() {
    guard let buttons = snapshotButtons, let controls = snapshotControls else { return }
    snapshotButtons = nil
    snapshotControls = nil
    model.load(buttons: buttons, controls: controls)
    logger.info(
      "actiond has \(buttons.count) button(s) and \(model.controls.count) control(s)", event: "snapshot")
    // Only what changed: the broker still has the rest, retained (it is all published again
    // whenever the bridge connects to it).
    publishAll(all: false)
    releaseHeld()
  }

  /// Performs the commands that waited for actiond's snapshot, in the order they came; those
  /// that waited too long are reported.
  private func releaseHeld() {
    if let holdTimer { loop.cancel(holdTimer) }
    holdTimer = nil
    let (perform, expired) = model.takeHeld(at: loop.now())
    reportExpired(expired)
    if !perform.isEmpty {
      logger.info("performing \(perform.count) command(s) that waited for actiond", event: "commands-released")
    }
    for command in perform { arrive(command) }
  }

  /// A command for its control's lane: carried out now when nothing is on its way for that
  /// control, else queued behind it (refused when too many wait).
  private func arrive(_ command: HeldCommand) {
    switch lanes.arrive(command) {
    case .start: carryOut(command)
    case .queued: break
    case .full: reject(command.topic, "\(BridgeModel.maxHeld) commands already wait for actiond")
    }
  }

  /// Carries out `command` (its lane is busy with it) and, whenever one is done at once (no
  /// request sent: refused, already there, held, too old), the lane's next, until one is on
  /// its way to actiond or the lane is empty.
  private func carryOut(_ command: HeldCommand?) {
    var next = command
    while let command = next {
      if loop.now() - command.at >= BridgeModel.holdLimit {
        reportExpired([command])
      } else if handle(topic: command.topic, payload: command.payload) != nil {
        return  // on its way: actiond's answer finishes the lane (daemonMessage)
      }
      next = lanes.finish(lane: CommandLanes.lane(of: command))
    }
  }

  private func reportExpired(_ expired: [HeldCommand]) {
    for command in expired {
      logger.warning(
        "dropped a command on \(command.topic) \(JSONEncoding.quoted(String(decoding: command.payload, as: UTF8.self))): "
          + "actiond was unreachable for \(BridgeModel.holdLimit.milliseconds / 1000) s after it came",
        event: "command-expired")
    }
  }

  /// Keeps a timer on the oldest held command's deadline.
  private func scheduleHoldExpiry() {
    guard holdTimer == nil, let deadline = model.heldDeadline else { return }
    holdTimer = loop.schedule(at: deadline) { [unowned self] _ in
      self.holdTimer = nil
      self.reportExpired(self.model.expireHeld(at: self.loop.now()))
      self.scheduleHoldExpiry()
    }
  }

  /// The wall clock minus CLOCK_MONOTONIC, in microseconds: turns an event's monotonic
  /// `time` into its wall-clock time stamp.
  static func unixOffsetMicroseconds() -> Int64 {
    var real = timespec()
    var mono = timespec()
    clock_gettime(CLOCK_REALTIME, &real)
    clock_gettime(CLOCK_MONOTONIC, &mono)
    return (Int64(real.tv_sec) - Int64(mono.tv_sec)) * 1_000_000 + (Int64(real.tv_nsec) - Int64(mono.tv_nsec)) / 1000
  }

  // MARK: The broker

  private func brokerConnected() {
    mqtt.publish(bridgeAvailability(true))
    mqtt.subscribe(model.topics.subscriptions)
    // What a previous run left retained on the state topics (a control removed while the
    // bridge was stopped): handed over at subscribe, the subscription dropped at its SUBACK.
    mqtt.subscribeBriefly(model.topics.stateSubscriptions)
    publishAll(all: true)
  }

  private func received(_ message: MQTTConnection.Received) {
    let now = loop.now()
    if message.topic == model.topics.discovery {
      // What a previous run left retained: remove what this run no longer has. Noted even
      // before actiond's snapshot is in (the broker hands the retained payload over at
      // subscribe, often first): the snapshot's discovery then carries the removals.
      if model.noteDiscovery(message.payload) && model.ready && mqtt.isConnected {
        logger.info("removing components a previous run published", event: "discovery-cleanup")
        mqtt.publish(model.discovery())
      }
      return
    }
    if model.topics.isStateTopic(message.topic) {
      // Retained: found at the brief subscription (a live echo of the bridge's own
      // publication has no retain flag).
      if message.retain { publish(model.noteRetained(topic: message.topic)) }
      return
    }
    if !model.topics.isHomeAssistantStatus(message.topic) {
      if message.retain {
        reject(message.topic, "a retained command (stale: published for whoever subscribes next) is not performed")
        return
      }
      guard
        dedupe.accept(mid: message.mid, qos: message.qos, topic: message.topic, payload: message.payload, at: now)
      else {
        logger.info(
          "dropped a redelivered command on \(message.topic) (packet id \(message.mid))", event: "command-duplicate")
        return
      }
    }
    if model.topics.isHomeAssistantStatus(message.topic) {
      handle(topic: message.topic, payload: message.payload)
      return
    }
    // One command at a time per control on its way to actiond, the next when it has
    // answered: a burst (the broker's queue handed over once the snapshot is in, or Home
    // Assistant sending ON and OFF quickly) would otherwise meet actiond's "still
    // performing"; another control's command goes at once.
    arrive(HeldCommand(topic: message.topic, payload: message.payload, at: now))
  }

  /// Carries out one command (or Home Assistant's status), received now or held until
  /// actiond's snapshot came.
  /// Returns the request sent to actiond, if one was.
  @discardableResult
  private func handle(topic: String, payload: [UInt8]) -> RequestID? {
    switch model.command(topic: topic, payload: payload, at: loop.now()) {
    case .request(let body, let control):
      let what = "\(topic) \(JSONEncoding.quoted(String(decoding: payload, as: UTF8.self)))"
      guard let id = daemon.send(body) else {
        if let control { model.finished(controlID: control) }
        reject(topic, "actiond is unreachable")
        publish(model.restate(commandTopic: topic))
        return nil
      }
      logger.info("command \(what)", event: "command")
      commands[id] = (what, topic, control)
      return id
    case .alreadyThere(let messages):
      publish(messages)
    case .republishAll:
      logger.info("Home Assistant is online: publishing discovery and states", event: "republish")
      publishAll(all: true)
    case .ignored:
      break
    case .held:
      logger.info(
        "holding the command on \(topic) until actiond's snapshot is in (\(model.heldCount) waiting)",
        event: "command-held")
      scheduleHoldExpiry()
    case .malformed(let reason):
      reject(topic, reason)
    case .refused(let reason):
      reject(topic, reason)
      // Answered on its state too: Home Assistant shows what is, not what was asked for.
      publish(model.restate(commandTopic: topic))
    }
    return nil
  }

  /// Logs a dropped command, at most once per topic a minute (with how many were dropped since).
  private func reject(_ topic: String, _ reason: String) {
    guard let suppressed = reports.report(topic, at: loop.now()) else { return }
    let more = suppressed > 0 ? " (\(suppressed) more dropped on this topic since the last report)" : ""
    logger.warning("dropped a command on \(topic): \(reason)\(more)", event: "command-dropped")
  }
}
