// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// Who the bridge says it is in every discovery payload (`device` and `origin`).
public struct BridgeIdentity: Hashable, Sendable {
  /// The device's identifier: `/etc/machine-id` unless configured (`homeAssistant.deviceId`).
  public var deviceID: String
  /// The device's name in Home Assistant: the node id unless configured.
  public var deviceName: String
  /// actiond's version (`sw` of device and origin).
  public var softwareVersion: String

  public init(deviceID: String, deviceName: String, softwareVersion: String = ActiondVersion.string) {
    self.deviceID = deviceID
    self.deviceName = deviceName
    self.softwareVersion = softwareVersion
  }
}

/// A button gesture as Home Assistant sees it: a device trigger and an event type.
///
/// Device trigger types: https://www.home-assistant.io/integrations/device_trigger.mqtt/
/// (`button_short_press`, `button_long_press`, `button_long_release`, `button_double_press`
/// are the frontend's own; `button_long_hold` has no translation and shows as written).
public enum BridgeGesture: String, Hashable, Sendable, CaseIterable {
  /// `released`: a short press (the hint's announcement).
  case shortPress = "short_press"
  /// `held`: the hold reached its threshold (the hold's control performs).
  case longPress = "long_press"
  /// `released-after-hold`: the key went up after a hold.
  case longRelease = "long_release"
  /// `double-pressed` (only on a button with a double press).
  case doublePress = "double_press"
  /// `long-held` (only on a button with a long hold).
  case longHold = "long_hold"

  /// The device trigger's `type`.
  public var triggerType: String { "button_" + rawValue }

  /// The gesture an actiond event announces, if any.
  public init?(_ event: EventName) {
    switch event {
    case .released: self = .shortPress
    case .held: self = .longPress
    case .releasedAfterHold: self = .longRelease
    case .doublePressed: self = .doublePress
    case .longHeld: self = .longHold
    default: return nil
    }
  }

  /// The gestures a button has: the short press and the hold always, a double press and a
  /// long hold only where a control is assigned to them (docs/configuration.md, Gestures).
  public static func gestures(of button: ButtonStatus) -> [BridgeGesture] {
    var out: [BridgeGesture] = [.shortPress, .longPress, .longRelease]
    if button.doublePress != nil { out.append(.doublePress) }
    if button.longHold != nil { out.append(.longHold) }
    return out
  }
}

/// What the bridge does with one MQTT message it received (``BridgeModel/command(topic:payload:)``).
public enum BridgeCommandDecision: Hashable, Sendable {
  /// Send this request to actiond. `pendingControl`: the control id whose toggle is now
  /// on its way to a value (give it to ``BridgeModel/finished(controlID:)`` when the reply comes).
  case request(Request.Body, pendingControl: String?)
  /// Nothing to perform: the control already has (or is already going to) the requested
  /// value; these messages re-state it.
  case alreadyThere([MQTTMessage])
  /// Home Assistant came (back) online: re-publish discovery and every state.
  case republishAll
  /// Not for the bridge to act on (Home Assistant's `offline`, a retained `online`).
  case ignored
  /// The payload or topic is not a valid command: drop it (and log it, rate-limited).
  case malformed(String)
  /// A valid command that cannot be carried out now (the value unknown, the control
  /// unavailable, too many commands waiting for actiond).
  case refused(String)
  /// actiond's snapshot is not in (the bridge just started or reconnected, actiond is
  /// restarting): the command waits in the model until it is (``BridgeModel/takeHeld(at:)``)
  /// or until ``BridgeModel/holdLimit`` has passed (``BridgeModel/expireHeld(at:)``).
  case held
}

/// A command received before actiond's snapshot was in, kept to be performed once it is.
public struct HeldCommand: Hashable, Sendable {
  public var topic: String
  public var payload: [UInt8]
  /// When it was received.
  public var at: MonotonicInstant

