// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore
@testable import ActiondMQTT

/// Mutating calls inside `#expect` need a reference.
private final class Ref<T> {
  var value: T
  init(_ value: T) { self.value = value }
}

private let topics = BridgeTopics(discoveryPrefix: "homeassistant", nodeID: "pi", base: "actiond/pi")
private let identity = BridgeIdentity(deviceID: "0123abc", deviceName: "pi", softwareVersion: "9.9")

private func control(
  _ kind: String, _ name: String, toggle: Bool = true, value: Bool? = false, available: Bool = true,
  configuration: JSONObject = [:], configured: Bool = true
) -> ControlSnapshot {
  ControlSnapshot(
    kind: kind, displayName: name, type: toggle ? .toggle : .button, configuration: configuration,
    value: toggle ? value : nil, hint: "Hold to X", configured: configured, available: available)
}

private let timer = control("org.example.timer", "Timer")
private let lamp = control("org.example.lamp", "Lamp", value: true)
private let bell = control("org.example.bell", "Bell", toggle: false)

private func button(
  _ name: String, hold: ControlSnapshot?, doublePress: ControlSnapshot? = nil, longHold: ControlSnapshot? = nil
)
  -> ButtonStatus
{
  ButtonStatus(
    name: name, key: "KEY_PROG1", devices: [], holdThreshold: .milliseconds(600), control: hold,
    doublePress: doublePress, longHold: longHold)
}

private func readyModel(buttons: [ButtonStatus]? = nil, controls: [ControlSnapshot]? = nil) -> BridgeModel {
  var m = BridgeModel(topics: topics, identity: identity)
  m.load(buttons: buttons ?? [button("action", hold: timer)], controls: controls ?? [timer, lamp, bell])
  return m
}

private func json(_ message: MQTTMessage) throws -> JSONValue { try JSONParser.parse(message.text).root }

private func components(_ message: MQTTMessage) throws -> JSONObject {
  try #require(try json(message)["cmps"]?.objectValue)
}

