// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CActiondShim
import Glibc

/// Identifies a registered file descriptor watch. Never reused within one loop, so a
/// stale id (or a stale event for a closed and reopened fd number) reaches nothing.
public struct WatchID: Hashable, Sendable {
  public let rawValue: UInt64
}

/// Identifies a scheduled timer. Never reused within one loop.
public struct TimerID: Hashable, Sendable {
  public let rawValue: UInt64
}

/// Identifies a quiet period (``EventLoop/quiet(from:until:)``). Never reused within one loop.
public struct QuietID: Hashable, Sendable {
  public let rawValue: UInt64
}

/// A signal read from signalfd, with who sent it.
public struct SignalInfo: Sendable, Equatable {
  /// The signal number (SIGTERM, SIGHUP, ...).
  public var signal: Int32
  /// `si_code` (SI_USER for kill(2), SI_TKILL for raise/tgkill, CLD_EXITED for SIGCHLD, ...).
  public var code: Int32
  /// The sending process, 0 when the kernel sent it.
  public var senderPID: Int32
  /// The sending user.
  public var senderUID: UInt32
  /// For SIGCHLD: the exit status or signal.
  public var status: Int32
}

/// The daemon's single event loop: one epoll instance, one timerfd and one signalfd.
///
/// - File descriptors are level-triggered; handlers run on the loop thread.
/// - Timers are absolute CLOCK_MONOTONIC deadlines kept in a min-heap; the timerfd is
///   armed (TFD_TIMER_ABSTIME) to the earliest one and disarmed when there is none, so an
///   idle loop sleeps in `epoll_wait` with no timeout: zero wakeups.
/// - Signals are blocked and read through signalfd; their handlers run like any other.
/// - Any handler may register, unregister, schedule or cancel anything, including
///   itself: events for a watch unregistered earlier in the same batch are dropped.
/// - One turn (``runOnce(until:)``) runs, in this order: the ready `.normal` watches
///   (devices, child processes), signals, due timers, then the ready `.low` watches
///   (socket clients). So a device event and the hold timer are handled before any
///   client work of the same turn, whatever the clients send; a `.low` handler bounds
///   its own work per turn and asks for another with ``dispatchAgain(_:)``, and the
///   `.low` phase as a whole stops when ``lowPriorityBudget`` is spent or a timer falls
///   due (the clients left wait, first in line, for the next turn).
/// - During a quiet period (``quiet(from:until:)``: a button's deadline is near) the
///   `.low` watches are not served at all and do not wake the loop: they live in an epoll
///   instance of their own, which the loop stops watching with one `epoll_ctl`. Nothing
///   is read, accepted, dropped or closed meanwhile; clients wait in their own sockets
///   (and their writers block), so the CPU goes quiet and the sleeping loop is woken by
///   its timerfd at once when the deadline comes. A quiet stretch lasts at most
///   ``maximumQuiet``; then one turn serves the clients whatever the periods say.
///
/// Not thread-safe: use it from the thread that runs it. Signals are blocked on the
/// calling thread only, so call ``onSignal(_:_:)`` before starting other threads (the
/// daemon has none), or direct signals at the loop thread.
public final class EventLoop {
  /// The interest and readiness of a file descriptor.
  public struct IOEvents: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let readable = IOEvents(rawValue: 1 << 0)
    public static let writable = IOEvents(rawValue: 1 << 1)
    /// The peer closed completely (EPOLLHUP); always reported, no need to ask for it. A
    /// socket peer that only shut down its writing side is not a hangup: the fd reads as
    /// readable and read(2) returns 0, while writing to the peer still works.
    public static let hangup = IOEvents(rawValue: 1 << 2)
    /// An error is pending on the fd (EPOLLERR); always reported.
    public static let error = IOEvents(rawValue: 1 << 3)