  public init(topic: String, payload: [UInt8], at: MonotonicInstant) {
    self.topic = topic
    self.payload = payload
    self.at = at
  }
}

/// The bridge's pure half: what actiond has (buttons, controls, states) and what that
/// looks like in MQTT and Home Assistant — discovery, states, triggers, events — and what
/// an incoming command means. No I/O and no clock: the adapter (`Bridge`) feeds it
/// actiond's messages and the broker's, and publishes what it returns.
public struct BridgeModel: Sendable {
  public let topics: BridgeTopics
  public let identity: BridgeIdentity
  /// actiond's buttons (from `status`, kept current by `assigned` events).
  public private(set) var buttons: [ButtonStatus] = []
  /// Every configured control instance (from `list`, kept current by `state` events).
  public private(set) var controls: [ControlSnapshot] = []
  /// True once actiond's snapshot is in; false while actiond is unreachable.
  public private(set) var ready = false

  /// Object id of each control (by ``BridgeModel/key(_:_:)``) and of each button (by name).
  private var controlIDs: [String: String] = [:]
  private var buttonIDs: [String: String] = [:]
  /// Target values of toggles whose perform is on its way, by control id.
  private var pending: [String: Bool] = [:]
  /// The components of the last discovery payload, id → platform: a component that is
  /// gone is published once more with only its platform, which removes it in Home Assistant.
  private var published: [String: String] = [:]
  /// The retained payload last published on each state topic (a control's availability
  /// and value, a button's assignment): a state is published when it changes, once,
  /// though actiond announces one change up to three times (its `state` and `performed`
  /// events and the perform's reply).
  private var lastRetained: [String: [UInt8]] = [:]
  /// State topics found retained on the broker before actiond's snapshot was in (what a
  /// previous run left): those the snapshot does not describe are cleared.
  private var foundRetained: Set<String> = []
  /// State topics that describe nothing any more, to clear (``takeClears()``).
  private var clears: Set<String> = []
  /// Commands received before actiond's snapshot, in order.
  private var held: [HeldCommand] = []

  public static let online = "online"
  public static let offline = "offline"
  /// Switch payloads (Home Assistant's defaults): https://www.home-assistant.io/integrations/switch.mqtt/
  public static let on = "ON"
  public static let off = "OFF"
  /// The button's `payload_press` default: https://www.home-assistant.io/integrations/button.mqtt/
  public static let press = "PRESS"
  /// Resets a switch's or select's state to unknown (a toggle whose value actiond does not
  /// know, a hold without a control): "A MQTT device can reset the current state to unknown
  /// using a None payload" (https://www.home-assistant.io/integrations/switch.mqtt/); for
  /// selects since Home Assistant 2021.8 (home-assistant/core#53227).
  public static let unknown = "None"
  /// How many commands wait at most for actiond's snapshot: the broker hands over a
  /// persistent session's queue at once on reconnect; more than this is a flood, refused.
  public static let maxHeld = 64
  /// How long a command waits at most for actiond's snapshot: one older than this is
  /// dropped (and logged) rather than performed long after it was asked for.
  public static let holdLimit = TimeSpan.seconds(30)
  /// Most state topics remembered from the broker's retained messages before the snapshot.
  public static let maxFoundRetained = 4096
  /// The longest command payload read (a select option is a display name).
  public static let maxCommandLength = 1024
  /// The longest select option, in Unicode scalars: the option is the select's state, and
  /// Home Assistant writes a longer state as `unknown` (core.py:2567-2575 of 2026.11.0).
  public static let maxOptionLength = 255

  public init(topics: BridgeTopics, identity: BridgeIdentity) {
    self.topics = topics
    self.identity = identity
  }

  // MARK: actiond's side

  /// A control instance's identity: its kind and its configuration, in canonical JSON.
  public static func key(_ kind: String, _ configuration: JSONObject) -> String {
    kind + "\u{0}" + JSONEncoding.compact(canonical(.object(configuration)))
  }