@Suite struct BridgeDiscoveryTests {
  @Test func oneDevicePayloadWithDeviceOriginAndEveryComponent() throws {
    let m = Ref(readyModel())
    let d = m.value.discovery()
    #expect(d.topic == "homeassistant/device/pi/config")
    #expect(d.retain && d.qos == 1)
    let doc = try json(d)
    #expect(doc["dev"]?["ids"] == ["actiond_0123abc"])
    #expect(doc["dev"]?["name"] == "pi")
    #expect(doc["dev"]?["sw"] == "9.9")
    #expect(doc["o"]?["name"] == "actiond-mqtt")
    let c = try components(d)
    #expect(
      Set(c.keys) == [
        "action_short_press", "action_long_press", "action_long_release", "action_event", "action_assignment",
        "control_org_example_timer", "control_org_example_lamp", "control_org_example_bell",
      ])
    let trigger = try #require(c["action_short_press"])
    #expect(trigger["p"] == "device_automation")
    #expect(trigger["automation_type"] == "trigger")
    #expect(trigger["type"] == "button_short_press")
    #expect(trigger["subtype"] == "action")
    #expect(trigger["payload"] == "short_press")
    #expect(trigger["topic"] == "actiond/pi/button/action/event")
    #expect(trigger["value_template"] == "{{ value_json.event_type }}")
    #expect(c["action_long_release"]?["type"] == "button_long_release")
    let event = try #require(c["action_event"])
    #expect(event["p"] == "event")
    #expect(event["event_types"] == ["short_press", "long_press", "long_release"])
    #expect(event["unique_id"] == "actiond_0123abc_action_event")
    let select = try #require(c["action_assignment"])
    #expect(select["options"] == ["Timer", "Lamp", "Bell"])
    #expect(select["command_topic"] == "actiond/pi/button/action/assignment/set")
    #expect(select["state_topic"] == "actiond/pi/button/action/assignment")
    let sw = try #require(c["control_org_example_lamp"])
    #expect(sw["p"] == "switch")
    #expect(sw["command_topic"] == "actiond/pi/control/org_example_lamp/set")
    #expect(sw["state_topic"] == "actiond/pi/control/org_example_lamp/state")
    #expect(sw["payload_on"] == "ON" && sw["payload_off"] == "OFF")
    #expect(
      sw["availability"] == [
        ["topic": "actiond/pi/bridge"], ["topic": "actiond/pi/daemon"],
        ["topic": "actiond/pi/control/org_example_lamp/availability"],
      ])
    #expect(sw["availability_mode"] == "all")
    let b = try #require(c["control_org_example_bell"])
    #expect(b["p"] == "button")
    #expect(b["payload_press"] == "PRESS")
    #expect(b["state_topic"] == nil)
  }

  @Test func doublePressAndLongHoldTriggersOnlyWhereAssigned() throws {
    let m = Ref(
      readyModel(buttons: [
        button("action", hold: nil, doublePress: bell, longHold: lamp), button("b", hold: nil),
      ]))
    let c = try components(m.value.discovery())
    #expect(c["action_double_press"]?["type"] == "button_double_press")
    #expect(c["action_long_hold"]?["type"] == "button_long_hold")
    #expect(
      c["action_event"]?["event_types"] == ["short_press", "long_press", "long_release", "double_press", "long_hold"])
    #expect(c["b_double_press"] == nil && c["b_long_hold"] == nil && c["b_short_press"] != nil)
  }

  @Test func aComponentThatIsGoneIsSentOnceWithOnlyItsPlatform() throws {
    let m = Ref(readyModel(buttons: [button("action", hold: timer, doublePress: bell)]))
    _ = m.value.discovery()
    let update = m.value.apply(.assigned(button: "action", gesture: .doublePress, control: nil), unixOffset: 0)
    #expect(update.rediscover)
    let c = try components(m.value.discovery())
    #expect(c["action_double_press"] == ["p": "device_automation"])
    #expect(c["action_event"]?["event_types"] == ["short_press", "long_press", "long_release"])
    // Removed once: the next payload no longer names it.
    #expect(try components(m.value.discovery())["action_double_press"] == nil)
  }

  @Test func componentsAPreviousRunLeftAreRemoved() throws {
    let before = Ref(readyModel(buttons: [button("action", hold: timer, doublePress: bell)]))
    let old = before.value.discovery()
    // A new run without the double press and without the lamp finds the old payload.
    let m = Ref(readyModel(controls: [timer, bell]))
    let first = m.value.discovery()
    #expect(m.value.noteDiscovery(old.payload) == true)
    let c = try components(m.value.discovery())
    #expect(c["action_double_press"] == ["p": "device_automation"])
    #expect(c["control_org_example_lamp"] == ["p": "switch"])
    #expect(c["action_short_press"]?["type"] == "button_short_press")
    // Its own payloads, and removal entries, change nothing.
    #expect(m.value.noteDiscovery(first.payload) == false)
    #expect(m.value.noteDiscovery(m.value.discovery().payload) == false)
    #expect(m.value.noteDiscovery(Array("not json".utf8)) == false)
    #expect(try components(m.value.discovery())["action_double_press"] == nil)
  }

  /// The broker hands the retained payload over at subscribe, often before actiond's
  /// snapshot is in: what it names is still removed by the snapshot's first discovery.
  @Test func aPreviousRunsPayloadNotedBeforeTheSnapshotIsRemovedByTheFirstDiscovery() throws {
    let before = Ref(readyModel(buttons: [button("action", hold: timer, doublePress: bell)]))
    let old = before.value.discovery()
    var fresh = BridgeModel(topics: topics, identity: identity)
    #expect(!fresh.ready)
    #expect(fresh.noteDiscovery(old.payload) == true)
    fresh.load(buttons: [button("action", hold: timer)], controls: [timer, bell])
    let c = try components(fresh.discovery())
    #expect(c["action_double_press"] == ["p": "device_automation"])
    #expect(c["control_org_example_lamp"] == ["p": "switch"])
  }

  /// A button named "control.org.example" and the control org.example.event once shared the
  /// component `control_org_example_event` (and its unique_id): one of the two was silently
  /// missing from the payload.
  @Test func aButtonNamedLikeAControlsComponentKeepsItsOwn() throws {
    let event = control("org.example.event", "event", toggle: false)
    let m = Ref(
      readyModel(
        buttons: [
          button("control", hold: timer), button("control.org.example", hold: timer),
          button("button_control", hold: timer),
        ],
        controls: [timer, event]))
    let c = try components(m.value.discovery())
    let eventControl = try #require(m.value.controlID(event))
    #expect(eventControl == "org_example_event")
    #expect(c["control_org_example_event"]?["p"] == "button")
    #expect(m.value.buttonID("control") != m.value.buttonID("button_control"))
    // Every component of every button and control is there: nothing was overwritten.
    let ids = ["control", "control.org.example", "button_control"].compactMap { m.value.buttonID($0) }
    #expect(Set(ids).count == 3)
    for id in ids {
      #expect(c["\(id)_event"]?["p"] == "event")
      #expect(c["\(id)_assignment"]?["p"] == "select")
      #expect(c["\(id)_short_press"]?["p"] == "device_automation")
    }
    #expect(c.count == 3 * 5 + 2)
  }

  @Test func configuredInstancesAndCollidingNamesGetAHash() throws {
    let red = control("org.example.led", "LED", configuration: ["led": "red"])
    let green = control("org.example.led", "LED", configuration: ["led": "green"])
    let dotted = control("a.b", "AB")
    let underscored = control("a_b", "AB2")
    let m = readyModel(
      buttons: [button("x.y", hold: red), button("x_y", hold: nil)], controls: [red, green, dotted, underscored])
    let ids = [red, green, dotted, underscored].map { m.controlID($0) }
    #expect(Set(ids.compactMap { $0 }).count == 4)
    #expect(ids[0] == "org_example_led_" + BridgeTopics.shortHash(BridgeModel.key("org.example.led", ["led": "red"])))
    #expect(ids[2]!.hasPrefix("a_b_") && ids[3]!.hasPrefix("a_b_"))
    #expect(m.buttonID("x.y") != m.buttonID("x_y"))
    #expect(m.buttonID("x.y")!.hasPrefix("x_y_"))
    // Options name one instance each: equal display names get their configuration.
    #expect(m.options.map(\.label) == [#"LED {"led":"red"}"#, #"LED {"led":"green"}"#, "AB", "AB2"])
    // The same configuration in another member order is the same instance.
    #expect(BridgeModel.key("k", ["a": 1, "b": 2]) == BridgeModel.key("k", ["b": 2, "a": 1]))
  }

  /// An option is the select's state in Home Assistant, which reads `none` in any case as
  /// no option and a blank one as nothing (mqtt/select.py:115-138 of 2026.11.0), and writes a
  /// state over 255 characters as `unknown` (core.py:2567-2575): such names get their
  /// configuration, and a label still too long is cut and told apart by a hash.
  @Test func optionsAreStatesHomeAssistantCanHold() throws {
    let none = control("org.example.none", "None")
    let blank = control("org.example.blank", "  ")
    let long = control(
      "org.example.led", "LED", configuration: ["pattern": .string(String(repeating: "é", count: 300))])
    let other = control(
      "org.example.led", "LED", configuration: ["pattern": .string(String(repeating: "é", count: 299))])
    let m = Ref(readyModel(buttons: [button("action", hold: long)], controls: [none, blank, long, other]))
    let labels = m.value.options.map(\.label)
    #expect(labels[0] == "None {}")
    #expect(labels[1] == "   {}")
    for (label, c) in zip(labels[2...], [long, other]) {
      #expect(label.unicodeScalars.count == BridgeModel.maxOptionLength)
      #expect(label.hasPrefix(#"LED {"pattern":"éé"#))
      #expect(label.hasSuffix(" #" + BridgeTopics.shortHash(BridgeModel.key(c.kind, c.configuration))))
    }
    #expect(Set(labels).count == 4)
    let select = try #require(try components(m.value.discovery())["action_assignment"])
    #expect(select["options"] == .array(labels.map { .string($0) }))
    #expect(m.value.states().first { $0.topic == "actiond/pi/button/action/assignment" }?.text == labels[2])
    #expect(
      m.value.command(topic: "actiond/pi/button/action/assignment/set", payload: Array(labels[3].utf8))
        == .request(
          .assign(button: "action", kind: other.kind, configuration: other.configuration), pendingControl: nil))
  }

  @Test func unconfiguredControlsAreNoEntities() throws {
    let m = Ref(readyModel(controls: [timer, control("org.example.flash", "Flash", configured: false)]))
    #expect(m.value.controls.map(\.kind) == ["org.example.timer"])
    #expect(try components(m.value.discovery())["control_org_example_flash"] == nil)
  }
}

