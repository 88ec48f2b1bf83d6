// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CActiondShim
import Glibc
import Testing

@testable import ActiondLinux

/// Drives `loop` until `condition` holds; fails after `limit` iterations instead of hanging.
private func spin(
  _ loop: EventLoop, until deadline: MonotonicInstant? = nil, limit: Int = 1000, _ condition: () -> Bool
)
  throws
{
  var iterations = 0
  while !condition() {
    iterations += 1
    if iterations > limit { Issue.record("condition not reached after \(limit) iterations"); return }
    try loop.runOnce(until: deadline ?? loop.now() + .seconds(5))
  }
}

/// Runs the loop with no deadline of the test's own (`runOnce(until: nil)` sleeps until
/// something happens: only what the loop scheduled itself can wake it) until `condition`
/// holds. A 60 s timer is the backstop: false when it was what ended the wait.
private func sleepUntil(_ loop: EventLoop, limit: Int = 1000, _ condition: () -> Bool) throws -> Bool {
  var backstop = false
  loop.schedule(at: loop.now() + .seconds(60)) { _ in backstop = true }
  var turns = 0
  while !condition() && !backstop && turns < limit {
    turns += 1
    try loop.runOnce(until: nil)
  }
  return !backstop
}

/// A timerfd of the test's own, armed `span` from now: an external wakeup source the
/// loop knows nothing about.
private func externalTrigger(after span: TimeSpan) throws -> Int32 {
  let fd = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC) | Int32(TFD_NONBLOCK))
  #expect(fd >= 0)
  var spec = itimerspec()
  spec.it_value.tv_sec = Int(span.nanoseconds / 1_000_000_000)
  spec.it_value.tv_nsec = Int(span.nanoseconds % 1_000_000_000)
  #expect(timerfd_settime(fd, 0, &spec, nil) == 0)
  return fd
}

@Suite struct EventLoopTimerTests {
  @Test func dueTimersFireInDeadlineOrderThenSchedulingOrder() throws {
    let loop = try EventLoop()
    let base = loop.now()
    var fired: [String] = []
    loop.schedule(at: base - .milliseconds(1)) { _ in fired.append("c") }
    loop.schedule(at: base - .milliseconds(3)) { _ in fired.append("a") }
    loop.schedule(at: base - .milliseconds(2)) { _ in fired.append("b1") }
    loop.schedule(at: base - .milliseconds(2)) { _ in fired.append("b2") }
    try loop.runOnce(until: base)
    #expect(fired == ["a", "b1", "b2", "c"])
    #expect(loop.pendingTimerCount == 0)
    #expect(!loop.isTimerArmed, "no timers left: the timerfd must be disarmed")
  }

  @Test func aFutureTimerNeverFiresBeforeItsDeadline() throws {
    let loop = try EventLoop()
    let deadline = loop.now() + .milliseconds(30)
    var firedAt: MonotonicInstant?
    loop.schedule(at: deadline) { now in firedAt = now }
    // An earlier external deadline: runOnce returns without firing it.
    try loop.runOnce(until: loop.now())
    #expect(firedAt == nil)
    try spin(loop) { firedAt != nil }
    let at = try #require(firedAt)
    #expect(at >= deadline)
    #expect(loop.statistics.timersFired == 1)
  }

  @Test func cancelledTimersNeverRunAndDisarmTheTimerfd() throws {
    let loop = try EventLoop()
    let base = loop.now()
    var fired: [Int] = []
    let first = loop.schedule(at: base - .milliseconds(2)) { _ in fired.append(1) }
    loop.schedule(at: base - .milliseconds(1)) { _ in fired.append(2) }
    let far = loop.schedule(at: base + .seconds(3600)) { _ in fired.append(3) }
    loop.cancel(first)
    loop.cancel(first)  // twice is harmless
    try loop.runOnce(until: base)
    #expect(fired == [2])
    #expect(loop.isTimerArmed, "the far timer is still pending")
    loop.cancel(far)
    #expect(!loop.isTimerArmed)
    #expect(loop.pendingTimerCount == 0)
  }

