// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// Intents and value providers of the real `actiond`, with real child processes (fixture
/// scripts in a temporary directory), driven over its socket.
@Suite struct DaemonIntentTests {
  private static let performAction = #""request":"perform","button":"action""#

  @Test func execIntentRunsAndTheValueIsReadBack() throws {
    let h = try DaemonHarness()
    let flag = try h.directory.write("flag", "0")
    let set = try h.script("set-flag", "echo \"setting $ACTIOND_VALUE\"\nprintf %s \"$ACTIOND_VALUE\" > '\(flag)'")
    let get = try h.script("get-flag", "[ \"$(cat '\(flag)')\" = 1 ]")
    try h.writeConfiguration(
      controls: """
        [{ kind: "org.test.flag", type: "toggle", displayName: "Flag", valueText: { on: "Running", off: "Stopped" },
           intent: { type: "exec", argv: ["\(set)"] }, value: { type: "exec", argv: ["\(get)"] } }]
        """, assignments: #"{ action: "org.test.flag" }"#)
    try h.start()
    let c = try h.connect()
    try h.subscribe(c)

    let on = try h.request(c, Self.performAction)
    #expect(on.control?.value == true, "\(on)")
    #expect(on.control?.valueText == "Running")
    #expect(on.control?.hint == "Hold to Turn Off")
    #expect(readFile(flag) == "1")
    #expect(h.log.contains("[org.test.flag] setting 1"))
    // The announcements precede the reply on the same connection.
    #expect(c.events.contains(.performing(kind: "org.test.flag", button: "action", source: .socket, value: true)))
    let performed = c.events.compactMap { e -> ControlSnapshot? in
      if case .performed(button: "action", source: .socket, _, let control) = e { return control }
      return nil
    }
    #expect(performed.map(\.valueText) == ["Running"])

    let off = try h.request(c, Self.performAction)
    #expect(off.control?.value == false)
    #expect(off.control?.valueText == "Stopped")
    #expect(readFile(flag) == "0")
  }

  @Test func nonZeroExitFailsWithTheReasonAndKeepsTheState() throws {
    let h = try DaemonHarness()
    let script = try h.script("broken", "echo 'disk on fire' >&2\nexit 3")
    try h.writeConfiguration(
      controls: """
        [{ kind: "org.test.broken", type: "toggle", displayName: "Broken",
           intent: { type: "exec", argv: ["\(script)"] } }]
        """, assignments: #"{ action: "org.test.broken" }"#)
    try h.start()
    let c = try h.connect()
    try h.subscribe(c)
    let answer = try h.request(c, Self.performAction)
    #expect(answer.failure == ProtocolError(.failed, "the command exited with status 3"), "\(answer)")
    #expect(
      c.events.contains(
        .failed(
          kind: "org.test.broken", button: "action", source: .socket,
          error: ProtocolError(.failed, "the command exited with status 3"))))
    #expect(h.log.contains("[org.test.broken] disk on fire"))
    // The store-backed value did not move.
    let status = try h.request(c, #""request":"status""#)
    #expect(status.buttons?.first?.control?.value == false)
    #expect(!c.events.contains { if case .state = $0 { return true } else { return false } })
  }

  /// A command ignoring SIGTERM, with a grandchild that ignores it too: after the timeout
  /// the whole process group is gone (SIGKILL after the grace period), and the perform
  /// fails with `timeout`.
  @Test func timeoutKillsTheWholeProcessGroup() throws {
    let h = try DaemonHarness()
    let pids = h.directory.file("pids")
    let hang = try h.script(
      "hang",
      """
      trap '' TERM
      sleep 1000 &
      echo "$$ $!" > '\(pids)'
      wait
      """)
    try h.writeConfiguration(
      controls: """
        [{ kind: "org.test.hang", type: "button", displayName: "Hang",
           intent: { type: "exec", argv: ["\(hang)"], timeoutMs: 300 } }]
        """)
    try h.start()
    let c = try h.connect()
    let answer = try h.request(c, #""request":"perform","kind":"org.test.hang""#)
    #expect(answer.failure?.code == .timeout, "\(answer)")
    #expect(answer.failure?.message.hasPrefix("the command timed out after") == true)
    let written = readFile(pids)?.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { pid_t($0) } ?? []
    #expect(written.count == 2, "pids file: \(readFile(pids) ?? "missing")")
    try h.wait("the command and its grandchild to be killed") { written.allSatisfy(processIsGone) }
    // The daemon is still serving.
    #expect(try h.request(c, #""request":"ping""#).failure == nil)
  }

  /// What an exec intent's environment holds: the contract, PATH and the locale, and
  /// nothing of the daemon's own (NOTIFY_SOCKET, secrets, HOME).
  @Test func environmentContract() throws {
    let h = try DaemonHarness()
    let notify = try DatagramReceiver(try #require(UnixAddress(h.directory.file("notify"))))
    h.environment = [
      "NOTIFY_SOCKET": h.directory.file("notify"), "SECRET_TOKEN": "hunter2", "HOME": "/root", "LANG": "C.UTF-8",
      "TZ": "UTC", "PWD": "/somewhere",
    ]
    let out = h.directory.file("env")
    let dump = try h.script("dump-env", "printf '%s\\n' \"$@\" > \"$1.args\"\nexec /usr/bin/env > \"$1\"")
    try h.writeConfiguration(
      controls: """
        [
          { kind: "org.test.env", type: "toggle", displayName: "Env",
            intent: { type: "exec", argv: ["\(dump)", "\(out)", "--mode=${mode}"] },
            parameters: [{ name: "mode", type: "string", default: "plain" }, { name: "level", type: "integer", default: 3 }] },
          { kind: "org.test.env-button", type: "button", displayName: "Env Button",
            intent: { type: "exec", argv: ["\(dump)", "\(out)"] } },
        ]
        """, assignments: #"{ action: { kind: "org.test.env", configuration: { mode: "x; rm -rf / $HOME" } } }"#)
    try h.start()
    _ = notify
    let c = try h.connect()

    func environment() -> [String: String] { environmentDump(readFile(out) ?? "") }
    let allowed: Set<String> = ["PATH", "LANG", "TZ", "PWD"]

    #expect(try h.request(c, Self.performAction).control?.value == true)
    var env = environment()
    #expect(env["ACTIOND_KIND"] == "org.test.env")
    #expect(env["ACTIOND_BUTTON"] == "action")
    #expect(env["ACTIOND_PRESS_TIME"] == nil, "a socket perform is no press")
    #expect(env["ACTIOND_VALUE"] == "1")
    #expect(env["ACTIOND_PARAM_MODE"] == "x; rm -rf / $HOME")
    #expect(env["ACTIOND_PARAM_LEVEL"] == "3")
    #expect(env["ACTIOND_INSTANCE"]?.hasPrefix("org.test.env{") == true)
    #expect(env["LANG"] == "C.UTF-8")
    #expect(env["TZ"] == "UTC")
    // The shell sets PWD to where it runs (the default working directory), not the daemon's.
    #expect(env["PWD"] == "/")
    #expect(env["PATH"]?.contains("/usr/bin") == true)
    let extra = Set(env.keys).subtracting(allowed).filter { !$0.hasPrefix("ACTIOND_") }
    #expect(extra.isEmpty, "leaked into the intent: \(extra.sorted())")
    // A parameter stays one argument: no shell, no splitting, no expansion.
    #expect(readFile(out + ".args") == "\(out)\n--mode=x; rm -rf / $HOME\n")

    #expect(try h.request(c, Self.performAction).control?.value == false)
    env = environment()
    #expect(env["ACTIOND_VALUE"] == "0")

    // A button performed by kind: no button, no value.
    #expect(try h.request(c, #""request":"perform","kind":"org.test.env-button""#).failure == nil)
    env = environment()
    #expect(env["ACTIOND_KIND"] == "org.test.env-button")
    #expect(env["ACTIOND_BUTTON"] == nil)
    #expect(env["ACTIOND_VALUE"] == nil)
    #expect(Set(env.keys).subtracting(allowed).allSatisfy { $0.hasPrefix("ACTIOND_") })
  }

  /// `workingDirectory`, `user` (by name and by uid), `environment`, and a program that
  /// cannot be run.
  @Test func execOptions() throws {
    let h = try DaemonHarness()
    // Other users must reach the scripts and write their reports.
    chmod(h.directory.path, 0o777)
    let report = try h.script(
      "report", "echo \"$(id -u):$(id -g):$(pwd):${GREETING:-none}\" > \"$1\"")
    try h.writeConfiguration(
      controls: """
        [
          { kind: "org.test.where", type: "button", displayName: "Where",
            intent: { type: "exec", argv: ["\(report)", "\(h.directory.file("where"))"], workingDirectory: "/tmp",
                      environment: { GREETING: "hello ${who}" } },
            parameters: [{ name: "who", type: "string", default: "world" }] },
          { kind: "org.test.nobody", type: "button", displayName: "Nobody",
            intent: { type: "exec", argv: ["\(report)", "\(h.directory.file("nobody"))"], user: "nobody" } },
          { kind: "org.test.uid", type: "button", displayName: "Uid",
            intent: { type: "exec", argv: ["\(report)", "\(h.directory.file("uid"))"], user: 65534 } },
          { kind: "org.test.missing", type: "button", displayName: "Missing",
            intent: { type: "exec", argv: ["\(h.directory.file("no-such-program"))"] } },
          { kind: "org.test.stranger", type: "button", displayName: "Stranger",
            intent: { type: "exec", argv: ["\(report)", "\(h.directory.file("stranger"))"],
                      user: "actiond-no-such-user" } },
        ]
        """)
    try h.start()
    let c = try h.connect()
    #expect(try h.request(c, #""request":"perform","kind":"org.test.where""#).failure == nil)
    #expect(readFile(h.directory.file("where")) == "\(getuid()):\(getgid()):/tmp:hello world\n")
    if getuid() == 0 {
      // Only root can switch users; the daemon's user is root here.
      for kind in ["nobody", "uid"] {
        let answer = try h.request(c, #""request":"perform","kind":"org.test.\#(kind)""#)
        #expect(answer.failure == nil, "\(answer)")
        #expect(readFile(h.directory.file(kind))?.hasPrefix("65534:") == true, "\(kind)")
        #expect(readFile(h.directory.file(kind))?.hasSuffix(":/:none\n") == true, "\(kind)")
      }
    }
    let missing = try h.request(c, #""request":"perform","kind":"org.test.missing""#)
    #expect(missing.failure?.code == .failed, "\(missing)")
    #expect(missing.failure?.message.hasPrefix("cannot run the command: ") == true)
    #expect(missing.failure?.message.contains("ENOENT") == true)
    // An unknown user is found out when the configuration is loaded (not on the loop when
    // the command starts): logged then, and its commands fail with the reason.
    #expect(h.log.contains("user actiond-no-such-user: no such user"))
    let stranger = try h.request(c, #""request":"perform","kind":"org.test.stranger""#)
    #expect(stranger.failure?.message == "cannot run the command: user actiond-no-such-user: no such user")
    #expect(readFile(h.directory.file("stranger")) == nil)
  }

  /// 96 MiB of output (lines and one endless line) is drained and dropped: the daemon's
  /// resident size does not follow it, and the log says how much was not logged.
  @Test func hugeOutputDoesNotGrowTheDaemon() throws {
    let h = try DaemonHarness()
    let chatty = try h.script(
      "chatty",
      """
      yes 'a line of output from a chatty intent' | head -c $(($1 * 1048576 * 2 / 3))
      head -c $(($1 * 1048576 / 3)) /dev/zero | tr '\\0' x
      echo
      echo finished
      """)
    try h.writeConfiguration(
      controls: """
        [{ kind: "org.test.chatty", type: "button", displayName: "Chatty",
           intent: { type: "exec", argv: ["\(chatty)", "${megabytes}"], timeoutMs: 600000 },
           parameters: [{ name: "megabytes", type: "integer", default: 1 }] }]
        """)
    try h.start()
    let c = try h.connect()
    // Warm up (first allocations of the output path) before measuring.
    #expect(try h.request(c, #""request":"perform","kind":"org.test.chatty""#).failure == nil)
    let before = try h.residentKiB()
    let id = h.send(c, #""request":"perform","kind":"org.test.chatty","configuration":{"megabytes":96}"#)
    let answer = try h.answer(c, id, timeout: .seconds(600))
    #expect(answer.failure == nil, "\(answer)")
    let after = try h.residentKiB()
    #expect(after - before < 16 * 1024, "VmRSS grew from \(before) KiB to \(after) KiB")
    // Everything was read (the command finished) but only a bounded part logged.
    let notLogged = h.log.split(separator: "\n").last { $0.contains("more output line(s)") }
    // "... N more output line(s) (M bytes) not logged"
    let bytes = notLogged.flatMap { line in
      line.split(separator: " bytes)").first.flatMap { Int(String($0.reversed().prefix { $0.isNumber }.reversed())) }
    }
    // (Counted without the newlines: about 1.8 M of them here.)
    #expect((bytes ?? 0) > 94 * 1_048_576, "\(notLogged ?? "no 'not logged' line")")
    // Forwarded lines are bounded per run (ProcessOutputLimits: 200 lines).
    #expect(occurrences(of: "[org.test.chatty]", in: h.log) < 2 * 210)
  }

  /// A value provider that fails makes the value unavailable; a perform then fails with
  /// the reason and the intent never runs.
  @Test func failingValueProviderFailsThePerform() throws {
    let h = try DaemonHarness()
    let ran = h.directory.file("ran")
    let intent = try h.script("intent", "touch '\(ran)'")
    let broken = try h.script("value-broken", "echo 'no such device' >&2\nexit 7")
    let slow = try h.script("value-slow", "exec sleep 1000")
    try h.writeConfiguration(
      controls: """
        [
          { kind: "org.test.broken-value", type: "toggle", displayName: "Broken Value",
            intent: { type: "exec", argv: ["\(intent)"] }, value: { type: "exec", argv: ["\(broken)"] } },
          { kind: "org.test.slow-value", type: "toggle", displayName: "Slow Value",
            intent: { type: "exec", argv: ["\(intent)"] }, value: { type: "exec", argv: ["\(slow)"], timeoutMs: 200 } },
        ]
        """, assignments: #"{ action: "org.test.broken-value" }"#)
    try h.start()
    let c = try h.connect()
    try h.subscribe(c)

    let answer = try h.request(c, Self.performAction)
    #expect(answer.failure?.code == .unavailable, "\(answer)")
    #expect(answer.failure?.message.hasPrefix("the current value of Broken Value is unavailable: ") == true)
    #expect(answer.failure?.message.contains("7") == true)
    #expect(h.log.contains("[org.test.broken-value] no such device"))
    let status = try h.request(c, #""request":"get","kind":"org.test.broken-value""#)
    #expect(status.controls?.first?.available == false)
    #expect(status.controls?.first?.value == nil)
    #expect(status.controls?.first?.hint == "Broken Value unavailable")

    // Never read before: read first (it times out), then fail with that reason.
    let slowAnswer = try h.request(c, #""request":"perform","kind":"org.test.slow-value""#)
    #expect(slowAnswer.failure?.code == .unavailable, "\(slowAnswer)")
    #expect(slowAnswer.failure?.message.contains("timed out") == true)
    #expect(access(ran, F_OK) != 0, "an intent ran on an unavailable value")
  }

  /// While an intent runs, another perform of the same control is `busy`, not queued; the
  /// daemon keeps serving meanwhile.
  @Test func secondPerformWhileRunningIsBusy() throws {
    let h = try DaemonHarness()
    let gate = try h.gate("gate")
    let count = h.directory.file("count")
    let wait = try h.script("wait-gate", "echo run >> '\(count)'\ncat '\(gate)' > /dev/null")
    try h.writeConfiguration(
      controls: """
        [{ kind: "org.test.slow", type: "toggle", displayName: "Slow",
           intent: { type: "exec", argv: ["\(wait)"] } }]
        """, assignments: #"{ action: "org.test.slow" }"#)
    try h.start()
    let c = try h.connect()
    try h.subscribe(c)
    let first = h.send(c, Self.performAction)
    try h.waitForEvent(c, "performing") { if case .performing = $0 { return true } else { return false } }

    let second = try h.request(c, #""request":"perform","kind":"org.test.slow""#)
    #expect(second.failure?.code == .busy, "\(second)")
    #expect(c.events.contains(.busy(kind: "org.test.slow", button: nil, source: .socket)))
    let status = try h.request(c, #""request":"status""#)
    #expect(status.buttons?.first?.control?.performing == true)
    #expect(c.answer(first) == nil)

    try h.release(gate: gate)
    let done = try h.answer(c, first)
    #expect(done.control?.value == true, "\(done)")
    #expect(readFile(count) == "run\n", "the busy perform must not run")
  }

  /// A `write` intent and a `file` value provider on a temporary file: the round trip,
  /// an outside change seen by `reload`, unreadable content, and a missing file.
  @Test func writeIntentAndFileProviderRoundTrip() throws {
    let h = try DaemonHarness()
    let leds = h.directory.file("leds")
    guard mkdir(leds, 0o755) == 0, mkdir(leds + "/a", 0o755) == 0 else { throw Errno.current }
    let brightness = try h.directory.write("leds/a/brightness", "0\n")
    try h.writeConfiguration(
      controls: """
        [{ kind: "org.test.led", type: "toggle", displayName: "LED",
           intent: { type: "write", path: "\(leds)/${led}/brightness" },
           value: { type: "file", path: "\(leds)/${led}/brightness" },
           parameters: [{ name: "led", type: "string", required: true }], requiresConfiguration: true }]
        """, assignments: #"{ action: { kind: "org.test.led", configuration: { led: "a" } } }"#)
    try h.start()
    let c = try h.connect()
    try h.subscribe(c)

    #expect(try h.request(c, Self.performAction).control?.value == true)
    #expect(readFile(brightness) == "1")

    // Someone else switched it off; reload re-reads and announces the change.
    try h.directory.write("leds/a/brightness", "0\n")
    let reloaded = try h.request(c, #""request":"reload","kind":"org.test.led""#)
    #expect(reloaded.controls?.first?.value == false)
    #expect(
      c.events.contains {
        if case .state(let control, ["action"]) = $0 { return control.value == false } else { return false }
      })
    #expect(try h.request(c, Self.performAction).control?.value == true)
    #expect(readFile(brightness) == "1")
    // The file is the truth, not the store: `set` is refused and nothing is written.
    let set = try h.request(c, #""request":"set","kind":"org.test.led","value":false"#)
    #expect(set.failure?.code == .unsupported, "\(set)")
    #expect(readFile(brightness) == "1")

    // 255 (full brightness) reads as on; garbage as unavailable, and a hold then fails.
    try h.directory.write("leds/a/brightness", "255\n")
    #expect(try h.request(c, #""request":"reload""#).controls?.first?.value == true)
    try h.directory.write("leds/a/brightness", "warm\n")
    #expect(try h.request(c, #""request":"reload""#).controls?.first?.available == false)
    let refused = try h.request(c, Self.performAction)
    #expect(refused.failure?.code == .unavailable, "\(refused)")
    #expect(readFile(brightness) == "warm\n")

    // An LED that does not exist: unavailable, with the reason, and nothing is created.
    let missing = try h.request(c, #""request":"perform","kind":"org.test.led","configuration":{"led":"b"}"#)
    #expect(missing.failure?.code == .unavailable, "\(missing)")
    #expect(missing.failure?.message.contains("ENOENT") == true)
    #expect(access(leds + "/b", F_OK) != 0)
    // A value that would leave the directory is refused before anything is touched.
    let escape = try h.request(c, #""request":"perform","kind":"org.test.led","configuration":{"led":".."}"#)
    #expect(escape.failure?.code == .invalidConfiguration, "\(escape)")
  }
}