@Suite struct BridgeStateTests {
  @Test func statesAreRetainedAndSayUnknownAndUnavailable() {
    let unknown = control("org.example.unknown", "Unknown", value: nil, available: false)
    let m = readyModel(
      buttons: [button("action", hold: lamp), button("free", hold: nil)], controls: [lamp, unknown, bell])
    let states = m.states()
    #expect(states.allSatisfy { $0.retain && $0.qos == 1 })
    let byTopic = Dictionary(uniqueKeysWithValues: states.map { ($0.topic, $0.text) })
    #expect(byTopic["actiond/pi/control/org_example_lamp/state"] == "ON")
    #expect(byTopic["actiond/pi/control/org_example_lamp/availability"] == "online")
    #expect(byTopic["actiond/pi/control/org_example_unknown/state"] == "None")
    #expect(byTopic["actiond/pi/control/org_example_unknown/availability"] == "offline")
    #expect(byTopic["actiond/pi/control/org_example_bell/availability"] == "online")
    #expect(byTopic["actiond/pi/control/org_example_bell/state"] == nil)
    #expect(byTopic["actiond/pi/button/action/assignment"] == "Lamp")
    #expect(byTopic["actiond/pi/button/free/assignment"] == "None")
  }

  @Test func daemonAvailabilityFollowsTheSnapshot() {
    let m = Ref(readyModel())
    #expect(m.value.daemonAvailability == MQTTMessage(topic: "actiond/pi/daemon", text: "online", retain: true))
    m.value.daemonLost()
    #expect(m.value.daemonAvailability.text == "offline")
    #expect(m.value.apply(.state(control: lamp, buttons: []), unixOffset: 0).messages.isEmpty)
  }
}