  static func canonical(_ value: JSONValue) -> JSONValue {
    switch value {
    case .object(let o):
      return .object(JSONObject(o.members.sorted { $0.key < $1.key }.map { ($0.key, canonical($0.value)) }))
    case .array(let a): return .array(a.map(canonical))
    default: return value
    }
  }

  /// Takes actiond's snapshot (after `status` and `list`): the bridge is ready.
  public mutating func load(buttons: [ButtonStatus], controls: [ControlSnapshot]) {
    let before = describedStateTopics
    self.buttons = buttons
    // Only configured instances are entities: an unconfigured definition cannot be performed.
    self.controls = controls.filter(\.configured)
    controlIDs = Self.uniqueIDs(
      self.controls.map { (Self.key($0.kind, $0.configuration), $0.kind, $0.configuration.isEmpty) })
    buttonIDs = Self.uniqueIDs(
      buttons.map { button in
        // A button's components are `<id>_event`, `<id>_assignment` and `<id>_<gesture>`, a
        // control's `control_<id>`: a button whose id begins with the word "control" takes
        // "button_" first, so that no component (or unique_id) of one is also the other's.
        let id = BridgeTopics.objectID(button.name)
        let clashes = id == "control" || id.hasPrefix("control_")
        return (button.name, clashes ? "button_" + button.name : button.name, true)
      })
    pending = [:]
    ready = true
    // A control or button that went away (a reload, actiond restarted with another
    // configuration, or a previous run's topics found on the broker) leaves retained
    // state topics behind: cleared, so that the broker keeps only what exists.
    let now = describedStateTopics
    clears.formUnion(before.union(foundRetained).subtracting(now))
    foundRetained = []
    lastRetained = lastRetained.filter { now.contains($0.key) }
  }

  /// Every retained state topic the snapshot describes: each control's availability (and
  /// value, for a toggle), each button's assignment.
  var describedStateTopics: Set<String> {
    var out = Set<String>()
    for control in controls {
      guard let cid = controlID(control) else { continue }
      out.insert(topics.controlAvailability(cid))
      if control.type == .toggle { out.insert(topics.controlState(cid)) }
    }
    for button in buttons {
      out.insert(topics.assignment(buttonIDs[button.name] ?? BridgeTopics.objectID(button.name)))
    }
    return out
  }

  /// A retained message found on one of the node's state topics (the broker hands them
  /// over at a brief subscription when the bridge connects): one that describes nothing
  /// is cleared, now if the snapshot is in, else when it comes.
  public mutating func noteRetained(topic: String) -> [MQTTMessage] {
    guard topics.isStateTopic(topic) else { return [] }
    if ready {
      guard !describedStateTopics.contains(topic) else { return [] }
      lastRetained[topic] = nil
      return [MQTTMessage(topic: topic, payload: [], retain: true)]
    }
    if foundRetained.count < Self.maxFoundRetained { foundRetained.insert(topic) }
    return []
  }

  /// The retained state topics to clear now (an empty retained payload deletes a retained
  /// message): published after the discovery that removed their components.
  public mutating func takeClears() -> [MQTTMessage] {
    defer { clears = [] }
    return clears.sorted().map { MQTTMessage(topic: $0, payload: [], retain: true) }
  }

  /// Keeps only the messages whose payload differs from the one last published on their
  /// topic (all of them with `force`, after a reconnect or Home Assistant's birth), and
  /// remembers them as published.
  mutating func changed(_ messages: [MQTTMessage], force: Bool = false) -> [MQTTMessage] {
    messages.filter { m in
      guard m.retain else { return true }
      if !force && lastRetained[m.topic] == m.payload { return false }
      lastRetained[m.topic] = m.payload
      return true
    }
  }

  /// actiond went away: nothing is known until the next snapshot.
  public mutating func daemonLost() {
    ready = false
    pending = [:]
  }

