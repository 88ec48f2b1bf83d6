// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// `actionctl press [--hold MS | --double]` on the real daemon: the virtual key goes
/// through the button's recognizer, so every gesture acts as with the key, and the daemon
/// releases the key on its own timer after actionctl has already exited (issue 30 item 7).
/// The button has the default timing: hold 600 ms, double-press window 300 ms, long hold 3 s.
@Suite struct DaemonVirtualPressTests {
  private static let controls = """
    [
      { kind: "org.test.timer", type: "toggle", displayName: "Timer", intent: { type: "state" },
        actionHint: { on: "Stop", off: "Start" } },
      { kind: "org.test.mute", type: "toggle", displayName: "Mute", intent: { type: "state" } },
      { kind: "org.test.long", type: "toggle", displayName: "Long", intent: { type: "state" } },
    ]
    """

  /// Runs actionctl against the harness's daemon (optionally as another user) and waits for it.
  private func actionctl(_ h: DaemonHarness, _ args: [String], as prefix: [String] = []) throws -> ChildProcess {
    let child = try ChildProcess(prefix + [try actionctlPath(), "--socket", h.socketPath] + args)
    try h.wait("actionctl \(args.joined(separator: " "))") { child.poll() }
    return child
  }

  /// The names of the events `client` received after the first `skip`.
  private func names(_ c: TestClient, after skip: Int) -> [String] {
    c.events.dropFirst(skip).map(\.name.rawValue)
  }

  @Test func everyGestureCanBeTriedWithoutHardware() throws {
    let h = try DaemonHarness(
      controls: Self.controls,
      assignments: #"{ action: { hold: "org.test.timer", doublePress: "org.test.mute", longHold: "org.test.long" } }"#)
    try h.start()
    let c = try h.connect()
    try h.subscribe(c)

    // A short press announces the hints and performs nothing (on a double-press button
    // the `released` comes once the window passed, as with the key).
    var skip = c.events.count
    let short = try actionctl(h, ["press"])
    #expect(short.exitStatus == 0, "\(short.errorOutput)")
    #expect(short.output == "action: Hold to Start\n")
    try h.waitForEvent(c, "released", after: skip) { $0.name == .released }
    #expect(names(c, after: skip) == ["pressed", "released"])
    guard case .pressed(_, _, let hint?, _, _, _)? = c.events.dropFirst(skip).first else {
      Issue.record("no hint in \(c.events.dropFirst(skip))")
      return
    }
    #expect(hint == "Hold to Start · Press twice to Turn On · Hold 3 s to Turn On")

    // --hold 700 on the 600 ms threshold: held once, performed once, released at 700 ms.
    // actionctl has exited before the virtual key goes up: the daemon releases it.
    skip = c.events.count
    let hold = try actionctl(h, ["press", "--hold", "700"])
    #expect(hold.exitStatus == 0, "\(hold.errorOutput)")
    let released = try h.waitForEvent(c, "released-after-hold", after: skip) { $0.name == .releasedAfterHold }
    #expect(
      names(c, after: skip).filter { $0 != "state" } == [
        "pressed", "held", "performing", "performed", "released-after-hold",
      ])
    let pressedAt = c.events.dropFirst(skip).compactMap { e -> MonotonicInstant? in
      if case .pressed(_, _, _, _, let t, _) = e { return t }
      return nil
    }.first
    if case .releasedAfterHold(_, _, let t, let duration, let longHeld) = released {
      #expect(duration == .milliseconds(700))
      #expect(longHeld == false)
      #expect(pressedAt.map { t - $0 } == .milliseconds(700))
    }
    let performed = c.events.dropFirst(skip).compactMap { e -> ControlSnapshot? in
      if case .performed(_, _, let gesture, let control) = e, gesture == .hold { return control }
      return nil
    }
    #expect(performed.map(\.value) == [true])

    // Held past the long-hold threshold: the long hold fires too.
    skip = c.events.count
    #expect(try actionctl(h, ["press", "--hold", "3100"]).exitStatus == 0)
    try h.waitForEvent(c, "released-after-hold", after: skip) { $0.name == .releasedAfterHold }
    #expect(names(c, after: skip).contains("long-held"))
    #expect(
      c.events.dropFirst(skip).contains {
        if case .performed(_, _, .longHold, let control) = $0 { return control.kind == "org.test.long" }
        return false
      })

