// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import CActiondShim
import CMosquitto
import Glibc

/// One MQTT 3.1.1 client session through libmosquitto, driven by the ``EventLoop``: the
/// broker's socket is an epoll watch (readable always, writable while
/// `mosquitto_want_write`), `mosquitto_loop_misc` runs from a timer for the keepalive, and
/// no libmosquitto thread exists (no `mosquitto_loop_start`, no polling).
///
/// Connecting never blocks the loop: the broker's host name is resolved by glibc's
/// `getaddrinfo_a` in its own thread, which signals an eventfd the loop watches (see
/// ``attempt()``), then `mosquitto_connect_async` makes a non-blocking TCP connect (the
/// CONNECT packet goes out when the socket becomes writable). A failed resolution or
/// attempt, a lost connection, or a CONNECT without CONNACK within the keepalive is retried
/// after a ``Backoff`` delay; the session is persistent (fixed client id, clean session off)
/// so the broker keeps QoS 1 commands for the bridge meanwhile.
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
  private let clientID: String
  private let willTopic: String
  private let password: String?
  /// One client per connection: see ``freshClient()``.
  private var mosq: OpaquePointer
  /// `mosq` has been connected (or tried): the next attempt takes a fresh client.
  private var used = false
  /// The eventfd glibc's resolver thread signals, and its watch.
  private let resolvedFD: Int32
  private var resolvedWatch: WatchID?
  /// The name being resolved (at most one at a time).
  private var resolution: OpaquePointer?
  private var watch: WatchID?
  private var watchedFD: Int32 = -1
  private var watchedInterest: EventLoop.IOEvents = []
  private var miscTimer: TimerID?
  private var retryTimer: TimerID?
  private var backoff = Backoff()
  private var stopping = false
  /// The first error of a libmosquitto read or write in this turn (reported if it closed the socket).
  private var lastFailure: Int32?
  /// The current attempt's failure was logged (by the disconnect callback or ``sync()``).
  private var attemptReported = false
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
    self.clientID = clientID
    self.willTopic = willTopic
    self.password = password
    mosquitto_lib_init()
    mosq = try Self.makeClient(settings: settings, clientID: clientID, willTopic: willTopic, password: password)
    resolvedFD = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
    guard resolvedFD >= 0 else {
      mosquitto_destroy(mosq)
      throw BridgeFailure("eventfd: \(String(cString: strerror(errno)))")
    }
    mosquitto_user_data_set(mosq, Unmanaged.passUnretained(self).toOpaque())
    resolvedWatch = try loop.register(fd: resolvedFD, interest: [.readable]) { [weak self] _ in self?.resolved() }
  }

  /// A libmosquitto client with the session's options and Last Will, and the callbacks
  /// (which find the connection through the user data, set by the caller).
  private static func makeClient(
    settings: BridgeSettings, clientID: String, willTopic: String, password: String?
  ) throws -> OpaquePointer {
    guard let m = mosquitto_new(clientID, false, nil) else {
      throw BridgeFailure("mosquitto_new failed: \(String(cString: strerror(errno)))")
    }
    func check(_ rc: Int32, _ what: String) throws {
      guard rc == MOSQ_ERR_SUCCESS.rawValue else {
        mosquitto_destroy(m)
        throw BridgeFailure("libmosquitto: \(what): \(describe(rc))")
      }
    }
    try check(mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311), "protocol version")
    // Without it Nagle holds a command's PUBACK or a state's small PUBLISH until the
    // broker's delayed ACK (~40 ms on Linux loopback): publish → state took p50 40 ms.
    // libmosquitto sets it on every socket it makes (1.6 and later; Debian 12 has 2.0.11).
    try check(mosquitto_int_option(m, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY")
    try check(
      mosquitto_will_set(m, willTopic, Int32(BridgeModel.offline.utf8.count), BridgeModel.offline, 1, true),
      "last will")
    if let username = settings.username {
      try check(mosquitto_username_pw_set(m, username, password), "user name and password")
    }
    if let tls = settings.tls {
      try check(mosquitto_tls_set(m, tls.caFile, nil, tls.certFile, tls.keyFile, nil), "TLS files")
    }
    mosquitto_connect_callback_set(m) { _, object, rc in
      guard let object else { return }
      Unmanaged<MQTTConnection>.fromOpaque(object).takeUnretainedValue().connected(rc)
    }
    mosquitto_disconnect_callback_set(m) { _, object, rc in
      guard let object else { return }
      Unmanaged<MQTTConnection>.fromOpaque(object).takeUnretainedValue().disconnected(rc)
    }
    // libmosquitto's own errors (OpenSSL's reason for a failed handshake: "certificate
    // verify failed"); its other levels are per-packet chatter.
    mosquitto_log_callback_set(m) { _, object, level, text in
      guard level == MOSQ_LOG_ERR, let object, let text else { return }
      Unmanaged<MQTTConnection>.fromOpaque(object).takeUnretainedValue().logger.warning(
        "libmosquitto: \(String(cString: text))", event: "mqtt-library-error")
    }
    mosquitto_subscribe_callback_set(m) { _, object, mid, _, _ in
      guard let object else { return }
      Unmanaged<MQTTConnection>.fromOpaque(object).takeUnretainedValue().subscribed(mid)
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
    return m
  }

  /// Replaces a client that was connected by a new one, so that a new connection starts
  /// with nothing from the last: libmosquitto would resend the last connection's
  /// unacknowledged QoS 1 publishes after the CONNACK, i.e. after the states published
  /// anew on connect, and a state that changed since (a toggle turned on in a network
  /// cut, its ON never acknowledged, then off again) would come back stale and stay so,
  /// retained. Everything is published again on connect anyway; an event that was on its
  /// way is dropped, as are those while disconnected. Commands are unaffected: their
  /// redelivery is the broker's (persistent session). Only called outside libmosquitto's
  /// calls (its callbacks included), from a timer or the resolver's watch.
  private func freshClient() -> Bool {
    guard used else { return true }
    let fresh: OpaquePointer
    do {
      fresh = try Self.makeClient(settings: settings, clientID: clientID, willTopic: willTopic, password: password)
    } catch {
      logger.error("cannot set up the MQTT client again: \(error)", event: "mqtt-client-failed")
      return false
    }
    if let watch { loop.unregister(watch) }
    watch = nil
    watchedFD = -1
    mosquitto_destroy(mosq)  // its socket is closed already (a loss) or now
    mosq = fresh
    mosquitto_user_data_set(mosq, Unmanaged.passUnretained(self).toOpaque())
    used = false
    return true
  }

  deinit {
    if let watch { loop.unregister(watch) }
    if let resolvedWatch { loop.unregister(resolvedWatch) }
    // A resolution glibc is still working on frees itself and leaves the eventfd alone.
    if let resolution { actiond_resolution_free(resolution) }
    Syscall.close(resolvedFD)
    mosquitto_destroy(mosq)
  }

  static func describe(_ rc: Int32) -> String {
    if rc == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
    // libmosquitto leaves getaddrinfo's code in errno.
    if rc == MOSQ_ERR_EAI.rawValue { return String(cString: gai_strerror(errno)) }
    // libmosquitto 2.0.11's mosquitto_strerror calls this one "Unknown error."
    if rc == MOSQ_ERR_KEEPALIVE.rawValue { return "no packet from the broker for two keepalives (ping unanswered)" }
    return String(cString: mosquitto_strerror(rc))
  }

  /// The first connection attempt (later ones are scheduled by the connection itself).
  func start() { attempt() }

  /// One connection attempt: a numeric broker address is used as it is; a name is first
  /// resolved off the loop (``resolved()`` continues).
  ///
  /// libmosquitto's own connect resolves with a blocking getaddrinfo: with a DNS server
  /// that does not answer, the loop (SIGTERM, actiond's events, everything) would stall
  /// for the resolver's whole timeout at every attempt.
  private func attempt() {
    retryTimer = nil
    guard !stopping, resolution == nil else { return }
    if Self.isNumeric(settings.host) {
      connect(to: [settings.host])
      return
    }
    var error: Int32 = 0
    guard let r = actiond_resolve_start(settings.host, resolvedFD, &error) else {
      resolveFailed(error)
      return
    }
    resolution = r
    logger.debug("resolving \(settings.host)", event: "mqtt-resolving")
  }

  /// A numeric IPv4 or IPv6 address (getaddrinfo with AI_NUMERICHOST never asks a resolver).
  private static func isNumeric(_ host: String) -> Bool {
    var hints = addrinfo()
    hints.ai_flags = AI_NUMERICHOST
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var result: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, nil, &hints, &result) == 0 else { return false }
    freeaddrinfo(result)
    return true
  }

  /// glibc's resolver thread signalled the eventfd: the answer is in.
  private func resolved() {
    var count: UInt64 = 0
    _ = read(resolvedFD, &count, 8)
    guard let r = resolution else { return }
    let status = actiond_resolution_status(r)
    guard status != actiond_EAI_INPROGRESS else { return }
    resolution = nil
    defer { actiond_resolution_free(r) }
    guard !stopping else { return }
    guard status == 0 else {
      resolveFailed(status)
      return
    }
    if settings.tls != nil {
      // With TLS libmosquitto checks the broker's certificate against, and sends as SNI,
      // the host string given to connect: it must stay the name. libmosquitto resolves it
      // again, blocking, but just after this answer: /etc/hosts or the DNS server that
      // has just answered (a resolver that stops answering in between is the one stall
      // left).
      connect(to: [settings.host])
      return
    }
    // Without TLS the addresses themselves, in getaddrinfo's order: libmosquitto's
    // getaddrinfo on a numeric address does not ask a resolver, and trying them in turn
    // while one fails at once (no route to an IPv6 address) is what it does with a name.
    var addresses: [String] = []
    var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    var i = 0
    while actiond_resolution_numeric_host(r, i, &buffer, buffer.count) == 0 {
      let address = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if !addresses.contains(address) { addresses.append(address) }
      i += 1
    }
    logger.debug("\(settings.host) is \(addresses.joined(separator: ", "))", event: "mqtt-resolved")
    connect(to: addresses)
  }

  private func resolveFailed(_ error: Int32) {
    logger.warning(
      "cannot resolve the broker's host name \(settings.host): \(String(cString: gai_strerror(error)))",
      event: "mqtt-resolve-failed")
    scheduleRetry()
  }

  /// Starts a non-blocking connect to the first of `hosts` that does not fail at once.
  private func connect(to hosts: [String]) {
    guard freshClient() else {
      scheduleRetry()
      return
    }
    var rc = MOSQ_ERR_INVAL.rawValue
    for host in hosts {
      used = true
      rc = mosquitto_connect_async(mosq, host, Int32(settings.effectivePort), Int32(settings.keepaliveSeconds))
      if rc == MOSQ_ERR_SUCCESS.rawValue {
        attemptReported = false
        let via = host == settings.host ? "" : " (\(host))"
        logger.debug("connecting to \(settings.host)\(via):\(settings.effectivePort)", event: "mqtt-connecting")
        sync()
        return
      }
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
    brief = [:]
    backoff.reset()
    logger.notice("connected to the broker \(settings.host):\(settings.effectivePort)", event: "mqtt-connected")
    logger.debug("broker socket: TCP_NODELAY \(noDelay().map { $0 ? "on" : "off" } ?? "unknown")", event: "mqtt-socket")
    onConnected()
  }

  private func disconnected(_ rc: Int32) {
    let was = isConnected
    isConnected = false
    attemptReported = true
    if was && !stopping {
      logger.warning(
        "lost the broker connection: \(rc == 0 ? "closed" : Self.describe(rc))", event: "mqtt-disconnected")
    } else if !stopping {
      // A CONNECT that got no CONNACK (a connection made into a network cut) is given up
      // by libmosquitto's keepalive check, like a silent connection.
      let why =
        rc == MOSQ_ERR_KEEPALIVE.rawValue
        ? "no answer within the keepalive (\(settings.keepaliveSeconds) s)" : rc == 0 ? "closed" : Self.describe(rc)
      logger.warning(
        "cannot connect to the broker \(settings.host):\(settings.effectivePort): \(why)", event: "mqtt-connect-failed")
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

  /// Subscribes to `topics` (QoS 0) only for the retained messages the broker hands over at
  /// subscribe, and unsubscribes as soon as the SUBACK is in: the broker queues those
  /// retained messages before the SUBACK, so they all arrive, and the bridge's own later
  /// publications on these topics are not echoed back to it for the rest of the session.
  func subscribeBriefly(_ topics: [String]) {
    for topic in topics {
      var mid: Int32 = 0
      let rc = mosquitto_subscribe(mosq, &mid, topic, 0)
      if rc == MOSQ_ERR_SUCCESS.rawValue {
        brief[mid] = topic
      } else {
        logger.warning("subscribe to \(topic) failed: \(Self.describe(rc))", event: "mqtt-subscribe-failed")
      }
    }
    sync()
  }

  /// Subscriptions made by ``subscribeBriefly(_:)`` whose SUBACK has not come, by packet id.
  private var brief: [Int32: String] = [:]

  private func subscribed(_ mid: Int32) {
    guard let topic = brief.removeValue(forKey: mid) else { return }
    let rc = mosquitto_unsubscribe(mosq, nil, topic)
    if rc != MOSQ_ERR_SUCCESS.rawValue {
      logger.warning("unsubscribe from \(topic) failed: \(Self.describe(rc))", event: "mqtt-subscribe-failed")
    }
    // Called from within libmosquitto's read: ready() syncs the watch afterwards.
  }

  /// Whether the broker socket has TCP_NODELAY, read back from the socket itself (the
  /// bridge's diagnostics; Tests/mqtt checks it), nil without a socket.
  func noDelay() -> Bool? {
    let fd = mosquitto_socket(mosq)
    guard fd >= 0 else { return nil }
    var value: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &value, &length) == 0 else { return nil }
    return value != 0
  }

  /// Publishes `last` (the bridge's `offline`), disconnects cleanly and gives the queued
  /// packets up to `timeout` to leave (a clean disconnect does not send the Last Will).
  func stop(last: MQTTMessage, timeout: TimeSpan) {
    stopping = true
    if let retryTimer { loop.cancel(retryTimer) }
    if let miscTimer { loop.cancel(miscTimer) }
    if let resolution {
      // glibc's thread may be waiting for a DNS server: leave it (the process is ending).
      actiond_resolution_free(resolution)
      self.resolution = nil
    }
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
      let rc = lastFailure ?? MOSQ_ERR_CONN_LOST.rawValue
      if isConnected {
        disconnected(rc)
      } else {
        // Before CONNACK, e.g. a TLS handshake that failed (a certificate for another name):
        // libmosquitto closes without the callback, and the attempt would fail unseen.
        if !attemptReported {
          logger.warning(
            "cannot connect to the broker \(settings.host):\(settings.effectivePort): \(Self.describe(rc))",
            event: "mqtt-connect-failed")
          attemptReported = true
        }
        scheduleRetry()
      }
    }
    lastFailure = nil
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
      note(mosquitto_loop_read(mosq, 64))
      // With TLS, OpenSSL may hold decrypted packets that epoll cannot see: read them too,
      // a bounded number of rounds per turn, and come back next turn for the rest.
      var rounds = 0
      while mosquitto_socket(mosq) >= 0 && actiond_mosquitto_tls_pending(mosq) > 0 && rounds < 16 {
        note(mosquitto_loop_read(mosq, 64))
        rounds += 1
      }
      if mosquitto_socket(mosq) >= 0 && actiond_mosquitto_tls_pending(mosq) > 0, let watch { loop.dispatchAgain(watch) }
    }
    if events.contains(.writable) && mosquitto_socket(mosq) >= 0 {
      note(mosquitto_loop_write(mosq, 1))
    }
    sync()
  }

  /// Keeps the error a libmosquitto call returned, for ``sync()``'s report when it closed
  /// the socket.
  private func note(_ rc: Int32) {
    if rc != MOSQ_ERR_SUCCESS.rawValue && lastFailure == nil { lastFailure = rc }
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