@Suite struct BridgeEventTests {
  @Test func everyGestureIsOneNonRetainedEventWithItsWallClockTime() throws {
    let m = Ref(readyModel(buttons: [button("action", hold: timer, doublePress: bell, longHold: lamp)]))
    let t = MonotonicInstant(nanoseconds: 5_000_000_000)
    // 2026-12-01T13:00:00Z is 1_796_130_000 s after 1970.
    let offset: Int64 = 1_796_130_000_000_000 - 5_000_000
    let cases: [(Event, String, Int64?)] = [
      (
        .released(button: "action", kind: "org.example.timer", hint: nil, time: t, duration: .milliseconds(120)),
        "short_press", 120
      ),
      (.held(button: "action", kind: "org.example.timer", time: t), "long_press", nil),
      (
        .releasedAfterHold(button: "action", kind: "org.example.timer", time: t, duration: .milliseconds(900)),
        "long_release", 900
      ),
      (
        .doublePressed(button: "action", kind: "org.example.bell", time: t, gap: .milliseconds(80)), "double_press", nil
      ),
      (.longHeld(button: "action", kind: "org.example.lamp", time: t), "long_hold", nil),
    ]
    for (event, type, duration) in cases {
      let update = m.value.apply(event, unixOffset: offset)
      let message = try #require(update.messages.first)
      #expect(update.messages.count == 1)
      #expect(message.topic == "actiond/pi/button/action/event")
      #expect(!message.retain)
      let doc = try json(message)
      #expect(doc["event_type"] == .string(type))
      #expect(doc["button"] == "action")
      #expect(doc["timestamp"] == "2026-12-01T13:00:00.000000Z")
      #expect(doc["time_us"] == 5_000_000)
      #expect(doc["duration_ms"] == duration.map { .integer($0) })
    }
    #expect(
      m.value.apply(.pressed(button: "action", kind: nil, hint: nil, time: t, threshold: .seconds(1)), unixOffset: 0)
        .messages
        .isEmpty)
    #expect(
      m.value.apply(.released(button: "ghost", kind: nil, hint: nil, time: t, duration: .zero), unixOffset: 0).messages
        .isEmpty)
  }

  @Test func stateAndPerformedUpdateTheControlAndTheButtons() {
    let m = Ref(readyModel(buttons: [button("action", hold: timer)]))
    var on = timer
    on.value = true
    let update = m.value.apply(.state(control: on, buttons: ["action"]), unixOffset: 0)
    #expect(update.messages.map(\.text) == ["online", "ON"])
    #expect(m.value.buttons[0].control?.value == true)
    on.value = false
    on.available = false
    let performed = m.value.apply(.performed(button: nil, source: .socket, control: on), unixOffset: 0)
    #expect(performed.messages.map(\.text) == ["offline", "OFF"])
    // A control actiond did not list (not configured then) changes nothing.
    #expect(m.value.apply(.state(control: control("x.y", "XY"), buttons: []), unixOffset: 0).messages.isEmpty)
  }

  @Test func assignedChangesTheSelectAndOnlyRediscoversWhenGesturesChange() {
    let m = Ref(readyModel())
    let hold = m.value.apply(.assigned(button: "action", gesture: .hold, control: lamp), unixOffset: 0)
    #expect(hold.messages.last == MQTTMessage(topic: "actiond/pi/button/action/assignment", text: "Lamp", retain: true))
    #expect(!hold.rediscover)
    #expect(m.value.apply(.assigned(button: "action", gesture: .doublePress, control: bell), unixOffset: 0).rediscover)
    #expect(
      m.value.apply(.assigned(button: "action", gesture: .hold, control: nil), unixOffset: 0).messages.last?.text
        == "None")
    #expect(m.value.apply(.configReloaded(applied: true, problems: []), unixOffset: 0).resnapshot)
    #expect(!m.value.apply(.configReloaded(applied: false, problems: ["x"]), unixOffset: 0).resnapshot)
  }
}

