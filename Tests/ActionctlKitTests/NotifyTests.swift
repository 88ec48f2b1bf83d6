// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActionctlKit
@testable import ActiondLinux

/// `actionctl watch --notify`: announcements (protocol lines, as the daemon sends them)
/// in, `notify-send` arguments out; then the real actionctl against a fake
/// `notify-send` that logs its arguments.
@Suite struct NotifyTests {
  static let running = ControlSnapshot(
    kind: "org.example.timer", displayName: "Work Timer", type: .toggle, value: true, valueText: "Running",
    symbol: "timer", tint: "orange", hint: "Hold to Stop")
  static let button = ButtonStatus(
    name: "action", key: "KEY_PROG1", devices: [], holdThreshold: .milliseconds(600), control: FakeHandler.timer)

  private func event(_ line: String) throws -> Event {
    guard case .event(let e) = try ServerMessage.decode(line: line) else {
      throw DaemonHarnessError(description: "not an event: \(line)")
    }
    return e
  }

  private func at(_ microseconds: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: microseconds * 1_000) }

  /// The planner's update for one event line, as `notify-send` arguments replacing `id`.
  private func argv(
    _ planner: inout NotificationPlanner, _ line: String, now: Int64, replacing id: UInt32? = 7
  ) throws -> (slot: String, argv: [String])? {
    guard let update = planner.handle(try event(line), now: at(now)) else { return nil }
    return (update.slot, update.notification.arguments(replacing: id))
  }

  @Test func aHoldIsOneNotificationFromHintToResult() throws {
    var planner = NotificationPlanner(buttons: [Self.button])
    let pressed = try argv(
      &planner,
      #"{"type":"event","event":"pressed","button":"action","kind":"org.example.timer","hint":"Hold to Start","hints":[{"gesture":"hold","kind":"org.example.timer","hint":"Hold to Start"}],"time":5000000,"thresholdMs":600,"deadline":5600000}"#,
      now: 5_000_000, replacing: nil)
    #expect(pressed?.slot == "action")
    #expect(
      pressed?.argv == [
        "--app-name=actiond", "--print-id", "--urgency=normal", "--expire-time=10000", "--category=device",
        "--hint=int:value:0", "--transient", "--", "Work Timer", "Hold to Start",
      ])
    // The bar fills by timer in quarters of the threshold, then `held` fills it.
    #expect(planner.nextStep == at(5_150_000))
    #expect(planner.step(now: at(5_100_000)).isEmpty)
    let quarter = planner.step(now: at(5_150_000))
    #expect(quarter.map(\.notification.progress) == [25])
    #expect(quarter.first?.notification.arguments(replacing: 7).contains("--replace-id=7") == true)
    #expect(planner.nextStep == at(5_300_000))
    // A late wakeup shows where the bar is then, and the next step after it.
    #expect(planner.step(now: at(5_460_000)).map(\.notification.progress) == [76])
    #expect(planner.nextStep == nil)
    let held = try argv(
      &planner, #"{"type":"event","event":"held","button":"action","kind":"org.example.timer","time":5600000}"#,
      now: 5_600_000)
    #expect(held?.argv.contains("--hint=int:value:100") == true)
    #expect(held?.argv.suffix(2) == ["Work Timer", "Hold to Start"])
    let performing = try argv(
      &planner,
      #"{"type":"event","event":"performing","kind":"org.example.timer","button":"action","source":"button","gesture":"hold","value":true}"#,
      now: 5_601_000)
    #expect(performing?.slot == "action")
    #expect(performing?.argv.suffix(2) == ["Work Timer", "Performing…"])
    #expect(performing?.argv.contains { $0.hasPrefix("--hint=int:value") } == false)
    let performed = try argv(
      &planner,
      #"{"type":"event","event":"performed","kind":"org.example.timer","button":"action","source":"button","gesture":"hold","value":true,"valueText":"Running","control":{"kind":"org.example.timer","displayName":"Work Timer","type":"toggle","configuration":{},"value":true,"valueText":"Running","symbol":"speaker.wave.2.fill","hint":"Hold to Stop","configured":true,"available":true,"performing":false}}"#,
      now: 5_700_000)
    // The result: kept in the history (not transient), its symbol as a freedesktop icon.
    #expect(
      performed?.argv == [
        "--app-name=actiond", "--print-id", "--replace-id=7", "--urgency=normal", "--expire-time=5000",
        "--category=device", "--icon=audio-volume-medium", "--", "Work Timer", "Running",
      ])
    #expect(planner.nextStep == nil)
    // The end of the hold changes nothing.
    #expect(
      try argv(
        &planner,
        #"{"type":"event","event":"released-after-hold","button":"action","kind":"org.example.timer","time":5900000,"durationMs":900,"longHeld":false}"#,
        now: 5_900_000) == nil)
  }

  @Test func aShortPressShowsItsHintsAndStopsTheBar() throws {
    var planner = NotificationPlanner(buttons: [Self.button])
    let hints =
      #""hint":"Hold to Start · Press twice to Mute","hints":[{"gesture":"hold","kind":"org.example.timer","hint":"Hold to Start"},{"gesture":"doublePress","kind":"org.example.mute","hint":"Press twice to Mute"}]"#
    let pressed = try argv(
      &planner,
      #"{"type":"event","event":"pressed","button":"action","kind":"org.example.timer",\#(hints),"time":1000000,"thresholdMs":600,"deadline":1600000}"#,
      now: 1_010_000)
    #expect(pressed?.argv.suffix(2) == ["Work Timer", "Hold to Start\nPress twice to Mute"])
    #expect(pressed?.argv.contains("--hint=int:value:1") == true)
    let released = try argv(
      &planner,
      #"{"type":"event","event":"released","button":"action","kind":"org.example.timer",\#(hints),"time":1180000,"durationMs":180}"#,
      now: 1_180_000)
    #expect(
      released?.argv == [
        "--app-name=actiond", "--print-id", "--replace-id=7", "--urgency=normal", "--expire-time=5000",
        "--category=device", "--transient", "--", "Work Timer", "Hold to Start\nPress twice to Mute",
      ])
    // No press in progress: no timer, no wakeup.
    #expect(planner.nextStep == nil)
    #expect(planner.step(now: at(1_300_000)).isEmpty)
  }

  @Test func aLongHoldRestartsTheBar() throws {
    var planner = NotificationPlanner(buttons: [Self.button])
    _ = try argv(
      &planner,
      #"{"type":"event","event":"pressed","button":"action","kind":"org.example.timer","hint":"Hold to Start","hints":[],"time":0,"thresholdMs":600,"deadline":600000}"#,
      now: 0)
    let held = try argv(
      &planner,
      #"{"type":"event","event":"held","button":"action","kind":"org.example.timer","time":600000,"longHold":{"kind":"org.example.reboot","hint":"Keep holding to Reboot","deadline":3000000}}"#,
      now: 600_000)
    #expect(held?.argv.contains("--hint=int:value:0") == true)
    #expect(held?.argv.last == "Keep holding to Reboot")
    #expect(planner.nextStep == at(1_200_000))
    let longHeld = try argv(
      &planner,
      #"{"type":"event","event":"long-held","button":"action","kind":"org.example.reboot","time":3000000}"#,
      now: 3_000_000)
    #expect(longHeld?.argv.contains("--hint=int:value:100") == true)
    #expect(planner.nextStep == nil)
  }

  @Test func failuresAndPerformsWithoutAButton() throws {
    var planner = NotificationPlanner(buttons: [Self.button])
    let failed = try argv(
      &planner,
      #"{"type":"event","event":"failed","kind":"org.example.timer","button":"action","source":"button","gesture":"hold","code":"timeout","reason":"intent did not finish within 5 s"}"#,
      now: 0)
    #expect(
      failed?.argv == [
        "--app-name=actiond", "--print-id", "--replace-id=7", "--urgency=critical", "--expire-time=10000",
        "--category=device", "--icon=dialog-error", "--", "Work Timer", "Failed: intent did not finish within 5 s",
      ])
    let busy = try argv(
      &planner,
      #"{"type":"event","event":"busy","kind":"org.example.timer","button":"action","source":"button","gesture":"hold"}"#,
      now: 0)
    #expect(busy?.argv.suffix(2) == ["Work Timer", "Still performing: not started again"])
    let cancelled = try argv(
      &planner,
      #"{"type":"event","event":"cancelled","button":"action","kind":"org.example.timer","reason":"device-lost"}"#,
      now: 0)
    #expect(cancelled?.argv.contains("--urgency=low") == true)
    #expect(cancelled?.argv.last == "Cancelled (device-lost)")
    // `perform --kind`: no button, a notification of its own per kind.
    let bySocket = try argv(
      &planner,
      #"{"type":"event","event":"performed","kind":"org.example.photo","source":"socket","value":null,"control":{"kind":"org.example.photo","displayName":"Take Photo","type":"button","configuration":{},"value":null,"symbol":"camera.fill","hint":"Hold to Take Photo","configured":true,"available":true,"performing":false}}"#,
      now: 0, replacing: nil)
    #expect(bySocket?.slot == "kind:org.example.photo")
    #expect(bySocket?.argv.suffix(3) == ["--", "Take Photo", "Done"])
    #expect(bySocket?.argv.contains("--icon=camera-photo") == true)
    // Neither state changes nor devices notify.
    #expect(
      try argv(
        &planner,
        #"{"type":"event","event":"device-added","device":{"devnode":"/dev/input/event3","name":"gpio-keys","id":"0001:0001","buttons":["action"],"grabbed":false}}"#,
        now: 0) == nil)
  }

  @Test func anAssignmentRenamesTheNextPress() throws {
    var planner = NotificationPlanner(buttons: [Self.button])
    #expect(
      planner.handle(
        .assigned(
          button: "action",
          control: ControlSnapshot(kind: "x.mute", displayName: "Mute", type: .toggle, hint: "Hold to Mute")
        ), now: .zero) == nil)
    let pressed = planner.handle(
      .pressed(button: "action", kind: "x.mute", hint: "Hold to Mute", time: .zero, threshold: .milliseconds(600)),
      now: .zero)
    #expect(pressed?.notification.summary == "Mute")
    // A button with nothing on its hold fills no bar.
    let bare = planner.handle(
      .pressed(button: "other", kind: nil, hint: nil, time: .zero, threshold: .milliseconds(600)), now: .zero)
    #expect(bare?.notification.summary == "other")
    #expect(bare?.notification.body == "No control assigned")
    #expect(bare?.notification.progress == nil)
  }

  @Test func symbolsMapToFreedesktopIconsWhereOneFits() {
    let cases: [(String?, String?)] = [
      ("speaker.wave.2.fill", "audio-volume-medium"), ("speaker.slash.fill", "audio-volume-muted"),
      ("speaker.slash", "audio-volume-muted"), ("mic.fill", "audio-input-microphone"),
      ("mic.slash", "microphone-sensitivity-muted"), ("camera.fill", "camera-photo"), ("camera", "camera-photo"),
      ("play.circle.fill", "media-playback-start"), ("stop.circle", "media-playback-stop"),
      ("terminal", "utilities-terminal"), ("gear", "preferences-system"),
      // More detail than the table: its stem.
      ("speaker.wave.2.circle", "audio-volume-medium"),
      // No good standard icon: none rather than a wrong one.
      ("timer", nil), ("flashlight.on.fill", nil), ("lightbulb", nil), (nil, nil), ("", nil),
      // Already a freedesktop name or a file: as is.
      ("media-playback-start", "media-playback-start"), ("/usr/share/pixmaps/x.png", "/usr/share/pixmaps/x.png"),
    ]
    for (symbol, icon) in cases {
      #expect(FreedesktopIcon.name(forSymbol: symbol) == icon, "\(symbol ?? "nil")")
    }
  }

  @Test func aSummaryStartingWithADashStaysText() {
    let n = DesktopNotification(summary: "-x", body: "--y", expireMilliseconds: 1, transient: false)
    #expect(n.arguments(replacing: nil).suffix(3) == ["--", "-x", "--y"])
  }

  @Test func watchArguments() throws {
    let parsed = try Watch.parse(["--notify", "--button", "action", "--events", "pressed,performed"])
    #expect(parsed.notify)
    #expect(parsed.filter.buttons == ["action"])
    #expect(parsed.filter.events == [.pressed, .performed])
    #expect(try Watch.parse(["--kind", "k"]).notify == false)
    #expect(try Watch.parse([]).filter == SubscriptionFilter())
    #expect(throws: Actionctl.UsageError.self) { try Watch.parse(["--button"]) }
    #expect(throws: Actionctl.UsageError.self) { try Watch.parse(["--notify=yes"]) }
    #expect(throws: Actionctl.UsageError.self) { try Watch.parse(["--events", "nope"]) }
    do {
      _ = try Watch.parse(["--bogus"])
    } catch {
      #expect(error.message == #"watch takes --button, --kind, --events and --notify, got "--bogus""#)
    }
  }

  @Test func missingNotifySendNamesTheDebianPackage() throws {
    let h = try ServerHarness()
    let child = try ChildProcess(
      [try actionctlPath(), "--socket", h.path, "watch", "--notify"], environment: ["PATH": h.directory.path])
    try h.pump { child.poll() }
    #expect(child.exitStatus == 1)
    #expect(
      child.errorOutput
        == "actionctl: --notify needs notify-send, which is not installed (not found in PATH): install the Debian package libnotify-bin\n"
    )
    #expect(h.server.subscriberCount == 0)
  }

  /// The real actionctl, a fake `notify-send` that logs its arguments and prints id 7
  /// after a while: the first step creates the notification, every later one replaces
  /// it, events go on being read meanwhile, and steps that came while one was being
  /// sent collapse into the newest.
  @Test func watchNotifyReplacesOneNotificationPerButton() throws {
    let h = try ServerHarness()
    let log = h.directory.file("notify-send.log")
    let gate = h.directory.file("gate")
    // Blocks until the test creates `gate`: the first notification is "slow".
    try h.directory.write(
      "notify-send",
      """
      #!/bin/sh
      printf '%s\\n' "$*" >> "\(log)"
      while [ ! -e "\(gate)" ]; do sleep 0.01; done
      echo 7
      """, mode: 0o755)
    let watch = try ChildProcess(
      [try actionctlPath(), "--socket", h.path, "--json", "watch", "--notify"],
      environment: ["PATH": h.directory.path + ":/usr/bin:/bin"])
    try h.pump { h.server.subscriberCount == 1 }
    h.server.broadcast(
      .pressed(
        button: "action", kind: "org.example.timer", hint: "Hold to Start", time: .zero,
        threshold: .milliseconds(600)))
    try h.pump { readFile(log)?.isEmpty == false }
    // While the first notify-send runs, events are still read (--json prints them)...
    h.server.broadcast(.held(button: "action", kind: "org.example.timer", time: MonotonicInstant(nanoseconds: 1)))
    h.server.broadcast(
      .performing(kind: "org.example.timer", button: "action", source: .button, gesture: .hold, value: true))
    h.server.broadcast(.performed(button: "action", source: .button, gesture: .hold, control: Self.running))
    try h.pump {
      _ = watch.poll()
      return watch.output.split(separator: "\n").count == 5
    }
    // ...and nothing more is started until the id is known.
    #expect(readFile(log)?.split(separator: "\n").count == 1)
    try h.directory.write("gate", "")
    try h.pump { readFile(log)?.split(separator: "\n").count == 2 }
    let calls = (readFile(log) ?? "").split(separator: "\n").map(String.init)
    #expect(calls.count == 2)
    #expect(calls.first?.contains("--replace-id") == false)
    #expect(calls.first?.hasSuffix("-- Work Timer Hold to Start") == true)
    // The steps in between were superseded by the result, which replaces notification 7.
    #expect(calls.last?.contains("--replace-id=7") == true)
    #expect(calls.last?.hasSuffix("-- Work Timer Running") == true)
    h.server.stop()
    try h.pump { watch.poll() }
    #expect(watch.exitStatus == 4)
  }

  /// The repository's file at `path` (docs, units, completion), or "" when missing.
  private static func repositoryFile(_ path: String) -> String { readFile(repositoryPath(path)) ?? "" }

  /// What the option promises is where users look: usage, man page, protocol.md,
  /// completion, the user unit, and keyboard-key.md's picture of it.
  @Test func theDocumentationAndTheUnitNameNotify() {
    #expect(Actionctl.usage.contains("watch [--button B]... [--kind K]... [--events E,E...] [--notify]"))
    #expect(
      Self.repositoryFile("docs/man/actionctl.1.md").contains(
        "**watch** [**--button** *B*]... [**--kind** *K*]... [**--events** *E*,*E*...] [**--notify**]"))
    #expect(
      Self.repositoryFile("docs/protocol.md").contains(
        "| `watch [--button B]... [--kind K]... [--events E,E...] [--notify]` |"))
    #expect(Self.repositoryFile("completion/actionctl.bash").contains("--events --notify"))
    let unit = Self.repositoryFile("systemd/user/actiond-notify.service")
    for line in [
      "ExecStart=/usr/local/bin/actionctl watch --notify", "Restart=on-failure", "After=graphical-session.target",
      "PartOf=graphical-session.target", "WantedBy=graphical-session.target",
    ] {
      #expect(unit.split(separator: "\n").contains(Substring(line)), "\(line)")
    }
    let guide = Self.repositoryFile("docs/keyboard-key.md")
    #expect(guide.contains("](desktop-notification.png)"))
    #expect(guide.contains("systemctl --user enable --now actiond-notify.service"))
    // The picture is there, and small.
    var info = stat()
    #expect(stat(repositoryPath("docs/desktop-notification.png"), &info) == 0)
    #expect(info.st_size > 1000 && info.st_size < 20_000)
  }
}
