// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CActiondShim
import Glibc

/// How the socket server is set up; mirrors the configuration's `socket` section.
public struct ServerConfiguration: Sendable {
  public var path: String = "/run/actiond/actiond.sock"
  /// File mode of a socket the daemon creates (not of an inherited one).
  public var mode: mode_t = 0o660
  /// Group (name or number) of the socket file; nil keeps the daemon's group.
  public var group: String?
  /// Members of this group (name or number) may send mutating requests.
  public var controlGroup: String?
  /// These users (names or uids) may send mutating requests (root always may).
  public var controlUsers: [String] = []
  public var maxClients = 64
  public var maxLineLength = ProtocolVersion.maxLineLength
  /// Unsent bytes a client may have queued before it is dropped with `lagged`.
  public var outboundLimit = 1 << 20
  /// How long a closing client (after `lagged` or `line-too-long`) gets to read its final error.
  public var closeGrace: TimeSpan = .seconds(5)
  /// The most lines one client gets handled per loop turn; the rest wait for the next
  /// turn, after the buttons and the other clients had theirs.
  public var linesPerTurn = 16
  /// The most bytes of lines one client gets handled per loop turn (at least one line).
  public var bytesPerTurn = 64 * 1024
  /// The most new connections greeted (admitted) per loop turn; up to four times as many
  /// are accepted, to learn who they are and to drain the listening queue.
  public var acceptsPerTurn = 16
  /// Connections of one user accepted beyond its accept rate, waiting to be greeted when
  /// its bucket refills; more are closed at once (`too-many-clients`).
  public var maxDeferredPerUser = 64
  /// The same, all users together: bounds the descriptors a storm of many users can hold.
  public var maxDeferred = 256
  /// The work one client (and all new connections together) may cause over time;
  /// nil serves every client as fast as the per-turn bounds allow.
  public var rateLimits: ClientRateLimits? = .standard
  /// Use a socket passed through LISTEN_FDS/LISTEN_PID when there is one.
  public var socketActivation = true

  public init() {}

  /// The configuration file's `socket` section.
  public init(_ settings: SocketSettings) {
    path = settings.path
    mode = mode_t(settings.mode)
    group = settings.group?.description
    controlGroup = settings.controlGroup?.description
    controlUsers = settings.controlUsers.map(\.description)
    maxClients = settings.maxClients
  }
}

/// Decides who may send mutating requests: root, the daemon's own user, the control
/// users and members of the control group (configuration.md, `socket`).
public struct AccessPolicy: Hashable, Sendable {
  public var controlGroup: UInt32?
  public var controlUsers: Set<UInt32>
  /// The uid the daemon runs as: `make run` as a normal user is driven by that user, and an
  /// intent running as the daemon's user may call `actionctl`.
  public var daemonUser: UInt32
  public init(controlGroup: UInt32?, controlUsers: Set<UInt32>, daemonUser: UInt32 = geteuid()) {
    self.controlGroup = controlGroup
    self.controlUsers = controlUsers
    self.daemonUser = daemonUser
  }

  public func allowsControl(_ peer: PeerCredentials) -> Bool {
    if peer.uid == 0 || peer.uid == daemonUser || controlUsers.contains(peer.uid) { return true }
    guard let controlGroup else { return false }
    return peer.gid == controlGroup || peer.groups.contains(controlGroup)
  }

  /// "only root, uid 998 (actiond's own), group actiond and uids 1000, 1001 may act".
  var rule: String {
    var who = ["root"]
    if daemonUser != 0 { who.append("uid \(daemonUser) (actiond's own)") }
    if let controlGroup { who.append("group \(UnixSocket.groupName(controlGroup) ?? String(controlGroup))") }
    if !controlUsers.isEmpty { who.append("uids " + controlUsers.sorted().map(String.init).joined(separator: ", ")) }
    return "only " + who.joined(separator: ", ") + " may act"
  }
}

/// The daemon's socket server: newline-delimited JSON over a Unix stream socket.
///
/// Single-threaded on the ``EventLoop``; never blocks on a client. Per connection:
/// a ``LineFramer``, a bounded queue of outbound lines written as the socket drains
/// (EPOLLOUT), an optional subscription, and the credentials read at accept time.
///
/// The listener and every connection are `.low` priority watches, and the work one
/// client causes per turn is bounded (one read of at most 64 KiB, at most
/// `linesPerTurn` lines and `bytesPerTurn` bytes; a client with more buffered lines is
/// served again next turn and not read from meanwhile), so abusive clients cannot
/// delay a button's events or its hold timer (issue 13, item 14).
///
/// A peer that shuts down its writing side is not gone: it still gets the replies to
/// its pending requests, and a subscriber keeps getting events until it closes or a
/// write fails. Only then, or once nothing is pending, is the connection closed.
public final class ControlServer {
  public let configuration: ServerConfiguration
  public let policy: AccessPolicy
  private let loop: EventLoop
  private weak var handler: (any RequestHandler)?
  /// Where the server writes what an operator should know (refused clients, drops).
  public var log: (String) -> Void = { _ in }