@Suite struct BridgeCommandTests {
  private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

  @Test func aToggleCommandPerformsOnlyWhenTheValueDiffers() {
    let m = Ref(readyModel())
    let set = "actiond/pi/control/org_example_timer/set"
    let perform = Request.Body.perform(.control(kind: "org.example.timer", configuration: [:]))
    #expect(
      m.value.command(topic: set, payload: bytes("OFF"))
        == .alreadyThere(m.value.states().filter { $0.topic.contains("timer") }))
    #expect(m.value.command(topic: set, payload: bytes("ON")) == .request(perform, pendingControl: "org_example_timer"))
    // The perform is on its way to ON: another ON is not a second flip; OFF is.
    guard case .alreadyThere = m.value.command(topic: set, payload: bytes("ON")) else {
      Issue.record("a second ON while the first is pending must not perform")
      return
    }
    #expect(
      m.value.command(topic: set, payload: bytes("OFF")) == .request(perform, pendingControl: "org_example_timer"))
    m.value.finished(controlID: "org_example_timer")
    // Back to actiond's value (still OFF: no state event came).
    guard case .alreadyThere = m.value.command(topic: set, payload: bytes("OFF")) else {
      Issue.record("after the reply the model's value counts again")
      return
    }
  }

  @Test func buttonsAndSelects() {
    let m = Ref(readyModel())
    #expect(
      m.value.command(topic: "actiond/pi/control/org_example_bell/set", payload: bytes("PRESS"))
        == .request(.perform(.control(kind: "org.example.bell", configuration: [:])), pendingControl: nil))
    #expect(
      m.value.command(topic: "actiond/pi/button/action/assignment/set", payload: bytes("Lamp"))
        == .request(.assign(button: "action", kind: "org.example.lamp", configuration: [:]), pendingControl: nil))
    #expect(m.value.command(topic: "homeassistant/status", payload: bytes("online")) == .republishAll)
    #expect(m.value.command(topic: "homeassistant/status", payload: bytes("offline")) == .ignored)
  }

  /// Home Assistant's birth message is on `homeassistant/status` whatever its discovery
  /// prefix (mqtt/const.py:284-285, 365-370 of 2026.11.0: a constant, set apart from the
  /// prefix in its MQTT options): with another prefix the bridge hears it there, and on
  /// `<prefix>/status` too, where a user may have moved it along.
  @Test func homeAssistantsBirthIsHeardWhateverThePrefix() {
    let t = BridgeTopics(discoveryPrefix: "ha", nodeID: "pi", base: "actiond/pi")
    #expect(
      t.subscriptions == [
        "actiond/pi/control/+/set", "actiond/pi/button/+/assignment/set", "homeassistant/status", "ha/status",
        "ha/device/pi/config",
      ])
    var m = BridgeModel(topics: t, identity: identity)
    m.load(buttons: [button("action", hold: timer)], controls: [timer])
    #expect(m.command(topic: "homeassistant/status", payload: bytes("online")) == .republishAll)
    #expect(m.command(topic: "ha/status", payload: bytes("online")) == .republishAll)
    #expect(m.command(topic: "homeassistant/status", payload: bytes("offline")) == .ignored)
    #expect(t.isHomeAssistantStatus("homeassistant/status") && t.isHomeAssistantStatus("ha/status"))
    #expect(!t.isHomeAssistantStatus("actiond/pi/control/x/set"))
    // With the default prefix, one topic.
    #expect(topics.subscriptions.filter { $0.hasSuffix("/status") } == ["homeassistant/status"])
  }

  @Test func everyMalformedCommandIsMalformed() {
    let m = Ref(readyModel())
    let cases: [(String, [UInt8], String)] = [
      ("actiond/pi/elsewhere", bytes("ON"), "not a command topic"),
      ("actiond/pi/control/org_example_timer/set/extra", bytes("ON"), "not a command topic"),
      ("actiond/pi/control//set", bytes("ON"), "not a command topic"),
      ("actiond/other/control/org_example_timer/set", bytes("ON"), "not a command topic"),
      ("actiond/pi/control/org_example_timer/set", Array(repeating: 0x41, count: 1025), "at most 1024"),
      ("actiond/pi/control/org_example_timer/set", [0xff, 0xfe], "not UTF-8"),
      ("actiond/pi/control/nosuch/set", bytes("ON"), "no control \"nosuch\""),
      ("actiond/pi/control/org_example_timer/set", bytes("on"), "neither ON nor OFF"),
      ("actiond/pi/control/org_example_timer/set", bytes(""), "neither ON nor OFF"),
      ("actiond/pi/control/org_example_timer/set", bytes("ON\n"), "neither ON nor OFF"),
      ("actiond/pi/control/org_example_timer/set", bytes("PRESS"), "neither ON nor OFF"),
      ("actiond/pi/control/org_example_bell/set", bytes("ON"), "is not PRESS"),
      ("actiond/pi/control/org_example_bell/set", bytes("press"), "is not PRESS"),
      ("actiond/pi/button/nosuch/assignment/set", bytes("Lamp"), "no button \"nosuch\""),
      ("actiond/pi/button/action/assignment/set", bytes("lamp"), "not one of the options"),
      ("actiond/pi/button/action/assignment/set", bytes(""), "not one of the options"),
    ]
    for (topic, payload, reason) in cases {
      guard case .malformed(let why) = m.value.command(topic: topic, payload: payload) else {
        Issue.record("\(topic) \(payload) is not malformed")
        continue
      }
      #expect(why.contains(reason), "\(topic): \(why)")
    }
  }

  @Test func wellFormedCommandsThatCannotBeCarriedOutAreRefused() {
    let m = Ref(
      readyModel(controls: [control("k.u", "U", value: nil), control("k.off", "Off", available: false), bell]))
    guard case .refused(let unknown) = m.value.command(topic: "actiond/pi/control/k_u/set", payload: Array("ON".utf8)),
      case .refused(let unavailable) = m.value.command(topic: "actiond/pi/control/k_off/set", payload: Array("ON".utf8))
    else {
      Issue.record("expected refusals")
      return
    }
    #expect(unknown.contains("unknown") && unavailable.contains("unavailable"))
    // Without actiond's snapshot a command is held, not refused (BridgeHoldTests).
    m.value.daemonLost()
    #expect(m.value.command(topic: "actiond/pi/control/org_example_bell/set", payload: Array("PRESS".utf8)) == .held)
  }
}