  /// Object ids for (key, name, plain) items: the name made safe, with a hash of the key
  /// where that is not enough: an item that is not `plain` (a configured instance of a
  /// kind), or names that collide once made safe (`a.b` and `a_b`).
  static func uniqueIDs(_ items: [(key: String, name: String, plain: Bool)]) -> [String: String] {
    var counts: [String: Int] = [:]
    for item in items { counts[BridgeTopics.objectID(item.name), default: 0] += 1 }
    var out: [String: String] = [:]
    for item in items {
      let safe = BridgeTopics.objectID(item.name)
      out[item.key] = item.plain && counts[safe] == 1 ? safe : safe + "_" + BridgeTopics.shortHash(item.key)
    }
    return out
  }

  /// The object id of a control instance, nil when actiond has no such configured control.
  public func controlID(_ control: ControlSnapshot) -> String? {
    controlIDs[Self.key(control.kind, control.configuration)]
  }

  /// The object id of a button.
  public func buttonID(_ name: String) -> String? { buttonIDs[name] }

  // MARK: What is published

  /// The daemon availability message: `online` while actiond's snapshot is in.
  public var daemonAvailability: MQTTMessage {
    MQTTMessage(topic: topics.daemonAvailability, text: ready ? Self.online : Self.offline, retain: true)
  }

  /// The select's options: every configured control's display name; where two share one,
  /// both get their configuration appended (`LED {"led":"user1"}`), so an option names one instance.
  /// An option is the select's state in Home Assistant, so a name it cannot hold as one gets
  /// its configuration too (`None {}`): `none` in any case reads as no option there, a blank
  /// one as nothing (mqtt/select.py:115-138 of 2026.11.0). A label over
  /// ``maxOptionLength`` is cut and ends in ` #` and the instance's hash.
  public var options: [(label: String, control: ControlSnapshot)] {
    var counts: [String: Int] = [:]
    for c in controls { counts[c.displayName, default: 0] += 1 }
    return controls.map { c in
      var label = c.displayName
      if counts[c.displayName] != 1 || !Self.isHeldAsState(label) {
        label += " " + JSONEncoding.compact(Self.canonical(.object(c.configuration)))
      }
      if label.unicodeScalars.count > Self.maxOptionLength {
        let tail = " #" + BridgeTopics.shortHash(Self.key(c.kind, c.configuration))
        let kept = label.unicodeScalars.prefix(Self.maxOptionLength - tail.unicodeScalars.count)
        label = String(String.UnicodeScalarView(kept)) + tail
      }
      return (label, c)
    }
  }

  /// Whether Home Assistant's select takes `label` as an option when it is its state: not
  /// blank, not `none` in any case.
  static func isHeldAsState(_ label: String) -> Bool {
    !label.unicodeScalars.allSatisfy(\.properties.isWhitespace) && label.lowercased() != "none"
  }

  /// The option naming a button's hold control, nil when unassigned or not a known instance.
  public func option(of button: ButtonStatus) -> String? {
    guard let control = button.control else { return nil }
    let key = Self.key(control.kind, control.configuration)
    return options.first { Self.key($0.control.kind, $0.control.configuration) == key }?.label
  }

