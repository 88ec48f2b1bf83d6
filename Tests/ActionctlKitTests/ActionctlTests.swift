// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActionctlKit
@testable import ActiondLinux

/// `actionctl` run as a real process against a server with a fake handler.
@Suite struct ActionctlTests {
  private func run(_ h: ServerHarness, _ args: [String], socket: Bool = true) throws -> ChildProcess {
    let child = try ChildProcess([try actionctlPath()] + (socket ? ["--socket", h.path] : []) + args)
    try h.pump { child.poll() }
    return child
  }

  @Test func statusAsTextAndAsJSON() throws {
    let h = try ServerHarness()
    let text = try run(h, ["status"])
    #expect(text.exitStatus == 0, "\(text.errorOutput)")
    let lines = text.output.split(separator: "\n").map(String.init)
    #expect(lines.count == 2)
    #expect(lines.first?.hasPrefix("BUTTON  KEY        DEVICE             GESTURE  CONTROL     KIND") == true)
    #expect(
      lines.last
        == "action  KEY_PROG1  /dev/input/event3  hold     Work Timer  org.example.timer  Stopped  Hold to Start")

    let json = try run(h, ["--json", "status", "action"])
    #expect(json.exitStatus == 0)
    #expect(
      try ServerMessage.decode(line: String(json.output.dropLast()))
        == .reply(Reply(id: .integer(1), request: .status, result: .buttons([FakeHandler.button]))))
    #expect(h.handler.requests.last?.0.body == .status(button: "action"))
  }

  @Test func requestsCarryTheirArguments() throws {
    let h = try ServerHarness()
    h.handler.performResult = FakeHandler.timer
    #expect(
      try run(h, ["assign", "action", "org.example.led", "led=user1", "level=5", "on=true", "text=\"5\""]).exitStatus
        == 0)
    #expect(
      h.handler.requests.last?.0.body
        == .assign(
          button: "action", kind: "org.example.led",
          configuration: ["led": "user1", "level": 5, "on": true, "text": "5"]))
    #expect(try run(h, ["assign", "action", "org.example.led", #"{"led":"user2"}"#]).exitStatus == 0)
    #expect(
      h.handler.requests.last?.0.body
        == .assign(button: "action", kind: "org.example.led", configuration: ["led": "user2"]))
    #expect(
      try run(h, ["assign", "action", "org.example.led", "--gesture", "doublePress", "led=user3"]).exitStatus == 0)
    #expect(
      h.handler.requests.last?.0.body
        == .assign(button: "action", kind: "org.example.led", configuration: ["led": "user3"], gesture: .doublePress))
    let set = try run(h, ["set", "org.example.timer", "on"])
    #expect(set.output == "Work Timer: Running\n")
    #expect(h.handler.requests.last?.0.body == .set(kind: "org.example.timer", value: true, configuration: nil))
    // A name that is a button performs its assigned control; anything else is a kind.
    #expect(try run(h, ["perform", "action"]).output == "Work Timer: Stopped\n")
    #expect(h.handler.requests.last?.0.body == .perform(.button("action")))
    #expect(try run(h, ["perform", "org.example.timer"]).exitStatus == 0)
    #expect(h.handler.requests.last?.0.body == .perform(.control(kind: "org.example.timer", configuration: nil)))
    #expect(try run(h, ["perform", "--kind", "org.example.led", "led=user1"]).exitStatus == 0)
    #expect(
      h.handler.requests.last?.0.body == .perform(.control(kind: "org.example.led", configuration: ["led": "user1"])))
    // Without a button, press uses the only one there is.
    #expect(try run(h, ["press"]).output == "action: Hold to Start\n")
    #expect(h.handler.requests.last?.0.body == .press(button: "action"))
    #expect(try run(h, ["reload", "org.example.timer"]).exitStatus == 0)
    #expect(h.handler.requests.last?.0.body == .reload(kind: "org.example.timer"))
    let devices = try run(h, ["devices"])
    #expect(devices.output.contains("/dev/input/event3  gpio-keys"))
    let version = try run(h, ["version"])
    #expect(version.output == "actiond \(ActiondVersion.string) (protocol 1), actionctl \(ActiondVersion.string)\n")
  }

  @Test func performWaitsForTheIntent() throws {
    let h = try ServerHarness()
    let child = try ChildProcess([try actionctlPath(), "--socket", h.path, "perform"])
    try h.pump { h.handler.heldPerforms.count == 1 }
    #expect(!child.poll())  // still waiting for the result
    var running = FakeHandler.timer
    running.value = true
    running.valueText = "Running"
    h.handler.heldPerforms[0].succeed(.control(running))
    try h.pump { child.poll() }
    #expect(child.exitStatus == 0)
    #expect(child.output == "Work Timer: Running\n")
  }

  @Test func exitStatuses() throws {
    let h = try ServerHarness()
    let failed = try run(h, ["get", "org.example.nope"])
    #expect(failed.exitStatus == 1)
    #expect(failed.errorOutput == "actionctl: no control of kind \"org.example.nope\" (unknown-kind)\n")
    let failedJSON = try run(h, ["--json", "get", "org.example.nope"])
    #expect(failedJSON.exitStatus == 1)
    #expect(failedJSON.output.hasPrefix(#"{"type":"error","id":1,"code":"unknown-kind""#))
    for usage in [
      ["frobnicate"], ["set", "k", "maybe"], ["get"], ["assign", "a", "k", "novalue"], ["--timeout", "soon", "list"],
      [],
    ] {
      let child = try run(h, usage)
      #expect(child.exitStatus == 2, "\(usage)")
      #expect(child.errorOutput.contains("usage: actionctl"), "\(usage)")
    }
    let help = try run(h, ["--help"])
    #expect(help.exitStatus == 0 && help.output.hasPrefix("usage: actionctl"))
    let noDaemon = try run(h, ["--socket", h.directory.file("missing.sock"), "status"], socket: false)
    #expect(noDaemon.exitStatus == 3)
    #expect(noDaemon.errorOutput.contains("ENOENT"))
  }

  /// `press --hold MS` and `--double` become the request's `holdMs` and `double`; bad
  /// values are usage errors (exit 2) that say what is wrong, before anything is sent.
  @Test func pressHoldAndDouble() throws {
    let h = try ServerHarness()
    let hold = try run(h, ["press", "--hold", "700"])
    #expect(hold.exitStatus == 0, "\(hold.errorOutput)")
    #expect(h.handler.requests.last?.0.body == .press(button: "action", .hold(.milliseconds(700))))
    let double = try run(h, ["press", "action", "--double"])
    #expect(double.exitStatus == 0, "\(double.errorOutput)")
    #expect(h.handler.requests.last?.0.body == .press(button: "action", .double))
    let zero = try run(h, ["press", "--hold=0", "action"])
    #expect(zero.exitStatus == 0, "\(zero.errorOutput)")
    #expect(h.handler.requests.last?.0.body == .press(button: "action", .hold(.zero)))
    let sent = h.handler.requests.count
    for (args, message) in [
      (["press", "--hold", "-5"], "--hold takes whole milliseconds from 0 to 120000, got \"-5\""),
      (["press", "--hold", "120001"], "--hold takes whole milliseconds from 0 to 120000, got \"120001\""),
      (["press", "--hold", "1.5"], "--hold takes whole milliseconds from 0 to 120000, got \"1.5\""),
      (["press", "--hold"], "--hold needs a number of milliseconds"),
      (["press", "--hold", "700", "--double"], "press takes --hold MS or --double, not both"),
      (["press", "--long"], "press has no option \"--long\" (its options: --hold MS, --double)"),
      (["press", "a", "b"], "press takes at most one BUTTON, got 2"),
    ] {
      let child = try run(h, args)
      #expect(child.exitStatus == 2, "\(args)")
      #expect(child.errorOutput.hasPrefix("actionctl: \(message)\n"), "\(args): \(child.errorOutput)")
    }
    #expect(h.handler.requests.count == sent)
  }

  @Test func socketFromTheEnvironment() throws {
    let h = try ServerHarness()
    let child = try ChildProcess([try actionctlPath(), "list"], environment: ["ACTIOND_SOCKET": h.path])
    try h.pump { child.poll() }
    #expect(child.exitStatus == 0)
    #expect(child.output.contains("org.example.timer  Work Timer  toggle  Stopped  Hold to Start"))
  }

  @Test func watchPrintsEventsUntilTheDaemonStops() throws {
    let h = try ServerHarness()
    let plain = try ChildProcess([try actionctlPath(), "--socket", h.path, "watch", "--button", "action"])
    let json = try ChildProcess([try actionctlPath(), "--socket", h.path, "--json", "watch", "--events", "performed"])
    try h.pump { h.server.subscriberCount == 2 }
    var running = FakeHandler.timer
    running.value = true
    running.valueText = "Running"
    let events: [Event] = [
      .pressed(
        button: "action", kind: "org.example.timer", hint: "Hold to Start", time: .zero, threshold: .milliseconds(600)),
      .held(button: "action", kind: "org.example.timer", time: MonotonicInstant(nanoseconds: 600_000_000)),
      .performed(button: "action", source: .button, control: running),
      .pressed(button: "other", kind: nil, hint: nil, time: .zero, threshold: .milliseconds(600)),
    ]
    for e in events { h.server.broadcast(e) }
    try h.pump {
      _ = plain.poll(); _ = json.poll()
      return plain.output.split(separator: "\n").count == 3 && json.output.split(separator: "\n").count == 2
    }
    h.server.stop()
    try h.pump { plain.poll() && json.poll() }
    #expect(
      plain.output
        == """
        pressed action org.example.timer: Hold to Start (hold 600 ms)
        held action org.example.timer
        performed org.example.timer action: Work Timer Running

        """)
    #expect(plain.exitStatus == 4)
    #expect(plain.errorOutput == "actionctl: actiond is stopping (shutting-down)\n")
    // --json: the subscribe reply first (the subscription is live), then the raw events.
    let jsonLines = json.output.split(separator: "\n").map(String.init)
    #expect(jsonLines.count == 2)
    #expect(jsonLines.first?.contains(#""request":"subscribe""#) == true)
    #expect(try ServerMessage.decode(line: jsonLines.last ?? "") == .event(events[2]))
    #expect(json.exitStatus == 4)
  }

  @Test func checkConfigUsesTheDaemonsLoader() throws {
    let h = try ServerHarness()
    let good = try h.directory.write("good.json", "{ buttons: [ { name: 'action', key: 'KEY_PROG1' } ] }")
    let ok = try run(h, ["check-config", good], socket: false)
    #expect(ok.exitStatus == 0, "\(ok.errorOutput)")
    #expect(ok.output == "\(good) is valid: 1 button(s), 0 control(s), 0 assignment(s)\n")
    let okJSON = try run(h, ["--json", "check-config", good], socket: false)
    #expect(okJSON.exitStatus == 0, "\(okJSON.errorOutput)")
    #expect(okJSON.output == #"{"valid":true,"problems":[],"buttons":1,"controls":0,"assignments":0}"# + "\n")

    let bad = try h.directory.write(
      "bad.json", "{\n  buttons: [ { name: 'action', key: 'KEY_NOPE' } ],\n  bogus: 1,\n}")
    let problems = try run(h, ["check-config", bad], socket: false)
    #expect(problems.exitStatus == 1)
    #expect(problems.output.split(separator: "\n").count == 2)
    #expect(problems.output.contains("\(bad):3: bogus: unknown key"))
    #expect(problems.errorOutput == "actionctl: 2 problem(s) found\n")
    let json = try run(h, ["--json", "check-config", bad], socket: false)
    #expect(json.exitStatus == 1)
    let parsed = try JSONParser.parse(String(json.output.dropLast())).root
    #expect(parsed["valid"] == false)
    #expect(parsed["problems"]?.arrayValue?.count == 2)
    #expect(parsed["problems"]?.arrayValue?.last?["path"] == "bogus")

    let missing = try run(h, ["check-config", h.directory.file("nope.json")], socket: false)
    #expect(missing.exitStatus == 1)
    #expect(missing.errorOutput.contains("ENOENT"))
  }

  @Test func holdBarFillsTowardTheDeadline() {
    #expect(
      Watch.holdLine(button: "action", hint: "Hold to Start", start: 1000, deadline: 1600, now: 1000).0
        == "action: Hold to Start  " + String(repeating: "░", count: 24))
    let half = Watch.holdLine(button: "action", hint: "Hold to Start", start: 1000, deadline: 1600, now: 1300)
    #expect(half.1 == 0.5)
    #expect(half.0.hasSuffix(String(repeating: "█", count: 12) + String(repeating: "░", count: 12)))
    #expect(Watch.holdLine(button: "a", hint: "h", start: 1000, deadline: 1600, now: 9999).1 == 1)
    #expect(Watch.holdLine(button: "a", hint: "h", start: 1000, deadline: 1000, now: 0).1 == 1)
  }
}

