import ActiondCore
import ActiondLinux
import CMosquitto
import Glibc

/// One MQTT 3.1.1 client session through libmosquitto, driven by the ``EventLoop``: the
/// broker's socket is an epoll watch (readable always, writable while
/// `mosquitto_want_write`), `mosquitto_loop_misc` runs from a timer for the keepalive, and
/// no libmosquitto thread exists (no `mosquitto_loop_start`, no polling).
///
/// Connecting is asynchronous (`mosquitto_connect_async`: a non-blocking TCP connect; the
/// CONNECT packet goes out when the socket becomes writable). A failed attempt or a lost
/// connection is retried after a ``Backoff`` delay; the session is persistent (fixed client
/// id, clean session off) so the broker keeps QoS 1 commands for the bridge meanwhile.
final class MQTTConnection {
  struct Received {
    var mid: Int32
    var topic: String
    var payload: [UInt8]
    var qos: Int32
    var retain: Bool
  }

  private let loop: EventLoop
  private let logger: Logger
  private let settings: BridgeSettings
  private let mosq: OpaquePointer
  private var watch: WatchID?
  private var watchedFD: Int32 = -1
  private var watchedInterest: EventLoop.IOEvents = []
  private var miscTimer: TimerID?
  private var retryTimer: TimerID?
  private var backoff = Backoff()
  private var everConnected = false
  private var stopping = false
  /// True between CONNACK (accepted) and the connection's loss.
  private(set) var isConnected = false

  var onConnected: () -> Void = {}
  var onLost: () -> Void = {}
  var onMessage: (Received) -> Void = { _ in }