  /// The device discovery payload, retained, on `<prefix>/device/<node>/config`
  /// (https://www.home-assistant.io/integrations/mqtt/#device-discovery-payload). Components
  /// published before and now gone are sent once with only `p`, which removes them.
  public mutating func discovery() -> MQTTMessage {
    var components = JSONObject()
    var now: [String: String] = [:]
    func add(_ id: String, _ platform: String, _ config: JSONObject) {
      var c = JSONObject()
      c["p"] = .string(platform)
      for m in config { c[m.key] = m.value }
      components[id] = .object(c)
      now[id] = platform
    }
    let base: JSONValue = .array([
      ["topic": .string(topics.bridgeAvailability)], ["topic": .string(topics.daemonAvailability)],
    ])
    let prefix = "actiond_" + BridgeTopics.objectID(identity.deviceID) + "_"
    for button in buttons {
      guard let bid = buttonIDs[button.name] else { continue }
      let gestures = BridgeGesture.gestures(of: button)
      for g in gestures {
        // https://www.home-assistant.io/integrations/device_trigger.mqtt/
        add(
          "\(bid)_\(g.rawValue)", "device_automation",
          [
            "automation_type": "trigger", "topic": .string(topics.buttonEvent(bid)), "type": .string(g.triggerType),
            "subtype": .string(button.name), "payload": .string(g.rawValue),
            "value_template": "{{ value_json.event_type }}", "qos": 1,
          ])
      }
      // https://www.home-assistant.io/integrations/event.mqtt/
      add(
        "\(bid)_event", "event",
        [
          "unique_id": .string(prefix + bid + "_event"), "name": .string(button.name),
          "state_topic": .string(topics.buttonEvent(bid)), "event_types": .array(gestures.map { .string($0.rawValue) }),
          "device_class": "button", "availability": base, "availability_mode": "all", "qos": 1,
        ])
      // https://www.home-assistant.io/integrations/select.mqtt/
      add(
        "\(bid)_assignment", "select",
        [
          "unique_id": .string(prefix + bid + "_assignment"), "name": .string("\(button.name) hold"),
          "command_topic": .string(topics.assignmentCommand(bid)), "state_topic": .string(topics.assignment(bid)),
          "options": .array(options.map { .string($0.label) }), "availability": base, "availability_mode": "all",
          "entity_category": "config", "qos": 1, "retain": false,
        ])
    }
    for control in controls {
      guard let cid = controlID(control) else { continue }
      var availability = base.arrayValue ?? []
      availability.append(["topic": .string(topics.controlAvailability(cid))])
      var config: JSONObject = [
        "unique_id": .string(prefix + "control_" + cid), "name": .string(control.displayName),
        "command_topic": .string(topics.controlCommand(cid)), "availability": .array(availability),
        "availability_mode": "all", "qos": 1, "retain": false,
      ]
      switch control.type {
      case .toggle:
        // https://www.home-assistant.io/integrations/switch.mqtt/
        config["state_topic"] = .string(topics.controlState(cid))
        config["payload_on"] = .string(Self.on)
        config["payload_off"] = .string(Self.off)
        add("control_\(cid)", "switch", config)
      case .button:
        config["payload_press"] = .string(Self.press)
        add("control_\(cid)", "button", config)
      }
    }
    for (id, platform) in published.sorted(by: { $0.key < $1.key }) where now[id] == nil {
      components[id] = ["p": .string(platform)]
    }
    published = now
    let payload: JSONValue = [
      "dev": [
        "ids": .array([.string("actiond_" + identity.deviceID)]), "name": .string(identity.deviceName),
        "mf": "actiond", "mdl": "actiond", "sw": .string(identity.softwareVersion),
      ],
      "o": [
        "name": "actiond-mqtt", "sw": .string(identity.softwareVersion),
      ],
      "cmps": .object(components),
    ]
    return MQTTMessage(topic: topics.discovery, text: JSONEncoding.compact(payload), retain: true)
  }

  /// Takes a device payload found on the discovery topic (the retained one a previous run
  /// left, delivered when the bridge subscribes to it; or its own, echoed): components it
  /// names that this run did not publish are remembered as published, so that the next
  /// ``discovery()`` removes them. Returns true when that is needed now. Removal entries
  /// (only `p`) and unreadable payloads are ignored.
  public mutating func noteDiscovery(_ payload: [UInt8]) -> Bool {
    guard let text = String(validating: payload, as: UTF8.self),
      let document = try? JSONParser.parse(text),
      let components = document.root["cmps"]?.objectValue
    else { return false }
    var stale = false
    for (id, config) in components {
      guard let c = config.objectValue, c.count > 1, let platform = c["p"]?.stringValue, published[id] == nil
      else { continue }
      published[id] = platform
      stale = true
    }
    return stale
  }