@Suite struct BridgeHoldTests {
  private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
  private func at(_ seconds: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: seconds * 1_000_000_000) }

  @Test func commandsBeforeTheSnapshotAreHeldAndReleasedInOrderOnce() {
    let m = Ref(BridgeModel(topics: topics, identity: identity))
    let sent = [
      ("actiond/pi/control/org_example_timer/set", "ON"), ("actiond/pi/control/org_example_bell/set", "PRESS"),
      ("actiond/pi/control/org_example_timer/set", "OFF"), ("actiond/pi/button/action/assignment/set", "Lamp"),
    ]
    for (i, (topic, payload)) in sent.enumerated() {
      #expect(m.value.command(topic: topic, payload: bytes(payload), at: at(Int64(i))) == .held)
    }
    #expect(m.value.heldCount == 4)
    #expect(m.value.heldDeadline == at(0) + BridgeModel.holdLimit)
    // Nothing is released before the snapshot.
    #expect(m.value.takeHeld(at: at(5)).perform.isEmpty)
    m.value.load(buttons: [button("action", hold: timer)], controls: [timer, lamp, bell])
    let (perform, expired) = m.value.takeHeld(at: at(5))
    #expect(expired.isEmpty)
    #expect(perform.map { $0.topic } == sent.map { $0.0 })
    #expect(perform.map { String(decoding: $0.payload, as: UTF8.self) } == sent.map { $0.1 })
    #expect(m.value.heldCount == 0 && m.value.heldDeadline == nil)
    // Taken once: a second take gives nothing.
    #expect(m.value.takeHeld(at: at(6)).perform.isEmpty)
    // Carried out in order, each is a request: ON then OFF both perform (the pending value).
    let timerPerform = Request.Body.perform(.control(kind: "org.example.timer", configuration: [:]))
    let decisions = perform.map { m.value.command(topic: $0.topic, payload: $0.payload, at: at(6)) }
    #expect(
      decisions == [
        .request(timerPerform, pendingControl: "org_example_timer"),
        .request(.perform(.control(kind: "org.example.bell", configuration: [:])), pendingControl: nil),
        .request(timerPerform, pendingControl: "org_example_timer"),
        .request(.assign(button: "action", kind: "org.example.lamp", configuration: [:]), pendingControl: nil),
      ])
  }

  @Test func heldCommandsAreBoundedInCountAndTime() {
    let m = Ref(BridgeModel(topics: topics, identity: identity))
    let set = "actiond/pi/control/org_example_bell/set"
    let half = BridgeModel.maxHeld / 2
    // Received in order: half at 0 s, half at 20 s.
    for i in 0..<BridgeModel.maxHeld {
      #expect(m.value.command(topic: set, payload: bytes("PRESS"), at: at(i < half ? 0 : 20)) == .held)
    }
    guard case .refused(let why) = m.value.command(topic: set, payload: bytes("PRESS"), at: at(21)) else {
      Issue.record("the command over the bound is not refused")
      return
    }
    #expect(why.contains("\(BridgeModel.maxHeld) commands already wait"))
    // Malformed ones are not held.
    #expect(m.value.command(topic: "actiond/pi/nothing", payload: bytes("ON"), at: at(21)) != .held)
    // Those from 0 s expire at 30 s; those from 20 s not yet.
    #expect(m.value.expireHeld(at: at(29)).isEmpty)
    let expired = m.value.expireHeld(at: at(30))
    #expect(expired.count == half && expired.allSatisfy { $0.at == at(0) })
    #expect(m.value.heldDeadline == at(20) + BridgeModel.holdLimit)
    m.value.load(buttons: [], controls: [bell])
    let (perform, late) = m.value.takeHeld(at: at(31))
    #expect(late.isEmpty)
    #expect(perform.count == BridgeModel.maxHeld - half && perform.allSatisfy { $0.at == at(20) })
    // A snapshot after the limit: what waited is reported, not performed.
    #expect(m.value.command(topic: set, payload: bytes("PRESS"), at: at(31)) != .held)
    m.value.daemonLost()
    #expect(m.value.command(topic: set, payload: bytes("PRESS"), at: at(40)) == .held)
    m.value.load(buttons: [], controls: [bell])
    let (none, dropped) = m.value.takeHeld(at: at(70))
    #expect(none.isEmpty && dropped.count == 1)
  }

  @Test func commandsTakenButNotCarriedOutAreHeldAgainFirst() {
    let m = Ref(BridgeModel(topics: topics, identity: identity))
    let set = "actiond/pi/control/org_example_bell/set"
    #expect(m.value.command(topic: set, payload: bytes("PRESS"), at: at(3)) == .held)
    let back = [HeldCommand(topic: "actiond/pi/control/org_example_timer/set", payload: bytes("ON"), at: at(1))]
    #expect(m.value.requeue(back).isEmpty)
    m.value.load(buttons: [], controls: [timer, bell])
    #expect(m.value.takeHeld(at: at(4)).perform.map(\.at) == [at(1), at(3)])
  }
}