  private var listener: Listener?
  private var listenerWatch: WatchID?
  private var listenerPause: TimerID?
  /// New connections of one user (uid): its accept bucket (``ClientRateLimits``) and its
  /// connections accepted beyond it, oldest first, waiting to be greeted.
  private struct Admission {
    var bucket: TokenBucket
    var deferred: [(fd: Int32, credentials: PeerCredentials)] = []
  }
  /// Per uid, so that one user's connection storm spends its own accept rate, not that
  /// of everyone: another user's connection is accepted at the kernel's pace and greeted
  /// at once. Entries whose bucket is full and that wait for nothing are dropped when the
  /// table grows (they are the same as a fresh entry), so its size stays bounded.
  private var admissions: [UInt32: Admission] = [:]
  private var deferredCount = 0
  /// The one timer that greets deferred connections again; exists only while some wait.
  private var admissionTimer: (id: TimerID, at: MonotonicInstant)?
  /// Throttled connections, and the one timer that serves the first of them again: it
  /// exists only while some connection is throttled.
  private var throttled: Set<ClientID> = []
  private var throttleTimer: (id: TimerID, at: MonotonicInstant)?
  private var clients: [ClientID: Connection] = [:]
  private var nextClient: UInt64 = 1
  private var pendingProvider: [String: PendingProviderRequest] = [:]
  private var nextProviderRequest: UInt64 = 1
  private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
  /// Where several queued lines are joined for one send(2).
  /// Open ``beginBatch()`` calls, and the clients with lines queued meanwhile.
  private var batchDepth = 0
  private var batched: [Connection] = []
  private var writeBuffer: [UInt8] = {
    var b: [UInt8] = []
    b.reserveCapacity(64 * 1024)
    return b
  }()

  /// Resolves the groups in `configuration`; `start()` opens the socket.
  public init(configuration: ServerConfiguration, loop: EventLoop, handler: any RequestHandler) throws {
    self.configuration = configuration
    self.loop = loop
    self.handler = handler
    policy = AccessPolicy(
      controlGroup: try configuration.controlGroup.map(UnixSocket.groupID),
      controlUsers: Set(try configuration.controlUsers.map(UnixSocket.userID)))
  }

  deinit {
    for c in clients.values { Syscall.close(c.fd) }
    for a in admissions.values { for d in a.deferred { Syscall.close(d.fd) } }
    listener?.close()
  }

  /// Number of open connections.
  public var clientCount: Int { clients.count }
  /// Connections whose rate limit is holding their requests back now.
  public var throttledCount: Int { throttled.count }
  /// Whether the timer that serves throttled connections again is scheduled.
  public var hasThrottleTimer: Bool { throttleTimer != nil }
  /// Whether some user's new connections wait because its accept rate is spent.
  public var isAcceptThrottled: Bool { deferredCount > 0 }
  /// Accepted connections waiting for their user's accept rate (not yet greeted).
  public var deferredConnectionCount: Int { deferredCount }
  /// Request lines handled since the start (every line a client sent, valid or not).
  public private(set) var linesHandled = 0
  /// send(2) calls to connected clients since the start (what a batch saves: tests).
  public private(set) var sends = 0
  /// Number of connections with an event subscription.
  public var subscriberCount: Int { clients.values.count { $0.subscription != nil && !$0.closing } }
  /// The socket path clients connect to (the configured one; also when inherited).
  public var path: String { listener?.createdPath ?? configuration.path }
  /// True when the socket was passed by systemd rather than created.
  public private(set) var isSocketActivated = false

  public func isConnected(_ id: ClientID) -> Bool { clients[id] != nil }
  /// Who a connected client is; nil once it is gone.
  public func client(_ id: ClientID) -> ClientInfo? { clients[id]?.info }