  /// The states to publish: every one with `all` (after a broker (re)connect, on Home
  /// Assistant's `online`: the broker or Home Assistant may have lost them), else those that
  /// changed since last published (a new snapshot from actiond).
  public mutating func publishStates(all: Bool) -> [MQTTMessage] {
    changed(states(), force: all)
  }

  /// A control's or button's current state again, whatever was published (the answer to a
  /// command that was refused or failed: Home Assistant shows what is, not what was asked).
  public mutating func restate(commandTopic topic: String) -> [MQTTMessage] {
    switch topics.commandTarget(of: topic) {
    case .control(let id)?:
      guard let control = controls.first(where: { controlID($0) == id }) else { return [] }
      return changed(state(of: control), force: true)
    case .assignment(let bid)?:
      guard let button = buttons.first(where: { buttonIDs[$0.name] == bid }) else { return [] }
      return changed([assignment(of: button)], force: true)
    case nil:
      return []
    }
  }

  /// Every state, retained: each control's availability and toggle value, each button's
  /// assignment. Sent after discovery at every (re)connect and on Home Assistant's `online`.
  public func states() -> [MQTTMessage] {
    var out: [MQTTMessage] = []
    for control in controls { out += state(of: control) }
    for button in buttons { out.append(assignment(of: button)) }
    return out
  }

  func state(of control: ControlSnapshot) -> [MQTTMessage] {
    guard let cid = controlID(control) else { return [] }
    let available = control.available && control.configured
    var out = [
      MQTTMessage(
        topic: topics.controlAvailability(cid), text: available ? Self.online : Self.offline, retain: true)
    ]
    if control.type == .toggle {
      let text = control.value.map { $0 ? Self.on : Self.off } ?? Self.unknown
      out.append(MQTTMessage(topic: topics.controlState(cid), text: text, retain: true))
    }
    return out
  }

  func assignment(of button: ButtonStatus) -> MQTTMessage {
    let bid = buttonIDs[button.name] ?? BridgeTopics.objectID(button.name)
    return MQTTMessage(topic: topics.assignment(bid), text: option(of: button) ?? Self.unknown, retain: true)
  }

  // MARK: actiond's events

  /// What an actiond event changes on the broker.
  public struct Update: Hashable, Sendable {
    /// Publish these (states retained, gesture events not).
    public var messages: [MQTTMessage] = []
    /// The discovery payload changed (a gesture was assigned or unassigned): publish ``discovery()``.
    public var rediscover = false
    /// The configuration was reloaded: ask actiond for a new snapshot.
    public var resnapshot = false
  }

  /// Applies one event. `unixOffset`: the wall clock minus CLOCK_MONOTONIC, in microseconds,
  /// read by the adapter, so a gesture's `timestamp` is when it happened, not when it was relayed.
  public mutating func apply(_ event: Event, unixOffset: Int64) -> Update {
    var update = Update()
    guard ready else { return update }
    if let gesture = BridgeGesture(event.name), let name = event.buttons.first, let bid = buttonIDs[name] {
      update.messages.append(gestureEvent(gesture, button: name, id: bid, event: event, unixOffset: unixOffset))
      return update
    }
    switch event {
    case .state(let control, _), .performed(_, _, _, let control):
      update.messages += refresh(control)
    case .assigned(let name, let gesture, let momentary, let control):
      guard let i = buttons.firstIndex(where: { $0.name == name }) else { return update }
      let before = BridgeGesture.gestures(of: buttons[i])
      switch gesture {
      case .hold:
        buttons[i].control = control
        buttons[i].momentary = momentary
      case .doublePress: buttons[i].doublePress = control
      case .longHold: buttons[i].longHold = control
      }
      if let control { update.messages += refresh(control) }
      update.messages += changed([assignment(of: buttons[i])])
      update.rediscover = BridgeGesture.gestures(of: buttons[i]) != before
    case .configReloaded(let applied, _):
      update.resnapshot = applied
    default:
      break
    }
    return update
  }

