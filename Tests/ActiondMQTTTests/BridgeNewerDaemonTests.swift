// SPDX-License-Identifier: Apache-2.0
import ActiondTesting
import Testing

@testable import ActiondCore
@testable import ActiondMQTT

/// protocol.md, Versioning, for actiond-mqtt: what it reads from actiond's socket (the
/// snapshot replies and the events it subscribes to), as a newer daemon writes it, with
/// members this build does not know at every depth and events it does not know, gives
/// the same MQTT messages as the same messages without them.
@Suite struct BridgeNewerDaemonTests {
  static let timer = ControlSnapshot(
    kind: "org.example.timer", displayName: "Timer", type: .toggle, value: false, hint: "Hold to Start")
  static let mute = ControlSnapshot(
    kind: "org.example.mute", displayName: "Mute", type: .toggle, value: false, hint: "Hold to Mute")

  /// Reads `lines` as the bridge does (DaemonLink, Bridge.daemonMessage): replies load
  /// the snapshot, events are applied, unknown events change nothing. Every line must be
  /// readable: before, a line this build could not read was dropped with a warning.
  private func run(_ lines: [String]) throws -> [MQTTMessage] {
    var model = BridgeModel(
      topics: BridgeTopics(discoveryPrefix: "homeassistant", nodeID: "pi", base: "actiond/pi"),
      identity: BridgeIdentity(deviceID: "0123abc", deviceName: "pi"))
    var buttons: [ButtonStatus]?
    var out: [MQTTMessage] = []
    for line in lines {
      let message = try ServerMessage.decode(line: line)
      switch message {
      case .reply(let r):
        switch r.result {
        case .buttons(let b): buttons = b
        case .controls(let c):
          model.load(buttons: buttons ?? [], controls: c)
          out += model.states()
          out.append(model.discovery())
        default: Issue.record("unexpected reply \(line)")
        }
      case .event(let e): out += model.apply(e, unixOffset: 1_000).messages
      case .unknownEvent: break
      default: Issue.record("unexpected message \(line)")
      }
    }
    return out
  }

  @Test func newMembersAndUnknownEventsChangeNothingTheBridgePublishes() throws {
    let button = ButtonStatus(
      name: "action", key: "KEY_PROG1", devices: [], holdThreshold: .milliseconds(600), control: Self.timer,
      doublePress: Self.mute)
    var running = Self.timer
    running.value = true
    let messages: [ServerMessage] = [
      .reply(Reply(id: .integer(1), request: .status, result: .buttons([button]))),
      .reply(Reply(id: .integer(2), request: .list, result: .controls([Self.timer, Self.mute]))),
      .event(.released(button: "action", kind: Self.timer.kind, hint: "Hold to Start", time: .zero, duration: .zero)),
      .event(.held(button: "action", kind: Self.timer.kind, time: MonotonicInstant(nanoseconds: 600_000_000))),
      .event(.performed(button: "action", source: .button, gesture: .hold, control: running)),
      .event(.doublePressed(button: "action", kind: Self.mute.kind, time: .zero, gap: .milliseconds(100))),
      .event(.state(control: running, buttons: ["action"])),
      .event(.assigned(button: "action", gesture: .longHold, control: Self.mute)),
      .event(.configReloaded(applied: false, problems: ["x"])),
    ]
    let plain = messages.map { JSONEncoding.compact($0.json) }
    var newer: [String] = []
    for (i, m) in messages.enumerated() {
      newer.append(#"{"type":"event","event":"new-event-\#(i)","button":"action","payload":{"a":[1,{"b":null}]}}"#)
      newer.append(JSONEncoding.compact(NewerDaemonJSON.withNewMembers(m.json)))
    }
    let expected = try run(plain)
    #expect(expected.count > 8, "the messages publish something")
    let got = try run(newer)
    #expect(got == expected)
  }
}