  /// Opens the listening socket (inherited through socket activation when configured
  /// and present, otherwise created at `configuration.path`) and starts accepting.
  public func start() throws {
    precondition(listener == nil, "ControlServer.start() called twice")
    let l: Listener
    let passed =
      configuration.socketActivation ? SocketActivation.listenFDs(environment: ProcessEnvironment.current()) : []
    if let first = passed.first {
      // Children (intents) must not believe they were socket-activated.
      for key in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(key) }
      l = try Listener.adopt(fd: first)
      isSocketActivated = true
    } else {
      l = try Listener.bind(
        path: configuration.path, mode: configuration.mode, group: try configuration.group.map(UnixSocket.groupID))
    }
    listener = l
    listenerWatch = try loop.register(fd: l.fd, interest: .readable, priority: .low) { [unowned self] _ in
      acceptClients()
    }
  }

  /// Closes every connection (pending provider requests complete with `.disconnected`)
  /// and the listening socket, removing the socket file the server created.
  public func stop() {
    for id in Array(clients.keys).sorted(by: { $0.rawValue < $1.rawValue }) {
      if let c = clients[id] {
        enqueue(.error(id: nil, ProtocolError(.shuttingDown, "actiond is stopping")), to: c, force: true)
        close(c)
      }
    }
    if let listenerWatch { loop.unregister(listenerWatch) }
    if let listenerPause { loop.cancel(listenerPause) }
    if let admissionTimer { loop.cancel(admissionTimer.id) }
    admissionTimer = nil
    for a in admissions.values { for d in a.deferred { Syscall.close(d.fd) } }
    admissions = [:]
    deferredCount = 0
    listenerWatch = nil
    listener?.close()
    listener = nil
  }

  // MARK: Broadcasting and provider requests

  /// From now until the matching ``endBatch()``, lines for clients are queued, not sent:
  /// what one loop turn announces reaches each client in one send(2), and wakes its
  /// reader once (the daemon opens one around every input). Nests.
  public func beginBatch() { batchDepth += 1 }

  /// Sends what was queued since the outermost ``beginBatch()``, one send(2) per client
  /// for as many lines as fit.
  public func endBatch() {
    batchDepth -= 1
    guard batchDepth == 0 else { return }
    sendBatched()
  }

  /// Sends what the batch queued so far (one send(2) per client); the batch goes on.
  public func sendBatched() {
    let pending = batched
    batched = []
    for c in pending where clients[c.info.id] === c && c.head < c.queue.count { flush(c) }
  }

  /// Sends `event` to every subscriber whose filter matches. The line is encoded once
  /// and shared by all queues. Never blocks: a subscriber that cannot keep up is dropped.
  public func broadcast(_ event: Event) {
    var line: [UInt8]? = nil
    for c in Array(clients.values) where c.subscription?.matches(event) == true && !c.closing {
      if line == nil { line = ServerMessage.event(event).line }
      enqueue(line: line!, to: c)
    }
  }

  /// Sends a `perform` or `value` request to a provider connection. `completion` runs
  /// exactly once, on a later loop iteration or when the answer arrives, never inside this call.
  public func sendProviderRequest(
    to client: ClientID, _ body: ProviderRequest.Body, timeout: TimeSpan,
    completion: @escaping (ProviderOutcome) -> Void
  ) {
    guard let c = clients[client], !c.closing else {
      loop.schedule(at: loop.now()) { _ in completion(.disconnected) }
      return
    }
    let id = "p\(nextProviderRequest)"
    nextProviderRequest += 1
    let timer = loop.schedule(at: loop.now() + timeout) { [weak self] _ in
      guard let self, let pending = self.pendingProvider.removeValue(forKey: id) else { return }
      pending.completion(.timedOut)
    }
    pendingProvider[id] = PendingProviderRequest(client: client, timer: timer, completion: completion)
    enqueue(.providerRequest(ProviderRequest(id: id, body)), to: c)
  }

  // MARK: Accepting

  private func acceptClients() {
    guard let listener else { return }
    // Bounded per turn so a connection storm cannot starve the buttons (level-triggered:
    // the rest are accepted next turn). Accepting is cheap; greeting (the hello with
    // every button's snapshot) is not, so only greetings count against `acceptsPerTurn`,
    // and accepts stop at four times that. The listener is never paused for a rate:
    // the kernel's queue is drained at its pace, and each user's own bucket decides
    // whose connections are greeted now (``admitOrDefer``).
    var admitted = 0
    for _ in 0..<4 * max(1, configuration.acceptsPerTurn) {
      if admitted >= max(1, configuration.acceptsPerTurn) { return }
      let result: IOResult<Int32>
      do {
        result = try Syscall.nonBlocking {
          actiond_accept4(listener.fd, nil, nil, actiond_SOCK_CLOEXEC | actiond_SOCK_NONBLOCK)
        }
      } catch {
        switch error.rawValue {
        case ECONNABORTED, EPROTO: continue  // the peer gave up while queued
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
          log("accept: \(error); not accepting for 100 ms")
          pauseListener(until: loop.now() + .milliseconds(100))
        default:
          log("accept: \(error)")
        }
        return
      }
      guard case .done(let fd) = result else { return }
      // A peer that connected and closed without sending anything (a reconnect storm)
      // can be told nothing and asks nothing: closed at once, before it costs a token,
      // so the queue drains quickly and the clients behind it get in.
      if UnixSocket.peerLeftWithoutSending(fd) {
        Syscall.close(fd)
        continue
      }
      let credentials: PeerCredentials
      do { credentials = try UnixSocket.peerCredentials(fd) } catch {
        log("SO_PEERCRED: \(error); closing the connection")
        Syscall.close(fd)
        continue
      }
      if admitOrDefer(fd, credentials) { admitted += 1 }
    }
  }

  /// Greets a new connection now if its user's accept bucket allows (and none of the
  /// user's connections waits before it), otherwise keeps it waiting, unread and
  /// ungreeted, until the bucket refills; past the bounds it is closed with
  /// `too-many-clients`. True when it was greeted.
  private func admitOrDefer(_ fd: Int32, _ credentials: PeerCredentials) -> Bool {
    guard let limits = configuration.rateLimits else {
      admit(fd, credentials)
      return true
    }
    let now = loop.now()
    let uid = credentials.uid
    if admissions[uid] == nil, admissions.count >= 4 * configuration.maxClients + maxDeferredUsers {
      admissions = admissions.filter {
        !$0.value.deferred.isEmpty || !$0.value.bucket.holds($0.value.bucket.burst, at: now)
      }
    }
    var a = admissions[uid] ?? Admission(bucket: limits.acceptBucket(at: now))
    defer { admissions[uid] = a }
    if a.deferred.isEmpty, a.bucket.holds(1, at: now) {
      a.bucket.spend(1, at: now)
      admit(fd, credentials)
      return true
    }
    // Full: those that gave up while waiting make room first (a reconnect storm leaves
    // many), so only a user whose waiting peers are all still there is refused.
    if a.deferred.count >= configuration.maxDeferredPerUser { prune(&a.deferred) }
    if deferredCount >= configuration.maxDeferred {
      for other in admissions.keys where other != uid { prune(&admissions[other]!.deferred) }
    }
    guard a.deferred.count < configuration.maxDeferredPerUser, deferredCount < configuration.maxDeferred else {
      let line = ServerMessage.error(
        id: nil,
        ProtocolError(
          .tooManyClients,
          "uid \(uid) connects faster than \(limits.acceptsPerSecond) a second; try again later")
      ).line
      _ = line.withUnsafeBytes { try? UnixSocket.send(fd, $0) }
      Syscall.close(fd)
      return false
    }
    a.deferred.append((fd, credentials))
    deferredCount += 1
    scheduleAdmissions(limits, at: now, pending: a)
    return false
  }

  /// Closes the waiting connections whose peers left without sending anything.
  private func prune(_ deferred: inout [(fd: Int32, credentials: PeerCredentials)]) {
    deferred.removeAll { d in
      guard UnixSocket.peerLeftWithoutSending(d.fd) else { return false }
      Syscall.close(d.fd)
      deferredCount -= 1
      return true
    }
  }

  /// The most users whose (empty) admission entries are kept besides those that matter.
  private let maxDeferredUsers = 64

  /// Arms the admission timer for the soonest instant a waiting user's bucket holds its
  /// resume level again (a few wake-ups a second per storming user, not one per token).
  private func scheduleAdmissions(_ limits: ClientRateLimits, at now: MonotonicInstant, pending: Admission? = nil) {
    var soonest: MonotonicInstant?
    for a in admissions.values.map({ $0 }) + (pending.map { [$0] } ?? []) where !a.deferred.isEmpty {
      let at = a.bucket.instant(holding: limits.resumeLevel(of: a.bucket), from: now)
      soonest = soonest.map { min($0, at) } ?? at
    }
    guard let soonest else { return }
    if let t = admissionTimer {
      if t.at <= soonest { return }
      loop.cancel(t.id)
    }
    let id = loop.schedule(at: soonest) { [weak self] now in
      guard let self else { return }
      self.admissionTimer = nil
      self.admitDeferred(at: now)
    }
    admissionTimer = (id, soonest)
  }

  /// Greets the waiting connections whose users' buckets refilled, oldest first per user.
  private func admitDeferred(at now: MonotonicInstant) {
    guard let limits = configuration.rateLimits else { return }
    for uid in admissions.keys.sorted() {
      guard var a = admissions[uid], !a.deferred.isEmpty else { continue }
      while !a.deferred.isEmpty, a.bucket.holds(1, at: now) {
        let d = a.deferred.removeFirst()
        deferredCount -= 1
        // One that gave up while waiting costs nothing, as in the listening queue.
        if UnixSocket.peerLeftWithoutSending(d.fd) {
          Syscall.close(d.fd)
          continue
        }
        a.bucket.spend(1, at: now)
        admit(d.fd, d.credentials)
      }
      admissions[uid] = a
    }
    scheduleAdmissions(limits, at: now)
  }

  /// Level-triggered accept would spin while out of descriptors or of accept tokens: stop
  /// listening until `instant`.
  private func pauseListener(until instant: MonotonicInstant) {
    guard let listenerWatch, listenerPause == nil else { return }
    try? loop.setInterest(listenerWatch, [])
    listenerPause = loop.schedule(at: instant) { [weak self] _ in
      guard let self, let w = self.listenerWatch else { return }
      self.listenerPause = nil
      try? self.loop.setInterest(w, .readable)
    }
  }

  private func admit(_ fd: Int32, _ credentials: PeerCredentials) {
    if clients.count >= configuration.maxClients { closeHungUpClients() }
    if clients.count >= configuration.maxClients {
      // A fresh socket's send buffer always has room for one short line.
      let line = ServerMessage.error(
        id: nil, ProtocolError(.tooManyClients, "actiond serves at most \(configuration.maxClients) clients")
      ).line
      _ = line.withUnsafeBytes { try? UnixSocket.send(fd, $0) }
      Syscall.close(fd)
      log("refused a client: \(configuration.maxClients) clients connected")
      return
    }
    let id = ClientID(rawValue: nextClient)
    nextClient += 1
    let info = ClientInfo(id: id, credentials: credentials, canControl: policy.allowsControl(credentials))
    let c = Connection(fd: fd, info: info, maxLineLength: configuration.maxLineLength)
    if let limits = configuration.rateLimits {
      let now = loop.now()
      c.buckets = (limits.requestBucket(at: now), limits.byteBucket(at: now))
    }
    do {
      c.watch = try loop.register(fd: fd, interest: .readable, priority: .low) { [unowned self, unowned c] events in
        self.ready(c, events)
      }
    } catch {
      log("\(error); closing the connection")
      Syscall.close(fd)
      return
    }
    clients[id] = c
    let hello = Hello(
      client: ClientAccess(uid: credentials.uid, gid: credentials.gid, pid: credentials.pid, control: info.canControl),
      buttons: handler?.snapshot() ?? [])
    enqueue(.hello(hello), to: c)
  }

  /// Connections whose peers closed count until their hangup is handled, which may be
  /// later in this turn or the next; at the limit, ask the kernel which ones are gone so
  /// the limit counts the living (issue 13, item 4). Only runs at the limit.
  private func closeHungUpClients() {
    let open = Array(clients.values)
    var fds = open.map { pollfd(fd: $0.fd, events: 0, revents: 0) }
    guard poll(&fds, nfds_t(fds.count), 0) > 0 else { return }
    for (c, p) in zip(open, fds) where p.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { close(c) }
  }

  // MARK: Reading

  private func ready(_ c: Connection, _ events: EventLoop.IOEvents) {
    guard clients[c.info.id] === c else { return }
    if events.contains(.writable) {
      flush(c)
      guard clients[c.info.id] === c else { return }
    }
    if !c.closing {
      // A repeated dispatch (`[]`) continues a backlog and may read once it is done.
      serveInput(c, mayRead: events.contains(.readable) || events.contains(.hangup) || events.isEmpty)
      guard clients[c.info.id] === c else { return }
    }
    // A full hangup (EPOLLHUP) with nothing left to read: the peer is gone both ways, so
    // nothing more can reach it. A half-close is not a hangup (EventLoop.IOEvents).
    if events.contains(.error) || (events.contains(.hangup) && (c.readClosed || c.closing)) {
      close(c)
    }
  }

  /// Handles the lines the client sent, within this turn's budget: first the ones already
  /// buffered, then, if the budget is not spent, what one read brings.
  private func serveInput(_ c: Connection, mayRead: Bool) {
    var lines = 0
    var bytes = 0
    /// Handles buffered lines; true when the budget ran out (more may be waiting).
    func handleBuffered() -> Bool {
      while clients[c.info.id] === c, !c.closing, !c.isThrottled {
        if lines >= configuration.linesPerTurn || bytes >= configuration.bytesPerTurn { return true }
        guard let output = c.framer.next() else { return false }
        switch output {
        case .line(let line):
          lines += 1
          bytes += line.count
          linesHandled += 1
          // Sent ahead of its replies: more is buffered behind it, or what the daemon sent
          // is not all taken. One request at a time, each reply read, costs nothing.
          let pipelined = c.buckets != nil && (c.framer.bufferedCount > 0 || c.head < c.queue.count || unread(c))
          process(line, from: c)
          if pipelined, clients[c.info.id] === c, var buckets = c.buckets {
            let now = loop.now()
            buckets.requests.spend(1, at: now)
            c.buckets = buckets
            if !buckets.requests.holds(1, at: now) { throttle(c, at: now) }
          }
        case .tooLong:
          enqueue(
            .error(
              id: nil,
              ProtocolError(.lineTooLong, "a line is longer than \(configuration.maxLineLength) bytes; closing")),
            to: c, force: true)
          beginClosing(c)
        }
      }
      return false
    }
    c.handlingLines = true
    var exhausted = handleBuffered()
    if !exhausted && mayRead && !c.readClosed && clients[c.info.id] === c && !c.closing && !c.isThrottled {
      if readOnce(c) { exhausted = handleBuffered() }
    }
    c.handlingLines = false
    guard clients[c.info.id] === c else { return }
    if c.head < c.queue.count {
      flush(c)
      guard clients[c.info.id] === c else { return }
    }
    c.backlogged = exhausted && !c.closing
    if c.backlogged, let watch = c.watch { loop.dispatchAgain(watch) }
    updateInterest(c)
    finishIfDone(c)
  }

  /// One read into the framer; false when the connection was closed.
  private func readOnce(_ c: Connection) -> Bool {
    let result: IOResult<Int>
    do {
      result = try readBuffer.withUnsafeMutableBytes { buffer throws(Errno) in try Syscall.read(c.fd, into: buffer) }
    } catch {
      close(c)  // ECONNRESET and friends: the client vanished
      return false
    }
    switch result {
    case .wouldBlock: break
    case .done(0): c.readClosed = true  // the peer shut down its writing side (or closed)
    case .done(let n):
      readBuffer.withUnsafeBytes { c.framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
      if var buckets = c.buckets {
        let now = loop.now()
        buckets.bytes.spend(n, at: now)
        c.buckets = buckets
        if !buckets.bytes.holds(1, at: now) { throttle(c, at: now) }
      }
    }
    return true
  }

  /// Whether the client has not yet read everything the daemon sent it (SIOCOUTQ).
  private func unread(_ c: Connection) -> Bool { actiond_socket_unread_bytes(c.fd) > 0 }

  // MARK: Rate limits

  /// Stops serving `c` until its buckets refilled to their resume levels: its fd leaves
  /// the epoll set (so not even a hangup wakes the loop for it), its lines stay buffered
  /// and its requests unread, in order. Replies already queued go out when it is back.
  private func throttle(_ c: Connection, at now: MonotonicInstant) {
    guard let limits = configuration.rateLimits, let buckets = c.buckets, c.throttledUntil == nil else { return }
    let resume = max(
      buckets.requests.instant(holding: limits.resumeLevel(of: buckets.requests), from: now),
      buckets.bytes.instant(holding: limits.resumeLevel(of: buckets.bytes), from: now))
    c.throttledUntil = resume
    c.backlogged = false
    if let w = c.watch { loop.unregister(w) }
    c.watch = nil
    throttled.insert(c.info.id)
    if throttleTimer.map({ resume < $0.at }) ?? true { scheduleThrottleTimer(at: resume) }
  }

  private func scheduleThrottleTimer(at instant: MonotonicInstant) {
    if let t = throttleTimer { loop.cancel(t.id) }
    let id = loop.schedule(at: instant) { [unowned self] now in
      throttleTimer = nil
      resumeThrottled(at: now)
    }
    throttleTimer = (id, instant)
  }

  /// Serves again every throttled connection whose time has come (in the loop's next
  /// `.low` phase, after devices and timers), and keeps the timer for the next one.
  private func resumeThrottled(at now: MonotonicInstant) {
    var next: MonotonicInstant?
    for id in throttled.sorted(by: { $0.rawValue < $1.rawValue }) {
      guard let c = clients[id], let until = c.throttledUntil else {
        throttled.remove(id)
        continue
      }
      if until > now {
        if next.map({ until < $0 }) ?? true { next = until }
        continue
      }
      throttled.remove(id)
      c.throttledUntil = nil
      do {
        let watch = try loop.register(fd: c.fd, interest: [], priority: .low) { [unowned self, unowned c] events in
          self.ready(c, events)
        }
        c.watch = watch
        updateInterest(c)
        loop.dispatchAgain(watch)
      } catch {
        log("\(c.info.id): \(error); closing the connection")
        close(c)
      }
    }
    if let next { scheduleThrottleTimer(at: next) }
  }

  private func forgetThrottle(_ c: Connection) {
    guard throttled.remove(c.info.id) != nil, throttled.isEmpty, let t = throttleTimer else { return }
    loop.cancel(t.id)
    throttleTimer = nil
  }

  private func process(_ line: [UInt8], from c: Connection) {
    let decoded = line.withUnsafeBufferPointer { ClientMessage.decode(line: $0) }
    switch decoded {
    case .failure(let f):
      enqueue(.error(id: f.id, f.error), to: c)
    case .success(.providerReply(let reply)):
      guard let pending = pendingProvider[reply.id], pending.client == c.info.id else {
        enqueue(
          .error(id: .string(reply.id), ProtocolError(.unknownID, "no pending daemon request has id \"\(reply.id)\"")),
          to: c)
        return
      }
      pendingProvider[reply.id] = nil
      loop.cancel(pending.timer)
      switch reply.outcome {
      case .success(let result): pending.completion(.replied(result))
      case .failure(let error): pending.completion(.failed(error))
      }
    case .success(.request(let request)):
      handle(request, from: c)
    }
  }

  private func handle(_ request: Request, from c: Connection) {
    if request.isMutating && !c.info.canControl {
      let who = c.info.credentials.uid
      enqueue(
        .error(
          id: request.id,
          ProtocolError(.notPermitted, "uid \(who) may not send \"\(request.name.rawValue)\": \(policy.rule)")),
        to: c)
      return
    }
    func reply(_ result: ReplyResult) {
      enqueue(.reply(Reply(id: request.id, request: request.name, result: result)), to: c)
    }
    switch request.body {
    case .ping: reply(.empty)
    case .version: reply(.version(protocolVersion: ProtocolVersion.current, daemonVersion: ActiondVersion.string))
    case .subscribe(let filter):
      c.subscription = filter
      reply(.subscribed(filter))
    case .unsubscribe:
      c.subscription = nil
      reply(.empty)
    default:
      guard let handler else {
        enqueue(.error(id: request.id, ProtocolError(.shuttingDown, "actiond is stopping")), to: c)
        return
      }
      c.pendingRequests += 1
      handler.handle(request, from: c.info, reply: Responder(request: request, client: c.info, server: self))
    }
  }

  /// Called by ``Responder`` once per request that reached the handler.
  func finishRequest(for id: ClientID, with message: ServerMessage) {
    guard let c = clients[id] else { return }  // the client vanished: drop the reply
    c.pendingRequests -= 1
    enqueue(message, to: c)
    finishIfDone(c)
  }

  // MARK: Writing

  private func enqueue(_ message: ServerMessage, to c: Connection, force: Bool = false) {
    enqueue(line: message.line, to: c, force: force)
  }

  /// Queues a line and writes what the socket takes now. `force` bypasses the limit
  /// (for the one final error of a closing connection).
  private func enqueue(line: [UInt8], to c: Connection, force: Bool = false) {
    guard clients[c.info.id] === c, !c.closing || force else { return }
    // One line always fits an empty queue, so a large reply reaches a client that reads.
    if !force && c.queuedBytes > 0 && c.queuedBytes + line.count > configuration.outboundLimit {
      lag(c)
      return
    }
    c.queue.append(line)
    c.queuedBytes += line.count
    // While its lines are being handled, a client's replies are collected and sent at
    // the end of its turn, in as few send(2) calls as they fit.
    guard c.queue.count - c.head == 1 && !c.handlingLines else { return }
    if batchDepth > 0 { batched.append(c) } else { flush(c) }
  }

  /// The client is not reading: drop what it has not started to receive, send `lagged`
  /// and close once that is out (or after the grace period).
  private func lag(_ c: Connection) {
    log("\(c.info.id) (\(c.info.credentials)) is not reading; dropping it with \"lagged\"")
    let keep = c.offset > 0 ? 1 : 0  // a partly written line must be finished to keep the framing
    let dropped = c.queue[(c.head + keep)...].reduce(0) { $0 + $1.count }
    c.queue.removeSubrange((c.head + keep)...)
    c.queuedBytes -= dropped
    enqueue(
      .error(id: nil, ProtocolError(.lagged, "the outbound queue exceeded \(configuration.outboundLimit) bytes")),
      to: c, force: true)
    beginClosing(c)
  }

  private func beginClosing(_ c: Connection) {
    guard clients[c.info.id] === c, !c.closing else { return }
    c.closing = true
    c.closeTimer = loop.schedule(at: loop.now() + configuration.closeGrace) { [weak self, weak c] _ in
      guard let self, let c else { return }
      c.closeTimer = nil
      self.close(c)
    }
    updateInterest(c)
    finishIfDone(c)
  }

  private func flush(_ c: Connection) {
    while c.head < c.queue.count {
      let result: IOResult<Int>
      sends += 1
      do {
        if c.offset == 0 && c.head + 1 < c.queue.count && c.queue[c.head].count < writeBuffer.capacity {
          // Several whole lines: one send(2) for as many as fit the scratch buffer.
          writeBuffer.removeAll(keepingCapacity: true)
          var i = c.head
          while i < c.queue.count && writeBuffer.count + c.queue[i].count <= 64 * 1024 {
            writeBuffer.append(contentsOf: c.queue[i])
            i += 1
          }
          result = try writeBuffer.withUnsafeBytes { bytes throws(Errno) in try UnixSocket.send(c.fd, bytes) }
        } else {
          result = try c.queue[c.head].withUnsafeBytes { bytes throws(Errno) in
            try UnixSocket.send(c.fd, UnsafeRawBufferPointer(rebasing: bytes[c.offset...]))
          }
        }
      } catch {
        close(c)  // EPIPE/ECONNRESET: the reader is gone
        return
      }
      guard case .done(var n) = result else { break }
      c.queuedBytes -= n
      // Consume `n` bytes across the lines they came from.
      while n > 0 {
        let rest = c.queue[c.head].count - c.offset
        if n < rest {
          c.offset += n
          n = 0
        } else {
          n -= rest
          c.head += 1
          c.offset = 0
        }
      }
    }
    if c.head == c.queue.count {
      c.queue.removeAll(keepingCapacity: true)
      c.head = 0
    } else if c.head >= 64 && c.head * 2 >= c.queue.count {
      c.queue.removeFirst(c.head)
      c.head = 0
    }
    updateInterest(c)
    finishIfDone(c)
  }

  private func updateInterest(_ c: Connection) {
    guard let watch = c.watch, clients[c.info.id] === c else { return }
    var interest: EventLoop.IOEvents = []
    // A backlogged client is not read from until its buffered lines are handled, so its
    // unread requests wait in its own socket buffer (and its writes block), not in ours.
    if !c.readClosed && !c.closing && !c.backlogged { interest.insert(.readable) }
    if c.head < c.queue.count { interest.insert(.writable) }
    do { try loop.setInterest(watch, interest) } catch {
      log("\(c.info.id): \(error); closing the connection")
      close(c)
    }
  }

  /// Closes connections that have nothing more to do: a closing one whose final error
  /// is out, or one whose peer stopped sending, whose every line was handled, got every
  /// reply and is not subscribed.
  private func finishIfDone(_ c: Connection) {
    guard clients[c.info.id] === c, c.head == c.queue.count else { return }
    if c.closing
      || (c.readClosed && !c.backlogged && !c.isThrottled && c.pendingRequests == 0 && c.subscription == nil)
    {
      close(c)
    }
  }

  private func close(_ c: Connection) {
    guard clients.removeValue(forKey: c.info.id) != nil else { return }
    forgetThrottle(c)
    if let w = c.watch { loop.unregister(w) }
    if let t = c.closeTimer { loop.cancel(t) }
    c.watch = nil
    Syscall.close(c.fd)
    // Fail what the vanished provider still owed, then tell the engine.
    let owed = pendingProvider.filter { $0.value.client == c.info.id }.sorted { $0.key < $1.key }
    for (key, pending) in owed {
      pendingProvider[key] = nil
      loop.cancel(pending.timer)
      pending.completion(.disconnected)
    }
    handler?.clientDisconnected(c.info)
  }
}