    // --double: the double press's control performs, the hold's does not.
    skip = c.events.count
    #expect(try actionctl(h, ["press", "--double"]).exitStatus == 0)
    try h.waitForEvent(c, "released-after-double-press", after: skip) { $0.name == .releasedAfterDoublePress }
    #expect(
      names(c, after: skip).filter { $0 != "state" } == [
        "pressed", "double-pressed", "performing", "performed", "released-after-double-press",
      ])
    #expect(
      c.events.dropFirst(skip).contains {
        if case .performed(_, _, .doublePress, let control) = $0 { return control.kind == "org.test.mute" }
        return false
      })

    // A momentary hold: on at the threshold, off at the virtual release.
    #expect(try actionctl(h, ["assign", "action", "org.test.timer", "--momentary"]).exitStatus == 0)
    skip = c.events.count
    #expect(try actionctl(h, ["press", "--hold", "700"]).exitStatus == 0)
    try h.waitForEvent(c, "the momentary off", after: skip) {
      if case .performed(_, _, .hold, let control) = $0 { return control.value == false }
      return false
    }
    let momentary = c.events.dropFirst(skip).compactMap { e -> Bool? in
      if case .performed(_, _, .hold, let control) = e { return control.value }
      return nil
    }
    #expect(momentary == [true, false])
    let order = names(c, after: skip).filter { $0 != "state" }
    #expect(order.firstIndex(of: "released-after-hold") ?? 0 > order.firstIndex(of: "performed") ?? 99)

    // While the key is down a second press is refused; an unknown button is the daemon's error.
    skip = c.events.count
    #expect(try actionctl(h, ["press", "--hold", "1000"]).exitStatus == 0)
    let busy = try actionctl(h, ["press"])
    #expect(busy.exitStatus == 1)
    #expect(busy.errorOutput.contains("(busy)"), "\(busy.errorOutput)")
    try h.waitForEvent(c, "released-after-hold", after: skip) { $0.name == .releasedAfterHold }
    let unknown = try actionctl(h, ["press", "nope", "--double"])
    #expect(unknown.exitStatus == 1)
    #expect(unknown.errorOutput.contains("(unknown-button)"), "\(unknown.errorOutput)")
    let json = try actionctl(h, ["--json", "press", "--hold", "200000"])
    #expect(json.exitStatus == 2)
    #expect(try h.stop() == 0)
  }

  /// Only users allowed to act may press: another uid gets `not-permitted`, nothing is pressed.
  @Test func anotherUserMayNotPress() throws {
    let h = try DaemonHarness(controls: Self.controls, assignments: #"{ action: "org.test.timer" }"#)
    try h.start()
    let c = try h.connect()
    try h.subscribe(c)
    #expect(chmod(h.socketPath, 0o666) == 0 && chmod(h.directory.path, 0o755) == 0)
    let other = ["/usr/bin/setpriv", "--reuid=65533", "--regid=65533", "--clear-groups"]
    let skip = c.events.count
    let denied = try actionctl(h, ["--json", "press", "--hold", "700"], as: other)
    #expect(denied.exitStatus == 1)
    #expect(denied.output.contains(#""code":"not-permitted""#), "\(denied.output)")
    #expect(denied.output.contains(#"uid 65533 may not send \"press\""#), "\(denied.output)")
    // The same request from an allowed user goes through, after the refused one: had the
    // refused one pressed, its `pressed` would come first.
    #expect(try actionctl(h, ["press"]).exitStatus == 0)
    try h.waitForEvent(c, "released", after: skip) { $0.name == .released }
    #expect(names(c, after: skip) == ["pressed", "released"])
    #expect(try h.stop() == 0)
  }
}