  @Test func manyCancelledTimersAreCompacted() throws {
    let loop = try EventLoop()
    let base = loop.now() + .seconds(3600)
    var ids: [TimerID] = []
    for i in 0..<1000 { ids.append(loop.schedule(at: base + .milliseconds(Int64(i))) { _ in }) }
    for id in ids.dropLast() { loop.cancel(id) }
    #expect(loop.pendingTimerCount == 1)
    loop.cancel(ids.last!)
    #expect(!loop.isTimerArmed)
  }

  @Test func handlersMayCancelAndScheduleReentrantly() throws {
    let loop = try EventLoop()
    let base = loop.now()
    var fired: [String] = []
    var victim: TimerID?
    loop.schedule(at: base - .milliseconds(3)) { _ in
      fired.append("first")
      loop.cancel(victim!)  // due in the same pass: must not run
      // Scheduled in the past from a handler: runs on the next iteration, not this one.
      loop.schedule(at: base - .milliseconds(10)) { _ in fired.append("late") }
    }
    victim = loop.schedule(at: base - .milliseconds(2)) { _ in fired.append("victim") }
    loop.schedule(at: base - .milliseconds(1)) { _ in fired.append("last") }
    try loop.runOnce(until: base)
    #expect(fired == ["first", "last"])
    try loop.runOnce(until: loop.now())
    #expect(fired == ["first", "last", "late"])
  }

  @Test func aTimerThatReschedulesItselfDoesNotStarveTheLoop() throws {
    let loop = try EventLoop()
    var count = 0
    func tick(_ now: MonotonicInstant) {
      count += 1
      loop.schedule(at: now - .milliseconds(1), tick)
    }
    loop.schedule(at: loop.now(), tick)
    try loop.runOnce(until: loop.now())
    #expect(count == 1)
    try loop.runOnce(until: loop.now())
    #expect(count == 2)
  }
}

@Suite struct EventLoopIOTests {
  @Test func pipeReadabilityAndHangup() throws {
    let loop = try EventLoop()
    let (r, w) = try Syscall.pipe(nonBlocking: true)
    defer { Syscall.close(r) }
    var seen: [EventLoop.IOEvents] = []
    var bytes: [UInt8] = []
    let id = try loop.register(fd: r, interest: .readable) { events in
      seen.append(events)
      var buffer = [UInt8](repeating: 0, count: 16)
      if case .done(let n)? = try? buffer.withUnsafeMutableBytes({ try Syscall.read(r, into: $0) }) {
        bytes += buffer[0..<n]
      }
    }
    try loop.runOnce(until: loop.now())
    #expect(seen.isEmpty, "nothing written yet")
    try Syscall.writeAll(w, Array("hi".utf8))
    try loop.runOnce(until: loop.now() + .seconds(5))
    #expect(seen == [.readable])
    #expect(bytes == Array("hi".utf8))
    Syscall.close(w)
    try loop.runOnce(until: loop.now() + .seconds(5))
    #expect(seen.last?.contains(.hangup) == true)
    loop.unregister(id)
    loop.unregister(id)  // twice is harmless
    seen.removeAll()
    try loop.runOnce(until: loop.now())
    #expect(seen.isEmpty, "an unregistered fd is not dispatched")
  }