  /// Creates the client and sets the Last Will (`offline`, retained) on `willTopic`.
  init(
    loop: EventLoop, logger: Logger, settings: BridgeSettings, clientID: String, willTopic: String,
    password: String?
  ) throws {
    self.loop = loop
    self.logger = logger
    self.settings = settings
    mosquitto_lib_init()
    guard let m = mosquitto_new(clientID, false, nil) else {
      throw BridgeFailure("mosquitto_new failed: \(String(cString: strerror(errno)))")
    }
    mosq = m
    try check(mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311), "protocol version")
    try check(
      mosquitto_will_set(m, willTopic, Int32(BridgeModel.offline.utf8.count), BridgeModel.offline, 1, true),
      "last will")
    if let username = settings.username {
      try check(mosquitto_username_pw_set(m, username, password), "user name and password")
    }
    if let tls = settings.tls {
      try check(mosquitto_tls_set(m, tls.caFile, nil, tls.certFile, tls.keyFile, nil), "TLS files")
    }
    mosquitto_user_data_set(m, Unmanaged.passUnretained(self).toOpaque())
    mosquitto_connect_callback_set(m) { _, object, rc in
      guard let object else { return }
      Unmanaged<MQTTConnection>.fromOpaque(object).takeUnretainedValue().connected(rc)
    }
    mosquitto_disconnect_callback_set(m) { _, object, rc in
      guard let object else { return }
      Unmanaged<MQTTConnection>.fromOpaque(object).takeUnretainedValue().disconnected(rc)
    }
    mosquitto_message_callback_set(m) { _, object, message in
      guard let object, let message else { return }
      let m = message.pointee
      let payload =
        m.payloadlen > 0 && m.payload != nil
        ? Array(UnsafeRawBufferPointer(start: m.payload, count: Int(m.payloadlen))) : []
      let received = Received(
        mid: m.mid, topic: m.topic.map { String(cString: $0) } ?? "", payload: payload, qos: m.qos, retain: m.retain)
      Unmanaged<MQTTConnection>.fromOpaque(object).takeUnretainedValue().onMessage(received)
    }
  }

  deinit {
    if let watch { loop.unregister(watch) }
    mosquitto_destroy(mosq)
  }

  private func check(_ rc: Int32, _ what: String) throws {
    guard rc == MOSQ_ERR_SUCCESS.rawValue else {
      throw BridgeFailure("libmosquitto: \(what): \(Self.describe(rc))")
    }
  }

  static func describe(_ rc: Int32) -> String {
    if rc == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
    return String(cString: mosquitto_strerror(rc))
  }

  /// The first connection attempt (later ones are scheduled by the connection itself).
  func start() { attempt() }

  private func attempt() {
    retryTimer = nil
    guard !stopping else { return }
    let rc =
      everConnected
      ? mosquitto_reconnect_async(mosq)
      : mosquitto_connect_async(mosq, settings.host, Int32(settings.effectivePort), Int32(settings.keepaliveSeconds))
    if rc == MOSQ_ERR_SUCCESS.rawValue {
      // Later attempts reuse host, port and keepalive (mosquitto_reconnect_async).
      everConnected = true
      logger.debug("connecting to \(settings.host):\(settings.effectivePort)", event: "mqtt-connecting")
      sync()
      return
    }
    logger.warning(
      "cannot connect to the broker \(settings.host):\(settings.effectivePort): \(Self.describe(rc))",
      event: "mqtt-connect-failed")
    sync()
    scheduleRetry()
  }

  private func scheduleRetry() {
    guard !stopping, retryTimer == nil else { return }
    let delay = backoff.delay()
    retryTimer = loop.schedule(at: loop.now() + delay) { [weak self] _ in self?.attempt() }
  }

  private func connected(_ rc: Int32) {
    guard rc == 0 else {
      // A refused CONNECT (bad credentials, not authorised): libmosquitto closes the socket next.
      let reason = String(cString: mosquitto_connack_string(rc))
      logger.error("the broker refused the connection: \(reason)", event: "mqtt-refused")
      return
    }
    isConnected = true
    backoff.reset()
    logger.notice("connected to the broker \(settings.host):\(settings.effectivePort)", event: "mqtt-connected")
    onConnected()
  }

  private func disconnected(_ rc: Int32) {
    let was = isConnected
    isConnected = false
    if !stopping {
      logger.warning(
        "lost the broker connection: \(rc == 0 ? "closed" : Self.describe(rc))", event: "mqtt-disconnected")
    }
    if was { onLost() }
    scheduleRetry()
  }

  /// Publishes one message (queued by libmosquitto; written as the socket allows).
  func publish(_ message: MQTTMessage) {
    guard isConnected else { return }
    let rc = message.payload.withUnsafeBytes { bytes in
      mosquitto_publish(
        mosq, nil, message.topic, Int32(bytes.count), bytes.baseAddress, message.qos, message.retain)
    }
    if rc != MOSQ_ERR_SUCCESS.rawValue {
      logger.warning("publish to \(message.topic) failed: \(Self.describe(rc))", event: "mqtt-publish-failed")
    }
    sync()
  }

  func subscribe(_ topics: [String]) {
    for topic in topics {
      let rc = mosquitto_subscribe(mosq, nil, topic, 1)
      if rc != MOSQ_ERR_SUCCESS.rawValue {
        logger.warning("subscribe to \(topic) failed: \(Self.describe(rc))", event: "mqtt-subscribe-failed")
      }
    }
    sync()
  }

  /// Publishes `last` (the bridge's `offline`), disconnects cleanly and gives the queued
  /// packets up to `timeout` to leave (a clean disconnect does not send the Last Will).
  func stop(last: MQTTMessage, timeout: TimeSpan) {
    stopping = true
    if let retryTimer { loop.cancel(retryTimer) }
    if let miscTimer { loop.cancel(miscTimer) }
    guard isConnected else { return }
    publish(last)
    _ = mosquitto_disconnect(mosq)
    let deadline = loop.now() + timeout
    while mosquitto_socket(mosq) >= 0 && mosquitto_want_write(mosq) && loop.now() < deadline {
      var p = pollfd(fd: mosquitto_socket(mosq), events: Int16(POLLOUT), revents: 0)
      let ms = max(1, (deadline - loop.now()).milliseconds)
      if poll(&p, 1, Int32(clamping: ms)) <= 0 { break }
      _ = mosquitto_loop_write(mosq, 1)
    }
    sync()
  }

  // MARK: The loop

  /// Makes the epoll watch follow libmosquitto's socket and its wish to write, and keeps
  /// the keepalive timer: called after every libmosquitto call.
  private func sync() {
    let fd = mosquitto_socket(mosq)
    if fd < 0 && watchedFD >= 0 {
      // libmosquitto closed the socket (a failed connect, a read or write error); make sure
      // the loss is handled even where it did not call the disconnect callback.
      if isConnected { disconnected(MOSQ_ERR_CONN_LOST.rawValue) } else { scheduleRetry() }
    }
    if fd != watchedFD {
      if let watch { loop.unregister(watch) }
      watch = nil
      watchedFD = -1
      if fd >= 0 {
        let interest = wanted()
        do {
          watch = try loop.register(fd: fd, interest: interest) { [weak self] events in self?.ready(events) }
          watchedFD = fd
          watchedInterest = interest
        } catch {
          logger.error("cannot watch the broker socket: \(error)", event: "mqtt-watch-failed")
        }
      }
    } else if let watch {
      let interest = wanted()
      if interest != watchedInterest {
        try? loop.setInterest(watch, interest)
        watchedInterest = interest
      }
    }
    if fd >= 0 && miscTimer == nil && !stopping { scheduleMisc() }
    if fd < 0, let miscTimer {
      loop.cancel(miscTimer)
      self.miscTimer = nil
    }
  }

  private func wanted() -> EventLoop.IOEvents {
    mosquitto_want_write(mosq) ? [.readable, .writable] : [.readable]
  }

  private func ready(_ events: EventLoop.IOEvents) {
    if events.contains(.readable) || events.contains(.hangup) || events.contains(.error) {
      // Up to 64 packets, until the socket would block.
      _ = mosquitto_loop_read(mosq, 64)
      // With TLS, OpenSSL may hold decrypted packets that epoll cannot see: read them too,
      // a bounded number of rounds per turn, and come back next turn for the rest.
      var rounds = 0
      while mosquitto_socket(mosq) >= 0 && actiond_mosquitto_tls_pending(mosq) > 0 && rounds < 16 {
        _ = mosquitto_loop_read(mosq, 64)
        rounds += 1
      }
      if mosquitto_socket(mosq) >= 0 && actiond_mosquitto_tls_pending(mosq) > 0, let watch { loop.dispatchAgain(watch) }
    }
    if events.contains(.writable) && mosquitto_socket(mosq) >= 0 {
      _ = mosquitto_loop_write(mosq, 1)
    }
    sync()
  }

  /// `mosquitto_loop_misc` sends PINGREQ once nothing went out for a keepalive and drops a
  /// connection whose PINGRESP did not come. Run every third of the keepalive, a ping is at
  /// most that late: well inside the broker's 1.5 × keepalive.
  private func scheduleMisc() {
    let period = TimeSpan.milliseconds(Int64(settings.keepaliveSeconds) * 1000 / 3)
    miscTimer = loop.schedule(at: loop.now() + period) { [weak self] _ in
      guard let self else { return }
      self.miscTimer = nil
      _ = mosquitto_loop_misc(self.mosq)
      self.sync()
    }
  }
}

/// A failure that stops the bridge, with its message.
struct BridgeFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