private struct PendingProviderRequest {
  var client: ClientID
  var timer: TimerID
  var completion: (ProviderOutcome) -> Void
}

/// One client connection's state; owned by the server's `clients` table.
private final class Connection {
  let fd: Int32
  let info: ClientInfo
  var watch: WatchID?
  var framer: LineFramer
  /// Outbound lines; `head` is the one being written, `offset` bytes of it are out.
  var queue: [[UInt8]] = []
  var head = 0
  var offset = 0
  var queuedBytes = 0
  var subscription: SubscriptionFilter?
  /// The peer shut down its sending side (EOF).
  var readClosed = false
  /// Lines may be buffered beyond this turn's budget: served again next turn, not read from.
  var backlogged = false
  /// Its lines are being handled: replies wait for one flush at the end.
  var handlingLines = false
  /// A final error is queued; the connection closes when it is out.
  var closing = false
  var closeTimer: TimerID?
  /// Requests handed to the handler and not yet answered.
  var pendingRequests = 0
  /// Its rate limits' buckets (``ClientRateLimits``); nil when the server has none.
  var buckets: (requests: TokenBucket, bytes: TokenBucket)?
  /// While throttled: when it is served again. Its fd is out of the epoll set meanwhile.
  var throttledUntil: MonotonicInstant?
  var isThrottled: Bool { throttledUntil != nil }