  @Test func writableInterestCanBeToggled() throws {
    let loop = try EventLoop()
    var fds: [Int32] = [-1, -1]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | actiond_SOCK_CLOEXEC, 0, &fds) == 0)
    defer { fds.forEach { Syscall.close($0) } }
    var seen: [EventLoop.IOEvents] = []
    let id = try loop.register(fd: fds[0], interest: .readable) { seen.append($0) }
    try loop.runOnce(until: loop.now())
    #expect(seen.isEmpty)
    try loop.setInterest(id, [.readable, .writable])
    try loop.runOnce(until: loop.now() + .seconds(5))
    #expect(seen == [.writable])
    try loop.setInterest(id, .readable)
    try loop.runOnce(until: loop.now())
    #expect(seen == [.writable])
  }

  @Test func aHandlerMayUnregisterAnotherWatchWithAPendingEvent() throws {
    let loop = try EventLoop()
    let a = try Syscall.pipe(nonBlocking: true)
    let b = try Syscall.pipe(nonBlocking: true)
    defer { [a.read, a.write, b.read, b.write].forEach { Syscall.close($0) } }
    var calls: [String] = []
    var idA: WatchID?
    var idB: WatchID?
    idA = try loop.register(fd: a.read, interest: .readable) { _ in
      calls.append("a")
      loop.unregister(idB!)
      loop.unregister(idA!)
    }
    idB = try loop.register(fd: b.read, interest: .readable) { _ in
      calls.append("b")
      loop.unregister(idA!)
      loop.unregister(idB!)
    }
    try Syscall.writeAll(a.write, [1])
    try Syscall.writeAll(b.write, [1])
    try loop.runOnce(until: loop.now() + .seconds(5))
    #expect(calls.count == 1, "both were ready in one batch, the first handler removed the second")
    try loop.runOnce(until: loop.now())
    #expect(calls.count == 1)
  }

  /// A turn handles devices, signals and due timers before any socket client (`.low`),
  /// whatever order epoll reports them in (issue 13, item 14).
  @Test func normalWatchesSignalsAndTimersComeBeforeLowPriorityWatches() throws {
    let loop = try EventLoop()
    let client = try Syscall.pipe(nonBlocking: true)
    let device = try Syscall.pipe(nonBlocking: true)
    defer { [client.read, client.write, device.read, device.write].forEach { Syscall.close($0) } }
    var order: [String] = []
    // Registered, and made ready, first: epoll reports it first.
    _ = try loop.register(fd: client.read, interest: .readable, priority: .low) { _ in order.append("client") }
    try Syscall.writeAll(client.write, [1])
    _ = try loop.register(fd: device.read, interest: .readable) { _ in order.append("device") }
    try Syscall.writeAll(device.write, [1])
    loop.schedule(at: loop.now()) { _ in order.append("timer") }
    try loop.onSignal(SIGUSR2) { _ in order.append("signal") }
    #expect(raise(SIGUSR2) == 0)
    try loop.runOnce(until: loop.now() + .seconds(5))
    #expect(order == ["device", "signal", "timer", "client"])
  }

  /// Many busy clients cannot hold up the next turn: once the `.low` budget is spent the
  /// rest wait, first in line next turn, so every client is served in turn (none starves)
  /// and each turn starts again with devices, signals and timers.
  @Test func aSpentLowBudgetLeavesTheRestForTheNextTurnInTurn() throws {
    let loop = try EventLoop()
    loop.lowPriorityBudget = .zero  // one `.low` handler per turn
    var pipes: [(read: Int32, write: Int32)] = []
    defer {
      pipes.forEach {
        Syscall.close($0.read); Syscall.close($0.write)
      }
    }
    var order: [String] = []
    for name in ["a", "b", "c"] {
      let p = try Syscall.pipe(nonBlocking: true)
      pipes.append(p)
      // Never drained: ready in every turn, like a client with endless input.
      _ = try loop.register(fd: p.read, interest: .readable, priority: .low) { events in
        #expect(events.contains(.readable), "a deferred client keeps its readiness")
        order.append(name)
      }
      try Syscall.writeAll(p.write, [1])
    }
    let device = try Syscall.pipe(nonBlocking: true)
    pipes.append(device)
    _ = try loop.register(fd: device.read, interest: .readable) { _ in
      var byte: UInt8 = 0
      _ = withUnsafeMutableBytes(of: &byte) { try? Syscall.read(device.read, into: $0) }
      order.append("device")
    }
    for turn in 0..<4 {
      if turn == 2 { try Syscall.writeAll(device.write, [1]) }
      try loop.runOnce(until: loop.now() + .seconds(5))
    }
    #expect(order == ["a", "b", "device", "c", "a"])
    #expect(loop.statistics.deferredDispatches == 8)
  }

  /// A timer that falls due during the `.low` phase ends it: the timer runs at the start
  /// of the next turn, before the clients that were still waiting.
  @Test func aTimerFallingDueEndsTheLowPhase() throws {
    let loop = try EventLoop()
    loop.lowPriorityBudget = .seconds(3600)
    var pipes: [(read: Int32, write: Int32)] = []
    defer {
      pipes.forEach {
        Syscall.close($0.read); Syscall.close($0.write)
      }
    }
    var order: [String] = []
    for name in ["a", "b"] {
      let p = try Syscall.pipe(nonBlocking: true)
      pipes.append(p)
      _ = try loop.register(fd: p.read, interest: .readable, priority: .low) { _ in
        var byte: UInt8 = 0
        _ = withUnsafeMutableBytes(of: &byte) { try? Syscall.read(p.read, into: $0) }
        order.append(name)
        // The first client's work takes the loop past a deadline.
        if order.count == 1 { loop.schedule(at: loop.now()) { _ in order.append("timer") } }
      }
      try Syscall.writeAll(p.write, [1])
    }
    try loop.runOnce(until: loop.now() + .seconds(5))
    try loop.runOnce(until: loop.now() + .seconds(5))
    #expect(order.count == 3)
    #expect(order.dropFirst() == ["timer", order[0] == "a" ? "b" : "a"])
  }

  /// A handler that stopped early is run again next turn without its fd being ready,
  /// and that turn does not wait.
  @Test func dispatchAgainRunsTheHandlerNextTurnWithoutWaiting() throws {
    let loop = try EventLoop()
    let p = try Syscall.pipe(nonBlocking: true)
    defer { [p.read, p.write].forEach { Syscall.close($0) } }
    var seen: [EventLoop.IOEvents] = []
    var id: WatchID?
    id = try loop.register(fd: p.read, interest: .readable, priority: .low) { events in
      seen.append(events)
      var byte: UInt8 = 0
      _ = withUnsafeMutableBytes(of: &byte) { try? Syscall.read(p.read, into: $0) }
      if seen.count < 3 {
        loop.dispatchAgain(id!)
        loop.dispatchAgain(id!)  // asking twice in one turn still runs it once
      }
    }
    try Syscall.writeAll(p.write, [1])
    try loop.runOnce(until: loop.now() + .seconds(5))
    #expect(seen == [.readable])
    try loop.runOnce(until: nil)  // would block forever without the repeated dispatch
    try loop.runOnce(until: nil)
    #expect(seen == [.readable, [], []])
    #expect(loop.statistics.repeatedDispatches == 2)
    try loop.runOnce(until: loop.now())
    #expect(seen.count == 3)
  }

  @Test func registeringAnInvalidFdThrowsATypedError() throws {
    let loop = try EventLoop()
    do {
      _ = try loop.register(fd: 987_654, interest: .readable) { _ in }
      Issue.record("expected EBADF")
    } catch let error as SystemCallError {
      #expect(error.errno == .badFileDescriptor)
      #expect(error.description.contains("EBADF"))
    }
  }

  @Test func runStopsFromAHandler() throws {
    let loop = try EventLoop()
    var count = 0
    func tick(_ now: MonotonicInstant) {
      count += 1
      if count == 3 { loop.stop() } else { loop.schedule(at: now, tick) }
    }
    loop.schedule(at: loop.now(), tick)
    try loop.run()
    #expect(count == 3)
  }
}