/// `actionctl assign`'s arguments, without a daemon.
@Suite struct ActionctlAssignArgumentTests {
  @Test func gestureAndMomentaryMayStandAnywhere() throws {
    #expect(
      try Actionctl.assignBody(["action", "k"])
        == .assign(button: "action", kind: "k", configuration: [:], gesture: .hold, momentary: false))
    #expect(
      try Actionctl.assignBody(["--momentary", "action", "k", "led=x"])
        == .assign(button: "action", kind: "k", configuration: ["led": "x"], gesture: .hold, momentary: true))
    #expect(
      try Actionctl.assignBody(["action", "k", "--gesture=longHold"])
        == .assign(button: "action", kind: "k", configuration: [:], gesture: .longHold))
    #expect(
      try Actionctl.assignBody(["action", "--gesture", "hold", "k", "--momentary"])
        == .assign(button: "action", kind: "k", configuration: [:], gesture: .hold, momentary: true))
  }

  @Test(arguments: [
    (["action"], "assign needs BUTTON and KIND"),
    (["action", "k", "--gesture"], "--gesture needs one of hold, doublePress, longHold"),
    (
      ["action", "k", "--gesture", "doublepress"],
      #"--gesture takes one of hold, doublePress, longHold, got "doublepress" (did you mean doublePress?)"#
    ),
    (["action", "k", "--gesture", "tap"], #"--gesture takes one of hold, doublePress, longHold, got "tap""#),
    (["action", "k", "--gesture", "hold", "--gesture=longHold"], "--gesture is given twice"),
    (
      ["action", "k", "--gestur", "longHold"],
      #"assign has no option "--gestur" (its options: --gesture G, --momentary)"#
    ),
    (
      ["action", "k", "--gesture", "doublePress", "--momentary"],
      "--momentary is only for the hold, not --gesture doublePress"
    ),
  ])
  func mistakesAreUsageErrors(arguments: [String], message: String) {
    #expect(throws: Actionctl.UsageError.self) { try Actionctl.assignBody(arguments) }
    do {
      _ = try Actionctl.assignBody(arguments)
    } catch {
      #expect(error.message == message)
    }
  }

  @Test func usageNamesTheOptions() {
    #expect(
      Actionctl.usage.contains("assign BUTTON KIND [NAME=VALUE...] [--gesture hold|doublePress|longHold] [--momentary]")
    )
  }
}

