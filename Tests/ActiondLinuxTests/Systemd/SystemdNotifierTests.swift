// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import ActiondTesting
import Glibc
import Testing

@Suite struct SystemdNotifierTests {
  @Test(arguments: [false, true])
  func messagesReachTheNotifySocket(abstract: Bool) throws {
    let dir = try TemporaryDirectory()
    let name = abstract ? "@" + uniqueName("notify") : dir.file("notify.sock")
    let receiver = try DatagramReceiver(try #require(UnixAddress(name)))
    let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": name])
    #expect(notifier.isEnabled)
    #expect(notifier.address?.isAbstract == abstract)
    #expect(notifier.address?.description == name)

    try notifier.ready(status: "2 buttons\nbound")
    #expect(receiver.receiveText() == "READY=1\nSTATUS=2 buttons bound")
    try notifier.status("Waiting for device")
    #expect(receiver.receiveText() == "STATUS=Waiting for device")
    try notifier.reloading(at: MonotonicInstant(nanoseconds: 12_345_678_999))
    #expect(receiver.receiveText() == "RELOADING=1\nMONOTONIC_USEC=12345678")
    try notifier.stopping()
    #expect(receiver.receiveText() == "STOPPING=1")
    try notifier.watchdog()
    #expect(receiver.receiveText() == "WATCHDOG=1")
    #expect(receiver.receive() == nil)
  }

  @Test func unsetMeansNoOp() throws {
    let notifier = SystemdNotifier(environment: [:])
    #expect(!notifier.isEnabled)
    try notifier.ready()
    try notifier.watchdog()
    #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]).isEnabled == false)
  }

  @Test func aMissingSocketIsReportedNotHidden() throws {
    let dir = try TemporaryDirectory()
    let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": dir.file("absent.sock")])
    do {
      try notifier.ready()
      Issue.record("expected an error")
    } catch let error as SystemCallError {
      #expect(error.errno == .notFound)
      #expect(error.description.contains("absent.sock"))
    }
  }

  @Test func watchdogIntervalIsHalfOfWatchdogUsecForThisProcess() {
    let pid = getpid()
    #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "20000000"], pid: pid) == .seconds(10))
    #expect(
      SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "\(pid)"], pid: pid)
        == .milliseconds(1500))
    #expect(
      SystemdNotifier.watchdogInterval(
        environment: ["WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "\(pid + 1)"], pid: pid)
        == nil)
    #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "0"], pid: pid) == nil)
    #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "soon"], pid: pid) == nil)
    #expect(SystemdNotifier.watchdogInterval(environment: [:], pid: pid) == nil)
  }

  @Test func watchdogPingsFromTheLoop() throws {
    let dir = try TemporaryDirectory()
    let path = dir.file("notify.sock")
    let receiver = try DatagramReceiver(try #require(UnixAddress(path)))
    let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "20000"])
    #expect(notifier.watchdogInterval == .milliseconds(10))
    let loop = try EventLoop()
    notifier.startWatchdog(on: loop)
    notifier.startWatchdog(on: loop)  // idempotent: still one ping chain
    #expect(loop.pendingTimerCount == 1)
    var pings = 0
    for _ in 0..<200 where pings < 2 {
      try loop.runOnce(until: loop.now() + .seconds(5))
      while let text = receiver.receiveText() {
        #expect(text == "WATCHDOG=1")
        pings += 1
      }
    }
    #expect(pings == 2)
    notifier.stopWatchdog(on: loop)
    #expect(loop.pendingTimerCount == 0)
    #expect(!loop.isTimerArmed)
  }

  @Test func addressesAreValidated() {
    #expect(UnixAddress("") == nil)
    #expect(UnixAddress(String(repeating: "x", count: 200)) == nil)
    #expect(UnixAddress("@" + String(repeating: "x", count: 107)) != nil)
    #expect(UnixAddress("/run/x.sock")?.isAbstract == false)
  }
}

@Suite struct SocketActivationTests {
  @Test func listenFDsForThisProcessOnly() {
    let pid = getpid()
    #expect(SocketActivation.listenFDs(environment: ["LISTEN_PID": "\(pid + 1)", "LISTEN_FDS": "1"], pid: pid) == [])
    #expect(SocketActivation.listenFDs(environment: ["LISTEN_FDS": "1"], pid: pid) == [])
    #expect(SocketActivation.listenFDs(environment: ["LISTEN_PID": "\(pid)", "LISTEN_FDS": "x"], pid: pid) == [])
    #expect(SocketActivation.listenFDs(environment: ["LISTEN_PID": "\(pid)", "LISTEN_FDS": "0"], pid: pid) == [])
    // fd 3.. may be anything in the test process; pass a fake pid so nothing is touched
    // beyond setting close-on-exec on fds that exist.
    #expect(
      SocketActivation.listenFDs(environment: ["LISTEN_PID": "4242", "LISTEN_FDS": "2"], pid: 4242) == [3, 4])
  }
}

/// A unique-enough name for abstract sockets: pid plus a random number per call.
private func uniqueName(_ label: String) -> String {
  "actiond-test-\(getpid())-\(label)-\(UInt32.random(in: 0...UInt32.max))"
}