@Suite struct EventLoopIdleTests {
  /// The loop's only wakeups are the ones something asked for. An external timerfd (which
  /// the loop does not know is a timer) fires once after 150 ms; the loop runs with
  /// `run()` (no timeout) and stops when it sees it. Any internal periodic tick, or a
  /// timerfd left armed, would show up as extra epoll_wait returns.
  @Test(arguments: [false, true])
  func anIdleLoopWakesOnlyForItsEvents(withFarTimer: Bool) throws {
    let loop = try EventLoop()
    if withFarTimer {
      // A pending timer an hour away must not cause wakeups either.
      loop.schedule(at: loop.now() + .seconds(3600)) { _ in Issue.record("must not fire") }
    } else {
      // A timer that fired and one that was cancelled leave the timerfd disarmed.
      loop.schedule(at: loop.now()) { _ in }
      try loop.runOnce(until: loop.now())
      loop.cancel(loop.schedule(at: loop.now() + .seconds(1)) { _ in })
      #expect(!loop.isTimerArmed)
    }
    let trigger = try externalTrigger(after: .milliseconds(150))
    defer { Syscall.close(trigger) }
    var triggered = 0
    _ = try loop.register(fd: trigger, interest: .readable) { _ in
      triggered += 1
      loop.stop()
    }
    let before = loop.statistics.wakeups
    try loop.run()
    #expect(triggered == 1)
    #expect(loop.statistics.wakeups - before == 1, "exactly one wakeup: the external trigger")
  }
}