  /// Takes a control's new state (from an event or a reply) and returns its messages that
  /// changed (actiond announces one change as an event, a `performed` and a reply).
  public mutating func refresh(_ control: ControlSnapshot) -> [MQTTMessage] {
    let key = Self.key(control.kind, control.configuration)
    for i in buttons.indices {
      for gesture in Gesture.allCases {
        guard let c = buttons[i].control(of: gesture), Self.key(c.kind, c.configuration) == key else { continue }
        switch gesture {
        case .hold: buttons[i].control = control
        case .doublePress: buttons[i].doublePress = control
        case .longHold: buttons[i].longHold = control
        }
      }
    }
    guard let i = controls.firstIndex(where: { Self.key($0.kind, $0.configuration) == key }) else { return [] }
    controls[i] = control
    return changed(state(of: control))
  }

  func gestureEvent(
    _ gesture: BridgeGesture, button: String, id: String, event: Event, unixOffset: Int64
  ) -> MQTTMessage {
    var time: MonotonicInstant?
    var duration: TimeSpan?
    switch event {
    case .released(_, _, _, _, let t, let d), .releasedAfterHold(_, _, let t, let d, _):
      time = t
      duration = d
    case .held(_, _, let t, _), .longHeld(_, _, let t), .doublePressed(_, _, let t, _):
      time = t
    default: break
    }
    var b = JSONObject()
    b["event_type"] = .string(gesture.rawValue)
    b["button"] = .string(button)
    if let kind = event.kind { b["kind"] = .string(kind) }
    if let time {
      b["timestamp"] = .string(UTCTimestamp.iso8601(unixMicroseconds: time.microseconds + unixOffset))
      b["time_us"] = .integer(time.microseconds)
    }
    if let duration { b["duration_ms"] = .integer(duration.milliseconds) }
    return MQTTMessage(topic: topics.buttonEvent(id), text: JSONEncoding.compact(.object(b)), retain: false)
  }

  // MARK: Commands from the broker

  /// What one received message means. Commands are strict: `ON`/`OFF` for a toggle,
  /// `PRESS` for a button, an exact option for a select; anything else is `malformed`.
  ///
  /// Before actiond's snapshot is in, a command is held (``BridgeCommandDecision/held``):
  /// a persistent session's queue arrives at once when the bridge connects, typically
  /// before actiond has answered `status` and `list`.
  public mutating func command(
    topic: String, payload: [UInt8], at now: MonotonicInstant = .zero
  ) -> BridgeCommandDecision {
    if topics.isHomeAssistantStatus(topic) {
      return payload == Array(Self.online.utf8) ? .republishAll : .ignored
    }
    guard let target = topics.commandTarget(of: topic) else { return .malformed("not a command topic of this node") }
    guard payload.count <= Self.maxCommandLength else {
      return .malformed("payload of \(payload.count) bytes (at most \(Self.maxCommandLength))")
    }
    guard let text = String(validating: payload, as: UTF8.self) else { return .malformed("payload is not UTF-8") }
    if !ready {
      guard held.count < Self.maxHeld else {
        return .refused("actiond is unreachable and \(Self.maxHeld) commands already wait for it")
      }
      held.append(HeldCommand(topic: topic, payload: payload, at: now))
      return .held
    }
    switch target {
    case .control(let id):
      guard let control = controls.first(where: { controlID($0) == id }) else {
        return .malformed("no control \(JSONEncoding.quoted(id))")
      }
      let perform = Request.Body.perform(.control(kind: control.kind, configuration: control.configuration))
      switch control.type {
      case .button:
        guard text == Self.press else {
          return .malformed("\(JSONEncoding.quoted(text)) is not \(Self.press) (\(control.displayName) is a button)")
        }
        return .request(perform, pendingControl: nil)
      case .toggle:
        let wanted: Bool
        switch text {
        case Self.on: wanted = true
        case Self.off: wanted = false
        default:
          return .malformed(
            "\(JSONEncoding.quoted(text)) is neither \(Self.on) nor \(Self.off) (\(control.displayName) is a toggle)")
        }
        // A perform flips a toggle, so it is sent only when the value (or the value a perform
        // already on its way will give) differs: a repeated ON never turns it off.
        let current = pending[id] ?? control.value
        guard let current else { return .refused("\(control.displayName)'s value is unknown") }
        if current == wanted { return .alreadyThere(state(of: control)) }
        guard control.available else { return .refused("\(control.displayName) is unavailable") }
        pending[id] = wanted
        return .request(perform, pendingControl: id)
      }
    case .assignment(let bid):
      guard let name = buttonIDs.first(where: { $0.value == bid })?.key else {
        return .malformed("no button \(JSONEncoding.quoted(bid))")
      }
      guard let option = options.first(where: { $0.label == text }) else {
        return .malformed("\(JSONEncoding.quoted(text)) is not one of the options of \(name)")
      }
      return .request(
        .assign(button: name, kind: option.control.kind, configuration: option.control.configuration),
        pendingControl: nil)
    }
  }