@Suite struct BridgeRetainedTests {
  @Test func aStateChangeAnnouncedThreeTimesIsPublishedOnce() {
    let m = Ref(readyModel())
    #expect(m.value.publishStates(all: true).count == 6)
    var on = timer
    on.value = true
    // actiond's `state` event, its `performed`, the perform's reply: one change.
    #expect(m.value.apply(.state(control: on, buttons: ["action"]), unixOffset: 0).messages.map(\.text) == ["ON"])
    #expect(m.value.apply(.performed(button: nil, source: .socket, control: on), unixOffset: 0).messages.isEmpty)
    #expect(m.value.refresh(on).isEmpty)
    // A new snapshot publishes what changed; a reconnect everything.
    #expect(m.value.publishStates(all: false).isEmpty)
    #expect(m.value.publishStates(all: true).count == 6)
    // The answer to a refused command states it again all the same.
    #expect(
      m.value.restate(commandTopic: "actiond/pi/control/org_example_timer/set").map(\.text) == ["online", "ON"])
  }

  @Test func aControlRemovedByAReloadHasItsRetainedTopicsCleared() {
    let m = Ref(readyModel())
    _ = m.value.publishStates(all: true)
    m.value.load(buttons: [button("action", hold: timer)], controls: [timer, bell])
    #expect(
      m.value.takeClears() == [
        MQTTMessage(topic: "actiond/pi/control/org_example_lamp/availability", payload: [], retain: true),
        MQTTMessage(topic: "actiond/pi/control/org_example_lamp/state", payload: [], retain: true),
      ])
    #expect(m.value.takeClears().isEmpty)
    #expect(m.value.publishStates(all: false).isEmpty)
  }

  @Test func retainedTopicsAPreviousRunLeftAreClearedWhenTheyDescribeNothing() {
    let m = Ref(BridgeModel(topics: topics, identity: identity))
    // Found at the brief subscription, before actiond's snapshot.
    for t in [
      "actiond/pi/control/org_example_gone/state", "actiond/pi/control/org_example_gone/availability",
      "actiond/pi/control/org_example_timer/state", "actiond/pi/button/old/assignment",
    ] {
      #expect(m.value.noteRetained(topic: t).isEmpty)
    }
    // Not a state topic: never touched.
    #expect(m.value.noteRetained(topic: "actiond/pi/bridge").isEmpty)
    m.value.load(buttons: [button("action", hold: timer)], controls: [timer])
    #expect(
      m.value.takeClears().map(\.topic) == [
        "actiond/pi/button/old/assignment", "actiond/pi/control/org_example_gone/availability",
        "actiond/pi/control/org_example_gone/state",
      ])
    // Once the snapshot is in, one is cleared at once; one that describes something is not.
    #expect(
      m.value.noteRetained(topic: "actiond/pi/control/x/state")
        == [MQTTMessage(topic: "actiond/pi/control/x/state", payload: [], retain: true)])
    #expect(m.value.noteRetained(topic: "actiond/pi/control/org_example_timer/availability").isEmpty)
    #expect(topics.isStateTopic("actiond/pi/button/action/assignment"))
    #expect(!topics.isStateTopic("actiond/pi/button/action/assignment/set"))
    #expect(!topics.isStateTopic("actiond/pi/control/x/set"))
  }
}