@Suite struct EventLoopSignalTests {
  // raise() directs the signal at this thread; it is blocked here, so signalfd reads it
  // (other test threads never see it).
  @Test func signalsArriveThroughSignalfd() throws {
    let loop = try EventLoop()
    var got: [SignalInfo] = []
    try loop.onSignal(SIGUSR1) { got.append($0) }
    try loop.onSignal(SIGHUP) { got.append($0) }
    #expect(raise(SIGUSR1) == 0)
    #expect(raise(SIGHUP) == 0)
    try spin(loop) { got.count == 2 }
    #expect(Set(got.map(\.signal)) == [SIGUSR1, SIGHUP])
    #expect(got.allSatisfy { $0.senderPID == getpid() && $0.senderUID == getuid() })
    #expect(loop.statistics.signalsDelivered == 2)
  }

  @Test func aLaterHandlerReplacesTheEarlierOne() throws {
    let loop = try EventLoop()
    var calls: [String] = []
    try loop.onSignal(SIGUSR2) { _ in calls.append("old") }
    try loop.onSignal(SIGUSR2) { _ in calls.append("new") }
    #expect(raise(SIGUSR2) == 0)
    try spin(loop) { !calls.isEmpty }
    #expect(calls == ["new"])
  }
}

@Suite struct SyscallTests {
  @Test func errnoHasNameAndMessage() {
    #expect(Errno(ENOENT).name == "ENOENT")
    #expect(Errno(ENOENT).message == "No such file or directory")
    #expect(Errno(ENOENT).description == "ENOENT (No such file or directory)")
    #expect(Errno(99999).name == "E99999")
  }

  @Test func eagainIsAValueNotAnError() throws {
    let (r, w) = try Syscall.pipe(nonBlocking: true)
    defer { Syscall.close(r) }
    var buffer = [UInt8](repeating: 0, count: 4)
    let result = try buffer.withUnsafeMutableBytes { try Syscall.read(r, into: $0) }
    #expect(result == .wouldBlock)
    Syscall.close(w)  // once: a second close could hit another test's descriptor
    let eof = try buffer.withUnsafeMutableBytes { try Syscall.read(r, into: $0) }
    #expect(eof == .done(0))
  }