  /// How many commands wait for actiond's snapshot.
  public var heldCount: Int { held.count }

  /// The instant the oldest held command expires, nil when none waits.
  public var heldDeadline: MonotonicInstant? { held.first.map { $0.at + Self.holdLimit } }

  /// Once the snapshot is in: the held commands to carry out now, in the order they came
  /// (give each to ``command(topic:payload:at:)`` again), and those held too long
  /// (``holdLimit``), to report. Nothing while actiond's snapshot is not in.
  public mutating func takeHeld(at now: MonotonicInstant) -> (perform: [HeldCommand], expired: [HeldCommand]) {
    guard ready else { return ([], []) }
    let expired = expireHeld(at: now)
    defer { held = [] }
    return (held, expired)
  }

  /// Holds again, before any held now, commands taken but not yet carried out when actiond
  /// went away (up to ``maxHeld`` in all; returns those that did not fit, to report).
  public mutating func requeue(_ commands: [HeldCommand]) -> [HeldCommand] {
    let room = max(0, Self.maxHeld - held.count)
    held.insert(contentsOf: commands.prefix(room), at: 0)
    return Array(commands.dropFirst(room))
  }

  /// Drops and returns the held commands older than ``holdLimit`` (to report).
  public mutating func expireHeld(at now: MonotonicInstant) -> [HeldCommand] {
    let old = held.prefix { now - $0.at >= Self.holdLimit }
    held.removeFirst(old.count)
    return Array(old)
  }

  /// The perform for `controlID` finished (replied, failed, or actiond went away).
  public mutating func finished(controlID: String) { pending[controlID] = nil }
}

/// Wall-clock time stamps for gesture events.
public enum UTCTimestamp {
  /// `2026-12-01T13:28:39.123456Z` for microseconds since 1970 (UTC, proleptic Gregorian).
  public static func iso8601(unixMicroseconds us: Int64) -> String {
    let seconds = us >= 0 ? us / 1_000_000 : (us - 999_999) / 1_000_000
    let micros = us - seconds * 1_000_000
    let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    let secondOfDay = seconds - days * 86_400
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let day = doy - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    func pad(_ v: Int64, _ width: Int) -> String {
      let s = String(v)
      return String(repeating: "0", count: max(0, width - s.count)) + s
    }
    return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
      + "\(pad(secondOfDay % 3600 / 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(micros, 6))Z"
  }
}