  init(fd: Int32, info: ClientInfo, maxLineLength: Int) {
    self.fd = fd
    self.info = info
    framer = LineFramer(maxLineLength: maxLineLength)
  }
}

extension UnixSocket {
  /// Resolves a user given by name or by number.
  public static func userID(_ nameOrNumber: String) throws -> UInt32 {
    if let n = UInt32(nameOrNumber) { return n }
    var pwd = passwd()
    var result: UnsafeMutablePointer<passwd>? = nil
    var buffer = [CChar](repeating: 0, count: 4096)
    while true {
      let rc = getpwnam_r(nameOrNumber, &pwd, &buffer, buffer.count, &result)
      if rc == ERANGE && buffer.count < 1 << 20 {
        buffer = [CChar](repeating: 0, count: buffer.count * 4)
        continue
      }
      if rc != 0 { throw SystemCallError("getpwnam \(nameOrNumber)", Errno(rc)) }
      guard result != nil else { throw SocketError.unknownUser(nameOrNumber) }
      return pwd.pw_uid
    }
  }

  static func groupName(_ gid: UInt32) -> String? {
    var group = Glibc.group()
    var result: UnsafeMutablePointer<Glibc.group>? = nil
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getgrgid_r(gid, &group, &buffer, buffer.count, &result) == 0, result != nil, let name = group.gr_name
    else { return nil }
    return String(cString: name)
  }
}
