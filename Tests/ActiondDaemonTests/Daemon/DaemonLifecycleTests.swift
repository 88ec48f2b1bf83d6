// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// The built `actiond` as a service: command line, persistence across restarts, SIGHUP,
/// sd_notify, SIGTERM, and provider applications, observed from outside.
@Suite struct DaemonLifecycleTests {
  private static let timers = timers(named: "Timer")

  private static func timers(named name: String) -> String {
    """
    [
      { kind: "org.test.timer", type: "toggle", displayName: "\(name)", valueText: { on: "Running", off: "Stopped" },
        actionHint: { on: "Stop", off: "Start" }, intent: { type: "state" } },
      { kind: "org.test.room", type: "toggle", displayName: "Room", intent: { type: "state" },
        parameters: [{ name: "room", type: "string", required: true }] },
    ]
    """
  }

  @Test func assignmentAndValuesSurviveARestart() throws {
    let h = try DaemonHarness(controls: Self.timers, assignments: #"{ action: "org.test.timer" }"#)
    try h.start()
    var c = try h.connect()
    let assigned = try h.request(
      c, #""request":"assign","button":"action","kind":"org.test.room","configuration":{"room":"kitchen"}"#)
    #expect(assigned.failure == nil, "\(assigned)")
    #expect(try h.request(c, #""request":"perform","button":"action""#).control?.value == true)
    #expect(try h.request(c, #""request":"set","kind":"org.test.timer","value":true"#).control?.value == true)
    h.forget(c)
    #expect(try h.stop() == 0)

    try h.start()
    #expect(h.log.contains("event=state-loaded"))
    c = try h.connect()
    let status = try h.request(c, #""request":"status""#)
    let control = status.buttons?.first?.control
    #expect(control?.kind == "org.test.room")
    #expect(control?.configuration == ["room": "kitchen"])
    #expect(control?.value == true)
    #expect(try h.request(c, #""request":"get","kind":"org.test.timer""#).controls?.first?.valueText == "Running")
  }

  /// A change that cannot be saved is not made: `set`, `perform` and `assign` fail with
  /// `state-not-saved`, nothing is announced as changed, the old file stays, and once the
  /// disk takes writes again the next change is saved.
  @Test func aChangeThatCannotBeSavedFailsAndIsNotMade() throws {
    let h = try DaemonHarness(controls: Self.timers, assignments: #"{ action: "org.test.timer" }"#)
    guard mkdir(h.stateDirectory, 0o755) == 0 else { throw Errno.current }
    let old = StateSnapshot(values: ["org.test.timer": false]).encoded()
    try h.directory.write("state/state.json", old)
    // Root ignores permission bits: a directory where the temporary file goes blocks saving.
    guard mkdir(h.stateDirectory + "/state.json.tmp", 0o755) == 0 else { throw Errno.current }
    try h.start()
    let c = try h.connect()
    try h.subscribe(c)
    let set = try h.request(c, #""request":"set","kind":"org.test.timer","value":true"#)
    #expect(set.failure?.code == .stateNotSaved, "\(set)")
    let perform = try h.request(c, #""request":"perform","button":"action""#)
    #expect(perform.failure?.code == .stateNotSaved, "\(perform)")
    let assign = try h.request(
      c, #""request":"assign","button":"action","kind":"org.test.room","configuration":{"room":"hall"}"#)
    #expect(assign.failure?.code == .stateNotSaved, "\(assign)")
    let status = try h.request(c, #""request":"status""#)
    #expect(status.buttons?.first?.control?.kind == "org.test.timer")
    #expect(status.buttons?.first?.control?.value == false, "the state claims what is not stored")
    #expect(readFile(h.stateDirectory + "/state.json") == old)
    #expect(h.log.contains("event=state-save-failed"))

    guard rmdir(h.stateDirectory + "/state.json.tmp") == 0 else { throw Errno.current }
    #expect(try h.request(c, #""request":"set","kind":"org.test.timer","value":true"#).control?.value == true)
    #expect(readFile(h.stateDirectory + "/state.json")?.contains(#""org.test.timer": true"#) == true)
    #expect(h.log.contains("event=state-saved"))
    #expect(try h.stop() == 0)
  }

  /// A state file that cannot be read is never overwritten by defaults: saving is off, so
  /// every change is refused with `state-not-saved` rather than answered and then lost.
  @Test func anUnreadableStateFileMakesEveryChangeFail() throws {
    let h = try DaemonHarness(controls: Self.timers, assignments: #"{ action: "org.test.timer" }"#)
    guard mkdir(h.stateDirectory, 0o755) == 0, mkdir(h.stateDirectory + "/state.json", 0o755) == 0 else {
      throw Errno.current
    }
    try h.start()
    #expect(h.log.contains("event=state-unreadable"))
    let c = try h.connect()
    let set = try h.request(c, #""request":"set","kind":"org.test.timer","value":true"#)
    #expect(set.failure?.code == .stateNotSaved, "\(set)")
    #expect(try h.request(c, #""request":"get","kind":"org.test.timer""#).controls?.first?.value == false)
    #expect(try h.stop() == 0)
  }

  @Test func corruptStateFileIsKeptAsideAndTheDaemonStarts() throws {
    let h = try DaemonHarness(controls: Self.timers, assignments: #"{ action: "org.test.timer" }"#)
    guard mkdir(h.stateDirectory, 0o755) == 0 else { throw Errno.current }
    let garbage = "{\"version\": 1, \"assignments\": [trunc"
    try h.directory.write("state/state.json", garbage)
    try h.start()
    #expect(h.log.contains("event=state-corrupt"))
    #expect(readFile(h.stateDirectory + "/state.json.corrupt-1") == garbage)
    let c = try h.connect()
    // From the configuration's defaults, and saving works again.
    let status = try h.request(c, #""request":"status""#)
    #expect(status.buttons?.first?.control?.kind == "org.test.timer")
    #expect(status.buttons?.first?.control?.value == false)
    #expect(try h.request(c, #""request":"perform","button":"action""#).control?.value == true)
    #expect(readFile(h.stateDirectory + "/state.json")?.contains("org.test.timer") == true)
    #expect(readFile(h.stateDirectory + "/state.json.corrupt-1") == garbage)
  }

  @Test func sighupAppliesAGoodConfigurationAndKeepsTheOldOneOnErrors() throws {
    let h = try DaemonHarness(controls: Self.timers, assignments: #"{ action: "org.test.timer" }"#)
    try h.start()
    let c = try h.connect()
    try h.subscribe(c)

    try h.writeConfiguration(
      controls: Self.timers(named: "Focus"),
      assignments: #"{ action: "org.test.timer" }"#)
    h.signal(SIGHUP)
    let applied = try h.waitForEvent(c, "config-reloaded") {
      if case .configReloaded = $0 { return true } else { return false }
    }
    #expect(applied == .configReloaded(applied: true, problems: []))
    // Subscribers hear announcements before the log gets them.
    try h.waitForLog("event=config-reloaded applied=1")
    #expect(try h.request(c, #""request":"get","kind":"org.test.timer""#).controls?.first?.displayName == "Focus")

    // A broken file: every problem is logged and announced; the running one stays.
    try h.writeConfiguration(
      controls: #"[{ kind: "org.test.timer", type: "toggle", displayName: "Broken", intent: { type: "teleport" } }]"#,
      assignments: #"{ action: "org.test.nope" }"#)
    let seen = c.events.count
    h.signal(SIGHUP)
    let rejected = try h.waitForEvent(c, "a second config-reloaded", after: seen) {
      if case .configReloaded = $0 { return true } else { return false }
    }
    guard case .configReloaded(applied: false, let problems) = rejected else {
      Issue.record("the broken configuration was applied: \(rejected)")
      return
    }
    #expect(problems.count == 2, "\(problems)")
    #expect(problems.contains { $0.contains("intent.type") })
    #expect(problems.contains { $0.contains("assignments.action") })
    #expect(occurrences(of: "event=config-problem", in: h.log) == 2)
    try h.waitForLog("configuration rejected, the running one stays (2 problems) event=config-reloaded applied=0")
    #expect(try h.request(c, #""request":"get","kind":"org.test.timer""#).controls?.first?.displayName == "Focus")
    #expect(try h.request(c, #""request":"perform","button":"action""#).control?.value == true)
  }

  /// A reload that removes a control whose intent is running: the intent finishes, and
  /// the waiting request gets an answer that says what happened (not a dropped request).
  @Test func reloadRemovingARunningControlStillAnswers() throws {
    let h = try DaemonHarness()
    let gate = try h.gate("gate")
    let slow = try h.script("slow", "cat '\(gate)' > /dev/null")
    try h.writeConfiguration(
      controls: """
        [{ kind: "org.test.slow", type: "button", displayName: "Slow", intent: { type: "exec", argv: ["\(slow)"] } }]
        """)
    try h.start()
    let c = try h.connect()
    try h.subscribe(c)
    let id = h.send(c, #""request":"perform","kind":"org.test.slow""#)
    try h.waitForEvent(c, "performing") { if case .performing = $0 { return true } else { return false } }
    try h.writeConfiguration(controls: "[]")
    h.signal(SIGHUP)
    try h.waitForEvent(c, "config-reloaded") { $0 == .configReloaded(applied: true, problems: []) }
    try h.release(gate: gate)
    let answer = try h.answer(c, id)
    #expect(answer.failure?.code == .unknownKind, "\(answer)")
    #expect(answer.failure?.message.contains("removed from the configuration while its intent ran") == true)
    #expect(
      c.events.contains {
        if case .failed(kind: "org.test.slow", _, _, _, _) = $0 { return true } else { return false }
      })
  }

  /// READY=1 only once the socket answers; RELOADING=1 with MONOTONIC_USEC on SIGHUP, then
  /// READY=1 again; STOPPING=1 on SIGTERM. Against a real AF_UNIX datagram socket.
  @Test func sdNotifySequence() throws {
    let h = try DaemonHarness(controls: Self.timers)
    let receiver = try DatagramReceiver(try #require(UnixAddress(h.directory.file("notify"))))
    h.environment = ["NOTIFY_SOCKET": h.directory.file("notify")]
    h.extraDescriptors = [receiver.fd]
    var messages: [String] = []
    func collect(until text: String) throws {
      try h.wait("\"\(text)\" on the notify socket") {
        while let m = receiver.receiveText() { messages.append(m) }
        return messages.contains { $0.split(separator: "\n").contains { $0 == text } }
      }
    }
    try h.start(waitUntilRunning: false)
    try collect(until: "READY=1")
    // Ready means ready: the socket accepts and answers at once.
    let c = try h.connect()
    #expect(try h.request(c, #""request":"ping""#).failure == nil)
    #expect(messages.count == 1)
    let ready = messages[0].split(separator: "\n")
    #expect(ready.first == "READY=1")
    #expect(ready.contains { $0.hasPrefix("STATUS=0/1 button(s) bound") }, "\(ready)")

    let before = Syscall.monotonicNanoseconds() / 1000
    h.signal(SIGHUP)
    try collect(until: "RELOADING=1")
    let after = Syscall.monotonicNanoseconds() / 1000
    let reloading = messages[1].split(separator: "\n")
    #expect(reloading.first == "RELOADING=1")
    let usec = reloading.first { $0.hasPrefix("MONOTONIC_USEC=") }.flatMap { Int64($0.dropFirst(15)) }
    #expect(usec.map { $0 >= before && $0 <= after } == true, "\(reloading) not in [\(before), \(after)]")
    try h.wait("READY=1 after the reload") {
      while let m = receiver.receiveText() { messages.append(m) }
      return messages.count >= 3
    }
    #expect(messages[2].hasPrefix("READY=1\n"))

    #expect(try h.stop() == 0)
    while let m = receiver.receiveText() { messages.append(m) }
    #expect(messages.last == "STOPPING=1", "\(messages)")
    #expect(messages.filter { $0.hasPrefix("READY=1") }.count == 2)
  }

  /// SIGTERM: a running intent is terminated, subscribers are told, the state is flushed,
  /// the socket file is removed, exit status 0.
  @Test func theHoldDeadlineTimerGetsTheSmallestTimerSlack() throws {
    let h = try DaemonHarness(controls: Self.timers)
    try h.start()
    // The kernel may fire a timer up to the slack late; the default is 50 µs.
    #expect(readFile("/proc/\(h.pid)/timerslack_ns")?.split(separator: "\n").first == "1")
    #expect(try h.stop() == 0)
  }

  @Test func sigtermShutsDownCleanly() throws {
    let h = try DaemonHarness()
    let pidFile = h.directory.file("pid")
    let long = try h.script("long", "echo $$ > '\(pidFile)'\nexec sleep 1000")
    try h.writeConfiguration(
      controls: """
        [{ kind: "org.test.long", type: "button", displayName: "Long",
           intent: { type: "exec", argv: ["\(long)"], timeoutMs: 600000 } }]
        """)
    try h.start()
    let c = try h.connect()
    try h.subscribe(c)
    let id = h.send(c, #""request":"perform","kind":"org.test.long""#)
    try h.wait("the intent to start") { readFile(pidFile).flatMap { pid_t($0.dropLast()) } != nil }
    let child = pid_t(readFile(pidFile)!.dropLast())!
    #expect(access(h.socketPath, F_OK) == 0)

    #expect(try h.stop() == 0, "\(h.log)")
    // SIGTERM reached the intent's group; its death is the kernel's business and takes
    // as long as the machine needs.
    try h.wait("the intent's process to die") { processIsGone(child) }
    #expect(access(h.socketPath, F_OK) != 0, "the socket file is left behind")
    #expect(h.log.contains("stopping (SIGTERM)"))
    try h.wait("the connection to close") { c.eof }
    #expect(c.errors.contains { $0.code == .shuttingDown })
    #expect(c.answer(id) == nil || c.answer(id)?.failure != nil)
    #expect(readFile(h.stateDirectory + "/state.json") != nil)
  }

  /// A command that ignores SIGTERM (and a background child of it) gets SIGKILL once the
  /// grace period has passed, before the daemon exits: nothing it started outlives it.
  @Test func aStopKillsACommandThatIgnoresSigtermBeforeExiting() throws {
    let h = try DaemonHarness()
    let pidFile = h.directory.file("pid")
    // `trap '' TERM` is inherited by what the script starts: neither sleep dies of SIGTERM.
    let stubborn = try h.script(
      "stubborn",
      "trap '' TERM\nsleep 1000 &\necho $$ > '\(pidFile).tmp'\nmv '\(pidFile).tmp' '\(pidFile)'\nexec sleep 1000")
    try h.writeConfiguration(
      controls: """
        [{ kind: "org.test.stubborn", type: "button", displayName: "Stubborn",
           intent: { type: "exec", argv: ["\(stubborn)"], timeoutMs: 600000 } }]
        """)
    try h.start()
    let c = try h.connect()
    _ = h.send(c, #""request":"perform","kind":"org.test.stubborn""#)
    try h.wait("the command to start") { readFile(pidFile).flatMap { pid_t($0.dropLast()) } != nil }
    let group = pid_t(readFile(pidFile)!.dropLast())!
    #expect(!liveMembers(ofGroup: group).isEmpty)
    #expect(try h.stop() == 0, "\(h.log)")
    #expect(liveMembers(ofGroup: group).isEmpty, "the command's group outlived the daemon: \(h.log)")
  }

  /// Ctrl-C in a terminal is a clean stop too.
  @Test func sigintStopsLikeSigterm() throws {
    let h = try DaemonHarness(controls: Self.timers, assignments: #"{ action: "org.test.timer" }"#)
    try h.start()
    h.signal(SIGINT)
    #expect(try h.waitForExit() == 0)
    #expect(h.log.contains("stopping (SIGINT)"))
    #expect(access(h.socketPath, F_OK) != 0)
  }

  @Test func commandLine() throws {
    let actiond = try builtExecutablePath("actiond")
    let directory = try TemporaryDirectory("actiond-cli")
    func run(_ arguments: [String]) throws -> ChildProcess {
      let child = try ChildProcess([actiond] + arguments)
      var fds: [pollfd] = []
      while !child.poll() {
        fds = child.openDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        _ = Glibc.poll(&fds, nfds_t(fds.count), 100)
      }
      return child
    }

    let help = try run(["--help"])
    #expect(help.exitStatus == 0)
    #expect(help.output.hasPrefix("Usage: actiond [OPTIONS]"))
    let version = try run(["--version"])
    #expect(version.exitStatus == 0)
    #expect(version.output == "actiond \(ActiondVersion.string) (protocol \(ProtocolVersion.current))\n")
    for bad in [["--frobnicate"], ["--log-level", "loud"], ["--config"], ["extra"]] {
      let child = try run(bad)
      #expect(child.exitStatus == 2, "\(bad)")
      #expect(child.errorOutput.hasPrefix("actiond: "), "\(bad)")
      #expect(child.errorOutput.contains("Usage: actiond"), "\(bad)")
      #expect(child.output.isEmpty)
    }

    let good = try directory.write("good.json", "{ buttons: [ { name: 'action', key: 'KEY_PROG1' } ] }")
    let ok = try run(["--check-config", good])
    #expect(ok.exitStatus == 0, "\(ok.errorOutput)")
    #expect(ok.output == "\(good): OK (1 button(s), 0 control(s), 0 assignment(s))\n")

    let bad = try directory.write("bad.json", "{\n  buttons: [ { name: 'action', key: 'KEY_NOPE' } ],\n  bogus: 1,\n}")
    let problems = try run(["--check-config", bad])
    #expect(problems.exitStatus == 1)
    #expect(problems.errorOutput.contains("\(bad):2: buttons[0].key: unknown key name \"KEY_NOPE\""))
    #expect(problems.errorOutput.contains("\(bad):3: bogus: unknown key"))
    #expect(problems.errorOutput.hasSuffix("2 problems found\n"))
    // --config FILE is what --check-config checks when no FILE follows.
    #expect(try run(["--config", bad, "--check-config"]).exitStatus == 1)
    let missing = try run(["--check-config", directory.file("missing.json")])
    #expect(missing.exitStatus == 1)
    #expect(missing.errorOutput.contains("ENOENT"))

    // A configuration that does not load stops the start with status 1, before anything is created.
    let refused = try run(["--config", bad, "--socket", directory.file("s.sock"), "--state-dir", directory.file("st")])
    #expect(refused.exitStatus == 1)
    #expect(refused.errorOutput.contains("invalid configuration (2 problems)"))
    #expect(access(directory.file("s.sock"), F_OK) != 0)
  }

  /// A raw client registers as the provider of a control, answers the daemon's `value`
  /// and `perform` requests; once it disconnects the control is unavailable.
  @Test func providerApplicationEndToEnd() throws {
    let h = try DaemonHarness(
      controls: """
        [{ kind: "org.test.lamp", type: "toggle", displayName: "Lamp", valueText: { on: "Lit", off: "Dark" },
           intent: { type: "provider" }, value: { type: "provider" } }]
        """, assignments: #"{ action: "org.test.lamp" }"#)
    try h.start()
    let user = try h.connect()
    try h.subscribe(user)
    // Nobody provides it yet.
    let early = try h.request(user, #""request":"perform","button":"action""#)
    #expect(early.failure?.code == .unavailable, "\(early)")

    let app = try h.connect()
    #expect(try h.request(app, #""request":"register","kinds":["org.test.lamp"]"#).failure == nil)
    var lit = false
    var answered = 0
    var performs: [Bool?] = []
    /// When set, the app refuses performs with this message.
    var refusal: String?
    /// When set, the app takes performs and never answers them.
    var silent = false
    /// Answers every provider request the app has not answered yet.
    func serve() {
      let requests = app.messages.compactMap { m -> ProviderRequest? in
        if case .providerRequest(let r) = m { return r } else { return nil }
      }
      for r in requests.dropFirst(answered) {
        switch r.body {
        case .value:
          app.send(#"{"type":"reply","id":"\#(r.id)","result":{"value":\#(lit)}}"#)
        case .perform(_, _, let value):
          performs.append(value)
          if silent {
            // Taken, never answered.
          } else if let refusal {
            app.send(#"{"type":"error","id":"\#(r.id)","code":"failed","message":"\#(refusal)"}"#)
          } else {
            lit = value ?? lit
            app.send(#"{"type":"reply","id":"\#(r.id)","result":{}}"#)
          }
        }
        answered += 1
      }
    }
    // Registering makes the daemon ask for the value at once.
    try h.wait("the lamp's value from the provider") {
      serve()
      return user.events.contains {
        if case .state(let control, _) = $0 { return control.available && control.value == false }
        return false
      }
    }

    let id = h.send(user, #""request":"perform","button":"action""#)
    var result: ServerMessage?
    try h.wait("the perform through the provider") {
      serve()
      result = user.answer(id)
      return result != nil
    }
    #expect(result?.control?.value == true, "\(String(describing: result))")
    #expect(result?.control?.valueText == "Lit")
    #expect(performs == [true])

    // The app refuses: the perform fails with its message and the lamp stays lit.
    refusal = "the bulb is busy"
    let refusedID = h.send(user, #""request":"perform","button":"action""#)
    var refused: ServerMessage?
    try h.wait("the refused perform") {
      serve()
      refused = user.answer(refusedID)
      return refused != nil
    }
    #expect(refused?.failure == ProtocolError(.failed, "the bulb is busy"), "\(String(describing: refused))")
    #expect(performs == [true, false])
    #expect(try h.request(user, #""request":"get","kind":"org.test.lamp""#).controls?.first?.value == true)

    // The provider goes away in the middle of a perform: that perform fails, the control
    // becomes unavailable (announced), and the next perform fails at once.
    silent = true
    let pendingID = h.send(user, #""request":"perform","button":"action""#)
    try h.wait("the app to receive the perform") {
      serve()
      return performs.count == 3
    }
    h.forget(app)
    let seen = user.events.count
    shutdown(app.fd, Int32(SHUT_RDWR))
    let lost = try h.answer(user, pendingID)
    #expect(lost.failure == ProtocolError(.unavailable, "the provider disconnected"), "\(lost)")
    try h.waitForEvent(user, "the lamp to become unavailable", after: seen) {
      if case .state(let control, _) = $0 { return !control.available } else { return false }
    }
    let after = try h.request(user, #""request":"perform","button":"action""#)
    #expect(after.failure?.code == .unavailable, "\(after)")
  }
}
