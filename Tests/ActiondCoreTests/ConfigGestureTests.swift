// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

/// Problems of a one-line main file, without the `actiond.json:1: ` prefix.
private func check(_ text: String) -> [String] {
  problems(text).map { line in
    line.hasPrefix("actiond.json:1: ") ? String(line.dropFirst("actiond.json:1: ".count)) : line
  }
}

/// Buttons `action` and `panel`; a store toggle `t.timer`, a toggle `t.mute`, a button
/// `t.photo`, and a toggle `t.led` with a required parameter.
private let base =
  #"buttons: [{ name: "action", key: 148 }, { name: "panel", key: 149 }], controls: [{ kind: "t.timer", type: "toggle", displayName: "Timer", intent: { type: "state" } }, { kind: "t.mute", type: "toggle", displayName: "Mute", intent: { type: "state" } }, { kind: "t.photo", type: "button", displayName: "Photo", intent: { type: "exec", argv: ["/bin/true"] } }, { kind: "t.led", type: "toggle", displayName: "LED", intent: { type: "write", path: "/sys/${led}" }, parameters: [{ name: "led", type: "string", required: true }] }]"#

@Suite struct ConfigGestureTimingTests {
  @Test func defaultsFollowTheHoldThreshold() throws {
    let c = try load(
      #"{ buttons: [{ name: "a", key: 1 }, { name: "b", key: 2, holdThresholdMs: 2500 }, { name: "c", key: 3, holdThresholdMs: 10000 }] }"#
    )
    #expect(c.buttons.map(\.doublePressWindow) == [.milliseconds(300), .milliseconds(300), .milliseconds(300)])
    // max(3000, holdThresholdMs + 1000)
    #expect(c.buttons.map(\.longHoldThreshold) == [.milliseconds(3000), .milliseconds(3500), .milliseconds(11000)])
    #expect(ButtonConfig.defaultDoublePressWindow == .milliseconds(300))
    #expect(ButtonConfig.doublePressWindowRangeMs == 100...1000)
    #expect(ButtonConfig.longHoldThresholdRangeMs == 200...60000)
    #expect(
      ButtonConfig(name: "x", keyCode: 1, holdThreshold: .milliseconds(2600)).longHoldThreshold == .milliseconds(3600))
  }

  @Test func givenValuesAreRead() throws {
    let c = try load(
      #"{ buttons: [{ name: "a", key: 1, debounceMs: 20, doublePressWindowMs: 100, holdThresholdMs: 100, longHoldThresholdMs: 200 }] }"#
    )
    #expect(c.buttons[0].doublePressWindow == .milliseconds(100))
    #expect(c.buttons[0].longHoldThreshold == .milliseconds(200))
    let d = try load(#"{ buttons: [{ name: "a", key: 1, doublePressWindowMs: 1000, longHoldThresholdMs: 60000 }] }"#)
    #expect(d.buttons[0].doublePressWindow == .milliseconds(1000))
    #expect(d.buttons[0].longHoldThreshold == .milliseconds(60000))
  }

  @Test func outOfRangeAndOrderAreReportedWithTheirPath() {
    #expect(
      check(
        #"{ buttons: [{ name: "a", key: 1, doublePressWindowMs: 99, longHoldThresholdMs: 60001 }, { name: "b", key: 2, debounceMs: 150, doublePressWindowMs: 150, holdThresholdMs: 700, longHoldThresholdMs: 700 }, { name: "c", key: 3, doublePressWindowMs: 1.5, longHoldThresholdMs: "3000" }, { name: "d", key: 4, doublePresWindowMs: 300 }] }"#
      ) == [
        "buttons[0].doublePressWindowMs: must be between 100 and 1000 ms, got 99",
        "buttons[0].longHoldThresholdMs: must be between 200 and 60000 ms, got 60001",
        "buttons[1].doublePressWindowMs: must be longer than debounceMs (150)",
        "buttons[1].longHoldThresholdMs: must be longer than holdThresholdMs (700)",
        "buttons[2].doublePressWindowMs: must be an integer, got a fraction",
        "buttons[2].longHoldThresholdMs: must be an integer, got string",
        "buttons[3].doublePresWindowMs: unknown key (did you mean doublePressWindowMs?)",
      ])
  }

  @Test func theTimingIsPartOfTheButtonForAReload() throws {
    let old = try load(#"{ buttons: [{ name: "a", key: 1 }, { name: "b", key: 2 }, { name: "c", key: 3 }] }"#)
    let new = try load(
      #"{ buttons: [{ name: "a", key: 1 }, { name: "b", key: 2, doublePressWindowMs: 400 }, { name: "c", key: 3, longHoldThresholdMs: 4000 }] }"#
    )
    #expect(new.unchangedButtons(since: old) == ["a"])
    // Writing the default explicitly changes nothing.
    let same = try load(
      #"{ buttons: [{ name: "a", key: 1, doublePressWindowMs: 300, longHoldThresholdMs: 3000 }, { name: "b", key: 2 }, { name: "c", key: 3 }] }"#
    )
    #expect(same.unchangedButtons(since: old) == ["a", "b", "c"])
  }

  @Test func aButtonIsKeptByItsNameWhereverItMoved() throws {
    let old = try load(#"{ buttons: [{ name: "a", key: 1 }, { name: "b", key: 2 }, { name: "c", key: 3 }] }"#)
    // Reordered: all kept. Renamed: a new button. Another key: changed.
    let new = try load(#"{ buttons: [{ name: "c", key: 3 }, { name: "bee", key: 2 }, { name: "a", key: 4 }] }"#)
    #expect(new.unchangedButtons(since: old) == ["c"])
    let reordered = try load(#"{ buttons: [{ name: "c", key: 3 }, { name: "a", key: 1 }, { name: "b", key: 2 }] }"#)
    #expect(reordered.unchangedButtons(since: old) == ["a", "b", "c"])
  }
}

@Suite struct ConfigGestureAssignmentTests {
  @Test func everyFormIsRead() throws {
    let c = try load(
      #"{ \#(base), assignments: { action: { kind: "t.timer", momentary: true }, panel: { hold: "t.timer", doublePress: { kind: "t.mute" }, longHold: { kind: "t.led", configuration: { led: "x" } } } } }"#
    )
    // The throwing calls stay outside #expect: swift-testing 6.0 (Debian 13's) expands the
    // right side of == into a non-throwing autoclosure.
    let timer = try instance(c, "t.timer")
    let mute = try instance(c, "t.mute")
    #expect(c.assignments["action"] == [.hold: GestureAssignment(instance: timer, momentary: true)])
    let panel = try #require(c.assignments["panel"])
    #expect(panel[.hold] == GestureAssignment(instance: timer))
    #expect(panel[.doublePress] == GestureAssignment(instance: mute))
    #expect(panel[.longHold]?.instance.id == "t.led{led=x}")
    #expect(panel[.longHold]?.momentary == false)
    #expect(c.assignmentCount == 4)
    #expect(c.assignment(of: "panel", gesture: .doublePress)?.instance.kind == "t.mute")
    #expect(c.assignment(of: "action", gesture: .doublePress) == nil)
  }

  @Test func aButtonMayHaveNoHold() throws {
    let c = try load(
      #"{ \#(base), assignments: { panel: { doublePress: "t.photo" }, action: { hold: { kind: "t.mute", momentary: false } } } }"#
    )
    #expect(c.assignments["panel"]?.keys.sorted { $0.rawValue < $1.rawValue } == [.doublePress])
    #expect(c.assignments["action"]?[.hold]?.momentary == false)
  }

  @Test func theOldFormsAreUnchanged() throws {
    let c = try load(
      #"{ \#(base), assignments: { action: "t.timer", panel: { kind: "t.led", configuration: { led: "y" } } } }"#)
    let timer = try instance(c, "t.timer")
    #expect(c.assignments["action"] == [.hold: GestureAssignment(instance: timer)])
    #expect(c.assignments["panel"]?[.hold]?.instance.id == "t.led{led=y}")
  }

  @Test func problemsAreReportedWithTheirPath() {
    #expect(
      check(
        #"{ \#(base), assignments: { action: { kind: "t.photo", momentary: true }, panel: { hold: { kind: "t.timer", momentary: "yes" }, doublePress: { kind: "t.mute", momentary: true }, longHold: { kind: "t.led", configuration: { led: 1 }, momentary: false }, tripplePress: "t.mute", kind: "t.timer" } } }"#
      ) == [
        "assignments.action.momentary: only a toggle can be momentary (on while held, off at the release): t.photo is a button",
        "assignments.panel.hold.momentary: must be true or false, got string",
        "assignments.panel.doublePress.momentary: only a hold can be momentary (a doublePress performs once); leave momentary out",
        "assignments.panel.longHold.momentary: only a hold can be momentary (a longHold performs once); leave momentary out",
        "assignments.panel.tripplePress: unknown key; gestures: hold, doublePress, longHold",
        "assignments.panel.kind: cannot be mixed with the gesture keys hold, doublePress, longHold (write the hold's control as hold: { kind: ... })",
      ])
    #expect(
      check(
        #"{ \#(base), assignments: { panel: { hold: 3, doublePress: { kind: "t.mte", colour: 1 }, longHold: {}, doublepress: "t.mute" } } }"#
      ) == [
        "assignments.panel.hold: must be a kind or {kind, configuration, momentary}, got number",
        #"assignments.panel.doublePress.kind: no control has kind "t.mte" (did you mean t.mute?)"#,
        "assignments.panel.doublePress.colour: unknown key",
        "assignments.panel.longHold.kind: missing (the kind of the control to assign)",
        "assignments.panel.doublepress: unknown key (did you mean doublePress?); gestures: hold, doublePress, longHold",
      ])
  }

  @Test func aMisspeltGestureIsNotAMissingKind() {
    #expect(
      check(#"{ \#(base), assignments: { panel: { doublePres: "t.mute" } } }"#) == [
        "assignments.panel.doublePres: unknown key (did you mean doublePress?)"
      ])
    #expect(
      check(#"{ \#(base), assignments: { panel: { knd: "t.mute" } } }"#) == [
        "assignments.panel.kind: missing (the kind of the control to assign)",
        "assignments.panel.knd: unknown key (did you mean kind?)",
      ])
  }

  private func instance(_ c: Configuration, _ kind: String) throws -> ControlInstance {
    try ControlInstance(definition: try #require(c.control(kind: kind)), configuration: [:] as JSONObject)
  }
}