  @Test func flagsHelpers() throws {
    let (r, w) = try Syscall.pipe()
    defer { Syscall.close(r); Syscall.close(w) }
    #expect(fcntl(r, F_GETFD) & FD_CLOEXEC != 0)
    #expect(fcntl(r, F_GETFL) & O_NONBLOCK == 0)
    try Syscall.setNonBlocking(r)
    #expect(fcntl(r, F_GETFL) & O_NONBLOCK != 0)
    try Syscall.setCloseOnExec(r, false)
    #expect(fcntl(r, F_GETFD) & FD_CLOEXEC == 0)
    #expect(throws: Errno.badFileDescriptor) { try Syscall.setNonBlocking(-1) }
  }

  @Test func systemClockIsMonotonic() {
    let clock = SystemClock()
    let a = clock.now()
    let b = clock.now()
    #expect(b >= a)
    #expect(a.nanoseconds > 0)
  }
}

/// Quiet periods (issue 13, item 14): while a button's deadline is near, the socket
/// clients (`.low`) are not served, devices and timers are, and nothing of the clients'
/// is lost.
@Suite struct EventLoopQuietTests {
  /// During a quiet period the `.low` watches are not served, devices and timers are; once
  /// it ends, the client gets everything it sent meanwhile, which waited in its fd.
  @Test func aQuietPeriodHoldsClientsBackAndLosesNothing() throws {
    let loop = try EventLoop()
    loop.maximumQuiet = .seconds(3600)
    let client = try Syscall.pipe(nonBlocking: true)
    let device = try Syscall.pipe(nonBlocking: true)
    defer { [client.read, client.write, device.read, device.write].forEach { Syscall.close($0) } }
    var received: [UInt8] = []
    var order: [String] = []
    _ = try loop.register(fd: client.read, interest: .readable, priority: .low) { _ in
      var buffer = [UInt8](repeating: 0, count: 16)
      if case .done(let n)? = buffer.withUnsafeMutableBytes({ try? Syscall.read(client.read, into: $0) }) {
        received += buffer[0..<n]
      }
      order.append("client")
    }
    _ = try loop.register(fd: device.read, interest: .readable) { _ in
      var byte: UInt8 = 0
      _ = withUnsafeMutableBytes(of: &byte) { try? Syscall.read(device.read, into: $0) }
      order.append("device")
    }
    let quiet = loop.quiet(from: loop.now())
    #expect(loop.isQuiet)
    try Syscall.writeAll(client.write, [1, 2, 3])
    try Syscall.writeAll(device.write, [1])
    loop.schedule(at: loop.now()) { _ in order.append("timer") }
    try spin(loop) { order.count >= 2 }
    // The client was ready all along; a turn that served it would show here.
    try loop.runOnce(until: loop.now() + .milliseconds(20))
    #expect(order == ["device", "timer"])
    #expect(loop.statistics.quietTurns >= 1)
    try Syscall.writeAll(client.write, [4])
    loop.endQuiet(quiet)
    #expect(!loop.isQuiet)
    try spin(loop) { received.count == 4 }
    #expect(received == [1, 2, 3, 4])
    #expect(order.last == "client")
  }

  /// A period with an end needs nobody to end it: the loop wakes for its end by itself
  /// (no other timer, no fd ready but the client's) and serves the client then.
  @Test func aQuietPeriodEndsByItselfAndTheLoopWakesForIt() throws {
    let loop = try EventLoop()
    let client = try Syscall.pipe(nonBlocking: true)
    defer { [client.read, client.write].forEach { Syscall.close($0) } }
    var servedAt: MonotonicInstant?
    _ = try loop.register(fd: client.read, interest: .readable, priority: .low) { _ in
      if servedAt == nil { servedAt = loop.now() }
      var byte: UInt8 = 0
      _ = withUnsafeMutableBytes(of: &byte) { try? Syscall.read(client.read, into: $0) }
    }
    let start = loop.now()
    let end = start + .milliseconds(30)
    loop.quiet(from: start, until: end)
    try Syscall.writeAll(client.write, [1])
    // Only the period's end can wake the loop.
    #expect(try sleepUntil(loop) { servedAt != nil }, "the loop did not wake for the end of the quiet period")
    let served = try #require(servedAt)
    #expect(served >= end)
  }