/// How `actionctl` prints a button's gestures.
@Suite struct ActionctlGestureRenderTests {
  static let timer = ControlSnapshot(
    kind: "t.timer", displayName: "Timer", type: .toggle, value: false, valueText: "Stopped", hint: "Hold to Start")
  static let mute = ControlSnapshot(
    kind: "t.mute", displayName: "Mute", type: .toggle, value: false, valueText: "Sound On", hint: "Hold to Mute")
  static let panel = ButtonStatus(
    name: "panel", key: "KEY_PROG2", devices: [], holdThreshold: .milliseconds(600), control: timer, momentary: true,
    doublePress: mute)

  @Test func statusHasARowPerAssignedGesture() {
    let unassigned = ButtonStatus(
      name: "foot", key: "KEY_B", devices: [], holdThreshold: .milliseconds(600), control: nil)
    #expect(
      Render.buttons([Self.panel, unassigned]).split(separator: "\n") == [
        "BUTTON  KEY        DEVICE  GESTURE           CONTROL       KIND     STATE     HINT",
        "panel   KEY_PROG2  (none)  hold (momentary)  Timer         t.timer  Stopped   Hold to Start",
        "                           doublePress       Mute          t.mute   Sound On  Hold to Mute",
        "foot    KEY_B      (none)                    (unassigned)",
      ])
  }

  /// Each button's feedback outputs, under the table; the JSON carries them (and leaves
  /// the member out for a button without any) and reads back.
  @Test func statusShowsEachButtonsFeedbackOutputs() throws {
    var lit = Self.panel
    lit.feedback = [
      FeedbackOutput(light: .inputLED(code: 1), moments: [.held]),
      FeedbackOutput(light: .sysfs(name: "ACT"), moments: [.failed], indicator: true),
    ]
    let plain = ButtonStatus(name: "foot", key: "KEY_B", devices: [], holdThreshold: .milliseconds(600), control: nil)
    let lines = Render.buttons([lit, plain]).split(separator: "\n")
    #expect(lines.last == "feedback of panel: led LED_CAPSL (held); sysfs ACT (failed, indicator)")
    #expect(lines.count == 5, "the table, then one line for the one button with feedback")
    let json = JSONEncoding.compact(lit.json)
    #expect(
      json.hasSuffix(
        #""feedback":[{"led":"LED_CAPSL","on":["held"],"indicator":false},{"sysfs":"ACT","on":["failed"],"indicator":true}]}"#
      ), "\(json)")
    #expect(try ButtonStatus(json: lit.json) == lit)
    #expect(!JSONEncoding.compact(plain.json).contains("feedback"))
    var bad = lit.json
    if case .object(var o) = bad {
      o["feedback"] = .array([.object(["led": .string("LED_NOPE")])])
      bad = .object(o)
    }
    #expect(throws: ProtocolError.self) { try ButtonStatus(json: bad) }
  }

  /// A beeper and a rumble in status: the sound with its frequency and device, the rumble
  /// with its strength; both read back.
  @Test func statusShowsSoundAndRumbleOutputs() throws {
    var lit = Self.panel
    lit.feedback = [
      FeedbackOutput(light: .sound(code: SoundCodes.tone, hertz: 880, device: .named("PC Speaker")), moments: [.held]),
      FeedbackOutput(light: .rumble(strength: 60, device: .button), moments: [.held, .failed]),
    ]
    #expect(
      Render.buttons([lit]).split(separator: "\n").last
        == #"feedback of panel: sound SND_TONE 880 Hz on device "PC Speaker" (held); rumble 60% (held, failed)"#)
    #expect(
      JSONEncoding.compact(lit.json).hasSuffix(
        #""feedback":[{"sound":"SND_TONE","hz":880,"device":"PC Speaker","on":["held"],"indicator":false},"#
          + #"{"rumble":"FF_RUMBLE","strength":60,"on":["held","failed"],"indicator":false}]}"#))
    #expect(try ButtonStatus(json: lit.json) == lit)
  }

  @Test func assignAndPressRepliesNameTheGestures() {
    let hello = Hello(client: ClientAccess(uid: 0, gid: 0, pid: 1, control: true), buttons: [])
    #expect(
      Render.reply(Reply(id: nil, request: .assign, result: .button(Self.panel)), hello: hello)
        == """
        panel (hold, momentary) → Timer (t.timer): Stopped, Hold to Start
        panel (doublePress) → Mute (t.mute): Sound On, Hold to Mute
        """)
    var noHold = Self.panel
    noHold.control = nil
    #expect(
      Render.reply(Reply(id: nil, request: .press, result: .button(noHold)), hello: hello) == "panel: doublePress Mute")
    #expect(
      Render.event(.assigned(button: "panel", gesture: .longHold, control: Self.mute))
        == "assigned panel (longHold): Mute (t.mute)")
    #expect(Render.event(.assigned(button: "panel", control: nil)) == "assigned panel: (unassigned)")
  }
}