@Suite struct BridgeGuardTests {
  @Test func aRedeliveryWithinTheWindowIsDropped() {
    let d = Ref(CommandDeduplicator(window: .seconds(60), capacity: 3))
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    let p = Array("PRESS".utf8)
    #expect(d.value.accept(mid: 7, qos: 1, topic: "a", payload: p, at: t0) == true)
    #expect(d.value.accept(mid: 7, qos: 1, topic: "a", payload: p, at: t0 + .seconds(59)) == false)
    #expect(d.value.accept(mid: 8, qos: 1, topic: "a", payload: p, at: t0 + .seconds(1)) == true)  // a new message
    #expect(d.value.accept(mid: 7, qos: 1, topic: "b", payload: p, at: t0 + .seconds(1)) == true)
    #expect(d.value.accept(mid: 7, qos: 1, topic: "a", payload: Array("ON".utf8), at: t0 + .seconds(1)) == true)
    #expect(d.value.accept(mid: 0, qos: 0, topic: "a", payload: p, at: t0) == true)
    #expect(d.value.accept(mid: 0, qos: 0, topic: "a", payload: p, at: t0) == true)  // QoS 0: no id, never dropped
    // The window passed.
    #expect(d.value.accept(mid: 7, qos: 1, topic: "a", payload: p, at: t0 + .seconds(60)) == true)
    #expect(d.value.count <= 3)
  }

  @Test func reportsAreRateLimitedPerTopic() {
    let r = Ref(RateLimitedReports(interval: .seconds(60), capacity: 2))
    let t0 = MonotonicInstant(nanoseconds: 1)
    #expect(r.value.report("a", at: t0) == 0)
    #expect(r.value.report("a", at: t0 + .seconds(1)) == nil)
    #expect(r.value.report("a", at: t0 + .seconds(2)) == nil)
    #expect(r.value.report("b", at: t0 + .seconds(2)) == 0)
    #expect(r.value.report("c", at: t0 + .seconds(3)) == nil)  // full, and every topic was reported this minute
    #expect(r.value.report("a", at: t0 + .seconds(61)) == 2)
    #expect(r.value.report("c", at: t0 + .seconds(70)) == 0)  // b's slot was old enough
  }

  @Test func backoffDoublesToItsMaximumAndResets() {
    let b = Ref(Backoff(initial: .milliseconds(500), maximum: .seconds(3)))
    #expect(
      (0..<5).map { _ in b.value.delay() } == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3)])
    b.value.reset()
    #expect(b.value.delay() == .milliseconds(500))
  }

  @Test func timestamps() {
    #expect(UTCTimestamp.iso8601(unixMicroseconds: 0) == "1970-01-01T00:00:00.000000Z")
    #expect(UTCTimestamp.iso8601(unixMicroseconds: 951_782_400_000_001) == "2000-02-29T00:00:00.000001Z")
    #expect(UTCTimestamp.iso8601(unixMicroseconds: 1_796_137_199_999_999) == "2026-12-01T14:59:59.999999Z")
    #expect(UTCTimestamp.iso8601(unixMicroseconds: -1) == "1969-12-31T23:59:59.999999Z")
  }
}