  /// A period that starts later lets the clients be served until then, and the loop wakes
  /// for its start: a sleeping loop is quiet from that instant without anything else
  /// happening.
  @Test func aQuietPeriodStartsAtItsInstant() throws {
    let loop = try EventLoop()
    loop.maximumQuiet = .seconds(3600)
    let client = try Syscall.pipe(nonBlocking: true)
    defer { [client.read, client.write].forEach { Syscall.close($0) } }
    var served = 0
    _ = try loop.register(fd: client.read, interest: .readable, priority: .low) { _ in
      served += 1
      var byte: UInt8 = 0
      _ = withUnsafeMutableBytes(of: &byte) { try? Syscall.read(client.read, into: $0) }
    }
    let start = loop.now() + .milliseconds(30)
    loop.quiet(from: start)
    #expect(!loop.isQuiet)
    try Syscall.writeAll(client.write, [1])
    try spin(loop) { served == 1 }
    #expect(try sleepUntil(loop) { loop.now() >= start }, "the loop did not wake for the start of the quiet period")
    #expect(loop.isQuiet)
    try Syscall.writeAll(client.write, [2])
    try loop.runOnce(until: loop.now() + .milliseconds(20))
    try loop.runOnce(until: loop.now() + .milliseconds(20))
    #expect(served == 1)
  }

  /// However long quiet periods last, clients are served once every ``maximumQuiet``.
  @Test func aQuietStretchIsBoundedByMaximumQuiet() throws {
    let loop = try EventLoop()
    loop.maximumQuiet = .milliseconds(20)
    let client = try Syscall.pipe(nonBlocking: true)
    defer { [client.read, client.write].forEach { Syscall.close($0) } }
    var servedAt: MonotonicInstant?
    _ = try loop.register(fd: client.read, interest: .readable, priority: .low) { _ in
      if servedAt == nil { servedAt = loop.now() }
      var byte: UInt8 = 0
      _ = withUnsafeMutableBytes(of: &byte) { try? Syscall.read(client.read, into: $0) }
    }
    let start = loop.now()
    let quiet = loop.quiet(from: start)  // never ended
    try Syscall.writeAll(client.write, [1])
    #expect(try sleepUntil(loop) { servedAt != nil }, "the client was never served")
    let served = try #require(servedAt)
    #expect(served >= start + .milliseconds(20))
    #expect(loop.statistics.quietBreaks == 1)
    #expect(loop.isQuiet, "the period itself goes on")
    loop.endQuiet(quiet)
  }

  /// A client that asked to be served again (a backlog) keeps its turn through a quiet
  /// period and gets it right after.
  @Test func aRepeatedDispatchWaitsForTheQuietToEnd() throws {
    let loop = try EventLoop()
    loop.maximumQuiet = .seconds(3600)
    let p = try Syscall.pipe(nonBlocking: true)
    defer { [p.read, p.write].forEach { Syscall.close($0) } }
    var seen: [EventLoop.IOEvents] = []
    var quiet: QuietID?
    var id: WatchID?
    id = try loop.register(fd: p.read, interest: .readable, priority: .low) { events in
      seen.append(events)
      var byte: UInt8 = 0
      _ = withUnsafeMutableBytes(of: &byte) { try? Syscall.read(p.read, into: $0) }
      if seen.count == 1 {
        loop.dispatchAgain(id!)
        quiet = loop.quiet(from: loop.now())
      }
    }
    try Syscall.writeAll(p.write, [1])
    try loop.runOnce(until: loop.now() + .seconds(5))
    #expect(seen == [.readable])
    try loop.runOnce(until: loop.now() + .milliseconds(20))
    #expect(seen == [.readable], "not during the quiet")
    loop.endQuiet(try #require(quiet))
    try loop.runOnce(until: loop.now() + .seconds(5))
    #expect(seen == [.readable, []])
  }
}