    public var description: String {
      var parts: [String] = []
      if contains(.readable) { parts.append("readable") }
      if contains(.writable) { parts.append("writable") }
      if contains(.hangup) { parts.append("hangup") }
      if contains(.error) { parts.append("error") }
      return "[" + parts.joined(separator: ",") + "]"
    }
  }

  /// When a watch's handler runs within a turn.
  public enum Priority: Sendable, Hashable {
    /// Before signals and timers: input devices, child processes.
    case normal
    /// After every normal watch, signal and due timer of the turn: socket clients,
    /// whose work must never delay a button.
    case low
  }

  /// Counters for tests and benchmarks (e.g. "an idle daemon makes zero wakeups").
  public struct Statistics: Sendable, Equatable {
    /// Returns from epoll_wait (each is one wakeup of the thread).
    public var wakeups: UInt64 = 0
    /// File descriptor handler invocations.
    public var ioDispatches: UInt64 = 0
    /// Timer handler invocations.
    public var timersFired: UInt64 = 0
    /// Signal handler invocations.
    public var signalsDelivered: UInt64 = 0
    /// How many times the timerfd was re-armed or disarmed.
    public var timerfdUpdates: UInt64 = 0
    /// Handler invocations asked for with ``EventLoop/dispatchAgain(_:)`` (included in `ioDispatches`).
    public var repeatedDispatches: UInt64 = 0
    /// Ready `.low` watches left for the next turn because the turn's budget ran out.
    public var deferredDispatches: UInt64 = 0
    /// Turns in which the `.low` watches were not served because a quiet period was on.
    public var quietTurns: UInt64 = 0
    /// Turns that served the `.low` watches during a quiet period because its stretch
    /// reached ``EventLoop/maximumQuiet``.
    public var quietBreaks: UInt64 = 0
  }

  private struct Watch {
    var fd: Int32
    var interest: IOEvents
    var priority: Priority
    var handler: (IOEvents) -> Void
  }

  private struct HeapEntry {
    var deadline: MonotonicInstant
    var sequence: UInt64
    func isBefore(_ other: HeapEntry) -> Bool {
      deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
    }
  }

  private let epollFD: Int32
  /// The `.low` watches' own epoll instance, watched by `epollFD` (token `lowToken`)
  /// except during a quiet stretch.
  private let lowEpollFD: Int32
  private let timerFD: Int32
  private var signalFD: Int32 = -1
  private var signalMask = sigset_t()
  private var signalHandlers: [Int32: (SignalInfo) -> Void] = [:]

  private var watches: [UInt64: Watch] = [:]
  private var nextWatch: UInt64 = 1
  // Reserved epoll data values for the loop's own fds (watch ids start at 1).
  private static let timerToken: UInt64 = 0
  private static let signalToken: UInt64 = UInt64.max
  private static let lowToken: UInt64 = UInt64.max - 1

  private var heap: [HeapEntry] = []
  private var timers: [UInt64: (MonotonicInstant) -> Void] = [:]
  private var nextTimer: UInt64 = 1
  /// The deadline the timerfd is armed to, nil when disarmed.
  private var armedDeadline: MonotonicInstant?

  private var stopped = false
  private var events: [epoll_event]
  private var lowEvents: [epoll_event]
  /// Whether `epollFD` watches `lowEpollFD` (false during a quiet stretch).
  private var lowListening = true
  private struct QuietPeriod {
    var from: MonotonicInstant
    var until: MonotonicInstant?
  }
  private var quietPeriods: [UInt64: QuietPeriod] = [:]
  private var nextQuiet: UInt64 = 1
  /// When the current stretch of quiet turns began; nil while clients are served.
  private var quietSince: MonotonicInstant?
  /// Watches whose handlers asked to run again next turn, in the order they asked.
  private var again: [UInt64] = []
  /// Ready `.low` watches that a turn's budget left undispatched: they come first in the
  /// next turn's `.low` phase, so many busy clients are served in turn and none starves.
  private var deferred: [UInt64] = []

  /// How long one turn may spend on `.low` watches (socket clients) in all. Each handler
  /// bounds its own work; this bounds the sum over many clients, so that fifty busy
  /// clients cannot keep a device event or a due hold timer waiting for fifty handlers'
  /// worth of work. When it is spent (or a timer has fallen due), the remaining ready
  /// `.low` watches wait for the next turn, which starts with devices, signals and timers.
  /// At least one `.low` handler runs per turn, so clients always progress.
  public var lowPriorityBudget = TimeSpan.milliseconds(1)

  /// The longest stretch of turns without serving the `.low` watches, however quiet
  /// periods overlap or follow one another (a chattering key re-arming its deadline):
  /// then one turn serves them and a new stretch begins, so clients always progress.
  public var maximumQuiet = TimeSpan.milliseconds(100)

  /// Counters since creation.
  public private(set) var statistics = Statistics()

  /// Creates the epoll instance and the timerfd (both close-on-exec).
  public init() throws {
    let ep: Int32
    do { ep = try Syscall.retrying { epoll_create1(Int32(EPOLL_CLOEXEC)) } } catch {
      throw SystemCallError("epoll_create1", error)
    }
    let tfd: Int32
    do {
      tfd = try Syscall.retrying {
        timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC) | Int32(TFD_NONBLOCK))
      }
    } catch {
      Syscall.close(ep)
      throw SystemCallError("timerfd_create", error)
    }
    let low: Int32
    do { low = try Syscall.retrying { epoll_create1(Int32(EPOLL_CLOEXEC)) } } catch {
      Syscall.close(ep)
      Syscall.close(tfd)
      throw SystemCallError("epoll_create1", error)
    }
    epollFD = ep
    lowEpollFD = low
    timerFD = tfd
    events = Array(repeating: epoll_event(), count: 64)
    lowEvents = Array(repeating: epoll_event(), count: 64)
    sigemptyset(&signalMask)
    do {
      try epollAdd(tfd, token: Self.timerToken, events: UInt32(EPOLLIN.rawValue))
      try epollAdd(low, token: Self.lowToken, events: UInt32(EPOLLIN.rawValue))
    } catch {
      Syscall.close(ep)
      Syscall.close(tfd)
      Syscall.close(low)
      throw SystemCallError("epoll_ctl ADD timerfd", error)
    }
  }

  deinit {
    Syscall.close(epollFD)
    Syscall.close(lowEpollFD)
    Syscall.close(timerFD)
    if signalFD >= 0 { Syscall.close(signalFD) }
  }

  /// The current CLOCK_MONOTONIC instant.
  public func now() -> MonotonicInstant { MonotonicInstant(nanoseconds: Syscall.monotonicNanoseconds()) }

  // MARK: File descriptors

  /// Registers `fd` (level-triggered) for `interest`; `.hangup` and `.error` are always
  /// reported. The handler runs on the loop thread with the readiness seen, at its place
  /// in the turn given by `priority`. The loop does not own the fd: unregister it before
  /// closing it.
  public func register(
    fd: Int32, interest: IOEvents, priority: Priority = .normal, _ handler: @escaping (IOEvents) -> Void
  ) throws -> WatchID {
    let id = nextWatch
    nextWatch += 1
    do { try epollAdd(fd, token: id, events: Self.epollMask(interest), on: epoll(for: priority)) } catch {
      throw SystemCallError("epoll_ctl ADD fd \(fd)", error)
    }
    watches[id] = Watch(fd: fd, interest: interest, priority: priority, handler: handler)
    return WatchID(rawValue: id)
  }

  /// Runs the watch's handler again in the next turn, at its priority, even if its fd is
  /// not ready then (with the readiness seen, or `[]`); that turn does not wait in
  /// epoll_wait. For a handler that stopped early to bound its work per turn (a client
  /// with more lines buffered) and would not be woken by its fd again.
  public func dispatchAgain(_ id: WatchID) {
    guard watches[id.rawValue] != nil, !again.contains(id.rawValue) else { return }
    again.append(id.rawValue)
  }

  /// Changes what a registered fd is watched for (e.g. add `.writable` while output is queued).
  public func setInterest(_ id: WatchID, _ interest: IOEvents) throws {
    guard var watch = watches[id.rawValue] else { return }
    if watch.interest == interest { return }
    var event = epoll_event()
    event.events = Self.epollMask(interest)
    event.data.u64 = id.rawValue
    let instance = epoll(for: watch.priority)
    do { _ = try Syscall.retrying { epoll_ctl(instance, EPOLL_CTL_MOD, watch.fd, &event) } } catch {
      throw SystemCallError("epoll_ctl MOD fd \(watch.fd)", error)
    }
    watch.interest = interest
    watches[id.rawValue] = watch
  }

  /// Stops watching; safe from inside any handler, including the watch's own. Events
  /// already collected for it in the current batch are dropped.
  public func unregister(_ id: WatchID) {
    guard let watch = watches.removeValue(forKey: id.rawValue) else { return }
    var event = epoll_event()
    // ENOENT/EBADF: the fd was already closed (epoll forgets closed fds): nothing to do.
    _ = epoll_ctl(epoll(for: watch.priority), EPOLL_CTL_DEL, watch.fd, &event)
  }

  private func epoll(for priority: Priority) -> Int32 { priority == .low ? lowEpollFD : epollFD }

  // MARK: Quiet periods

  /// From `start` until `end` (nil: until ``endQuiet(_:)``), the `.low` watches (socket
  /// clients) are not served and do not wake the loop; `.normal` watches, signals and
  /// timers are served as always. For the approach of a button's deadline: with nothing
  /// to do but wait for its timer, the loop sleeps and is woken on time. Periods may
  /// overlap; clients are served again once none is on, or for one turn when a quiet
  /// stretch reaches ``maximumQuiet``.
  @discardableResult
  public func quiet(from start: MonotonicInstant, until end: MonotonicInstant? = nil) -> QuietID {
    let id = nextQuiet
    nextQuiet += 1
    quietPeriods[id] = QuietPeriod(from: start, until: end)
    updateListening()
    updateTimerFD()
    return QuietID(rawValue: id)
  }

  /// Ends a quiet period early; a no-op for ended or unknown ids.
  public func endQuiet(_ id: QuietID) {
    guard quietPeriods.removeValue(forKey: id.rawValue) != nil else { return }
    updateListening()
    updateTimerFD()
  }

  /// Whether a quiet period is on now.
  public var isQuiet: Bool { quietOn(at: now()) }

  /// Whether a period covers `instant`; forgets the periods that are over.
  private func quietOn(at instant: MonotonicInstant) -> Bool {
    guard !quietPeriods.isEmpty else { return false }
    var on = false
    for (id, period) in quietPeriods {
      if let end = period.until, end <= instant {
        quietPeriods[id] = nil
      } else if period.from <= instant {
        on = true
      }
    }
    return on
  }

  /// Whether this turn serves the `.low` watches; keeps the quiet stretch's start.
  private func servesLow(at instant: MonotonicInstant) -> Bool {
    guard quietOn(at: instant) else {
      quietSince = nil
      return true
    }
    guard let since = quietSince else {
      quietSince = instant
      statistics.quietTurns += 1
      return false
    }
    if instant - since >= maximumQuiet {
      quietSince = instant  // served now; a new stretch begins
      statistics.quietBreaks += 1
      return true
    }
    statistics.quietTurns += 1
    return false
  }

  /// Watches the `.low` epoll instance unless a quiet period is on (one epoll_ctl, only
  /// when that changes).
  private func updateListening() {
    let wanted = !quietOn(at: now())
    if wanted == lowListening { return }
    var event = epoll_event()
    event.events = wanted ? UInt32(EPOLLIN.rawValue) : 0
    event.data.u64 = Self.lowToken
    // Cannot fail for the loop's own two epoll fds.
    _ = epoll_ctl(epollFD, EPOLL_CTL_MOD, lowEpollFD, &event)
    lowListening = wanted
    if !wanted && quietSince == nil { quietSince = now() }
  }

  /// The next instant at which the quiet state may change: a period's start or end, or
  /// the end of the current stretch's ``maximumQuiet``.
  private func nextQuietChange() -> MonotonicInstant? {
    guard !quietPeriods.isEmpty else { return nil }
    let current = now()
    var next: MonotonicInstant?
    func consider(_ instant: MonotonicInstant) {
      if instant > current, next.map({ instant < $0 }) ?? true { next = instant }
    }
    for period in quietPeriods.values {
      consider(period.from)
      if let end = period.until { consider(end) }
    }
    if !lowListening, let since = quietSince { consider(since + maximumQuiet) }
    return next
  }

  // MARK: Timers

  /// Runs `handler` once at or after `deadline` (CLOCK_MONOTONIC). Timers with equal
  /// deadlines run in the order they were scheduled. A deadline in the past runs on the
  /// next loop iteration. The handler gets the `now` read when it runs.
  @discardableResult
  public func schedule(at deadline: MonotonicInstant, _ handler: @escaping (MonotonicInstant) -> Void) -> TimerID {
    let id = nextTimer
    nextTimer += 1
    timers[id] = handler
    heapPush(HeapEntry(deadline: deadline, sequence: id))
    updateTimerFD()
    return TimerID(rawValue: id)
  }

  /// Cancels a timer that has not run yet; a no-op for fired or unknown ids.
  public func cancel(_ id: TimerID) {
    guard timers.removeValue(forKey: id.rawValue) != nil else { return }
    // Lazy deletion: drop cancelled entries from the top so the timerfd follows the
    // earliest *live* deadline, and compact when most of the heap is dead.
    dropCancelledTop()
    if heap.count > 64 && heap.count > 2 * timers.count { compactHeap() }
    updateTimerFD()
  }

  /// The number of timers scheduled and not yet fired or cancelled.
  public var pendingTimerCount: Int { timers.count }

  /// Whether the timerfd is currently armed, as the kernel reports it (timerfd_gettime).
  public var isTimerArmed: Bool {
    var spec = itimerspec()
    guard timerfd_gettime(timerFD, &spec) == 0 else { return false }
    return spec.it_value.tv_sec != 0 || spec.it_value.tv_nsec != 0
  }

  // MARK: Signals

  /// Blocks `signo` on the calling thread and delivers it through the signalfd to
  /// `handler` (replacing an earlier handler for the same signal).
  public func onSignal(_ signo: Int32, _ handler: @escaping (SignalInfo) -> Void) throws {
    var add = sigset_t()
    sigemptyset(&add)
    sigaddset(&add, signo)
    let rc = pthread_sigmask(SIG_BLOCK, &add, nil)
    if rc != 0 { throw SystemCallError("pthread_sigmask", Errno(rc)) }
    sigaddset(&signalMask, signo)
    let existing = signalFD
    let fd: Int32
    do {
      fd = try Syscall.retrying { signalfd(existing, &signalMask, Int32(SFD_CLOEXEC) | Int32(SFD_NONBLOCK)) }
    } catch { throw SystemCallError("signalfd", error) }
    if existing < 0 {
      signalFD = fd
      do { try epollAdd(fd, token: Self.signalToken, events: UInt32(EPOLLIN.rawValue)) } catch {
        throw SystemCallError("epoll_ctl ADD signalfd", error)
      }
    }
    signalHandlers[signo] = handler
  }

  // MARK: Running

  /// Runs until ``stop()`` is called from a handler.
  public func run() throws {
    stopped = false
    while !stopped { try runOnce(until: nil) }
  }

  /// Ends ``run()`` after the current handler returns.
  public func stop() { stopped = true }

  /// Waits for events until `deadline` (nil: until something happens), dispatches one
  /// batch of fd events, signals and due timers, and returns. For tests and for embedding.
  public func runOnce(until deadline: MonotonicInstant?) throws {
    let normalWaiting = again.contains { watches[$0]?.priority == .normal }
    let lowWaiting = !deferred.isEmpty || again.contains { watches[$0]?.priority == .low }
    var timeout: Int32 = -1
    if normalWaiting || (lowWaiting && lowListening) {
      timeout = 0  // work is waiting: collect what is ready, do not sleep
    } else if let deadline {
      let remaining = deadline - now()
      if remaining.nanoseconds <= 0 {
        timeout = 0
      } else {
        // Round up: returning before the deadline would make callers spin.
        let ms = (remaining.nanoseconds + 999_999) / 1_000_000
        timeout = Int32(clamping: ms)
      }
    }
    let count = try wait(epollFD, &events, timeout: timeout)
    statistics.wakeups += 1
    var sawTimer = false
    var sawSignal = false
    var sawLow = false
    // The batch is copied (a handler may re-enter runOnce: not recommended, but harmless);
    // a watch that asked to run again joins its class, once.
    var normal: [(UInt64, IOEvents)] = []
    var repeated = again
    again.removeAll()
    for event in events[0..<count] {
      let token = event.data.u64
      switch token {
      case Self.timerToken: sawTimer = true
      case Self.signalToken: sawSignal = true
      case Self.lowToken: sawLow = true
      default:
        guard watches[token] != nil else { continue }
        if let i = repeated.firstIndex(of: token) { repeated.remove(at: i) }
        normal.append((token, Self.ioEvents(event.events)))
      }
    }
    var repeatedLow: [UInt64] = []
    for token in repeated {
      guard let watch = watches[token] else { continue }
      if watch.priority == .normal {
        statistics.repeatedDispatches += 1
        normal.append((token, []))
      } else {
        repeatedLow.append(token)
      }
    }
    dispatch(normal)
    if sawSignal { drainSignals() }
    if sawTimer { drainTimerFD() }
    // Due timers run even if the timerfd was not in this batch (e.g. a timer scheduled in
    // the past by an fd handler above): cheap, and it never delays a due deadline.
    fireDueTimers()
    // Then the clients, unless a quiet period is on (the deadline timer above may have
    // ended one or started another).
    if servesLow(at: now()) {
      var lowBatch: [(UInt64, IOEvents)] = []
      if sawLow || !lowListening || !repeatedLow.isEmpty || !deferred.isEmpty {
        let ready = try wait(lowEpollFD, &lowEvents, timeout: 0)
        for event in lowEvents[0..<ready] where watches[event.data.u64] != nil {
          let token = event.data.u64
          if let i = repeatedLow.firstIndex(of: token) { repeatedLow.remove(at: i) }
          lowBatch.append((token, Self.ioEvents(event.events)))
        }
        if ready == lowEvents.count && lowEvents.count < 1024 {
          lowEvents = Array(repeating: epoll_event(), count: lowEvents.count * 2)
        }
      }
      for token in repeatedLow where watches[token] != nil {
        statistics.repeatedDispatches += 1
        lowBatch.append((token, []))
      }
      // Those the last turn's budget left waiting go first, with this batch's readiness
      // (level-triggered epoll reports them again); then the rest in the batch's order.
      var low: [(UInt64, IOEvents)] = []
      if deferred.isEmpty {
        low = lowBatch
      } else {
        var pending: [UInt64: IOEvents] = [:]
        for (token, events) in lowBatch { pending[token, default: []].formUnion(events) }
        for token in deferred where watches[token] != nil {
          low.append((token, pending.removeValue(forKey: token) ?? []))
        }
        for (token, _) in lowBatch {
          guard let events = pending.removeValue(forKey: token) else { continue }
          low.append((token, events))
        }
        deferred.removeAll()
      }
      dispatchLow(low)
    } else {
      // They keep their place: the first turn after the quiet serves them.
      again = repeatedLow + again
    }
    updateListening()
    updateTimerFD()
    if count == events.count && events.count < 1024 {
      events = Array(repeating: epoll_event(), count: events.count * 2)
    }
  }

  /// epoll_wait on `instance` into `buffer`; the number of events.
  private func wait(_ instance: Int32, _ buffer: inout [epoll_event], timeout: Int32) throws -> Int {
    let capacity = Int32(buffer.count)
    // The buffer is never empty (64 entries at start, only ever grown), so its base address
    // exists: glibc 2.41 declares the argument non-null. The closure returns a Result rather
    // than throwing: Swift 6.0's withUnsafeMutableBufferPointer only rethrows `any Error`.
    let result = buffer.withUnsafeMutableBufferPointer { buffer -> Result<Int32, Errno> in
      guard let events = buffer.baseAddress else { return .failure(.invalidArgument) }
      return Result { () throws(Errno) in
        try Syscall.retrying { epoll_wait(instance, events, capacity, timeout) }
      }
    }
    switch result {
    case .success(let n): return Int(n)
    case .failure(let error): throw SystemCallError("epoll_wait", error)
    }
  }

  // MARK: Internals

  private func dispatch(_ ready: [(UInt64, IOEvents)]) {
    for (token, events) in ready {
      guard let watch = watches[token] else { continue }  // unregistered earlier in this turn
      statistics.ioDispatches += 1
      watch.handler(events)
    }
  }

  /// Dispatches `.low` watches until the turn's budget is spent, a timer falls due or a
  /// quiet period begins; the rest wait for the next turn (``lowPriorityBudget``).
  private func dispatchLow(_ ready: [(UInt64, IOEvents)]) {
    let start = now()
    for (index, (token, events)) in ready.enumerated() {
      if index > 0 && (now() - start >= lowPriorityBudget || timerIsDue() || quietBegan()) {
        deferred = ready[index...].map(\.0).filter { watches[$0] != nil }
        statistics.deferredDispatches += UInt64(deferred.count)
        return
      }
      guard let watch = watches[token] else { continue }  // unregistered earlier in this turn
      statistics.ioDispatches += 1
      watch.handler(events)
    }
  }

  /// A quiet period came on during a turn that was not already a quiet stretch's break.
  private func quietBegan() -> Bool { quietSince == nil && quietOn(at: now()) }

  private func timerIsDue() -> Bool {
    dropCancelledTop()
    guard let top = heap.first else { return false }
    return top.deadline <= now()
  }

  private func epollAdd(_ fd: Int32, token: UInt64, events mask: UInt32, on instance: Int32? = nil) throws(Errno) {
    var event = epoll_event()
    event.events = mask
    event.data.u64 = token
    let instance = instance ?? epollFD
    _ = try Syscall.retrying { epoll_ctl(instance, EPOLL_CTL_ADD, fd, &event) }
  }

  private static func epollMask(_ interest: IOEvents) -> UInt32 {
    var mask: UInt32 = 0
    // No EPOLLRDHUP: a peer's half-close shows as readable (read returns 0), not as a
    // hangup, so a client that shut down its writing side keeps getting its replies.
    if interest.contains(.readable) { mask |= UInt32(EPOLLIN.rawValue) }
    if interest.contains(.writable) { mask |= UInt32(EPOLLOUT.rawValue) }
    return mask
  }

  private static func ioEvents(_ mask: UInt32) -> IOEvents {
    var result: IOEvents = []
    if mask & (UInt32(EPOLLIN.rawValue) | UInt32(EPOLLPRI.rawValue)) != 0 { result.insert(.readable) }
    if mask & UInt32(EPOLLOUT.rawValue) != 0 { result.insert(.writable) }
    if mask & UInt32(EPOLLHUP.rawValue) != 0 { result.insert(.hangup) }
    if mask & UInt32(EPOLLERR.rawValue) != 0 { result.insert(.error) }
    return result
  }

  private func drainTimerFD() {
    var expirations: UInt64 = 0
    // EAGAIN when the timer was re-armed after it fired: nothing to read, fine.
    _ = withUnsafeMutableBytes(of: &expirations) { try? Syscall.read(timerFD, into: $0) }
    // The kernel disarms a one-shot timerfd when it expires.
    armedDeadline = nil
  }

  private func drainSignals() {
    var info = signalfd_siginfo()
    let size = MemoryLayout<signalfd_siginfo>.size
    while true {
      let result = withUnsafeMutableBytes(of: &info) { try? Syscall.read(signalFD, into: $0) }
      guard case .done(let n)? = result, n == size else { return }
      let signal = SignalInfo(
        signal: Int32(info.ssi_signo), code: info.ssi_code, senderPID: Int32(bitPattern: info.ssi_pid),
        senderUID: info.ssi_uid, status: info.ssi_status)
      if let handler = signalHandlers[signal.signal] {
        statistics.signalsDelivered += 1
        handler(signal)
      }
    }
  }

  private func fireDueTimers() {
    // Take the due timers first, then run them: a handler that schedules a new timer in
    // the past (or reschedules itself) gets it on the next iteration instead of looping
    // here forever; one that cancels a timer of this pass prevents it from running.
    let current = now()
    var due: [UInt64] = []
    while let top = heap.first, top.deadline <= current {
      heapPop()
      if timers[top.sequence] != nil { due.append(top.sequence) }
    }
    for id in due {
      guard let handler = timers.removeValue(forKey: id) else { continue }
      statistics.timersFired += 1
      handler(now())
    }
    updateTimerFD()
  }

  private func dropCancelledTop() {
    while let top = heap.first, timers[top.sequence] == nil { heapPop() }
  }

  private func compactHeap() {
    heap.removeAll { timers[$0.sequence] == nil }
    heap.sort { $0.isBefore($1) }  // a sorted array is a valid min-heap
  }

  /// Arms the timerfd to the earliest live deadline or quiet change, or disarms it; only
  /// touches the kernel when that instant changed.
  private func updateTimerFD() {
    dropCancelledTop()
    var wanted = heap.first?.deadline
    if let change = nextQuietChange(), wanted.map({ change < $0 }) ?? true { wanted = change }
    if wanted == armedDeadline { return }
    var spec = itimerspec()
    if let wanted {
      // An all-zero it_value would disarm; instants are > 0 on CLOCK_MONOTONIC anyway.
      let ns = max(wanted.nanoseconds, 1)
      spec.it_value.tv_sec = Int(ns / 1_000_000_000)
      spec.it_value.tv_nsec = Int(ns % 1_000_000_000)
    }
    // Cannot fail for a valid fd and a normalised timespec.
    _ = timerfd_settime(timerFD, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    armedDeadline = wanted
    statistics.timerfdUpdates += 1
  }

  private func heapPush(_ entry: HeapEntry) {
    heap.append(entry)
    var child = heap.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      if !heap[child].isBefore(heap[parent]) { break }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  private func heapPop() {
    let last = heap.removeLast()
    guard !heap.isEmpty else { return }
    heap[0] = last
    var parent = 0
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < heap.count && heap[left].isBefore(heap[smallest]) { smallest = left }
      if right < heap.count && heap[right].isBefore(heap[smallest]) { smallest = right }
      if smallest == parent { break }
      heap.swapAt(parent, smallest)
      parent = smallest
    }
  }
}
