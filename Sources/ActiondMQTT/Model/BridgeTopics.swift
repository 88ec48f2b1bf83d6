// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// One MQTT message the bridge publishes, as data (the adapter hands it to libmosquitto).
public struct MQTTMessage: Hashable, Sendable, CustomStringConvertible {
  public var topic: String
  public var payload: [UInt8]
  /// Retained: the broker keeps the last one for late subscribers (discovery, states,
  /// availability); never for announcements (triggers, events).
  public var retain: Bool
  /// 1 for everything the bridge sends (states must arrive; commands are QoS 1 too).
  public var qos: Int32

  public init(topic: String, payload: [UInt8], retain: Bool, qos: Int32 = 1) {
    self.topic = topic
    self.payload = payload
    self.retain = retain
    self.qos = qos
  }

  public init(topic: String, text: String, retain: Bool, qos: Int32 = 1) {
    self.init(topic: topic, payload: Array(text.utf8), retain: retain, qos: qos)
  }

  public var text: String { String(decoding: payload, as: UTF8.self) }

  public var description: String { "\(topic)\(retain ? " (retained)" : ""): \(text)" }
}

/// Where everything of one node lives on the broker (docs/home-assistant.md, "Topics").
///
/// `base` is `actiond/<node>` unless configured; under it:
///
/// | topic | payload | retained |
/// | --- | --- | --- |
/// | `bridge` | `online` / `offline` (the bridge's Last Will) | yes |
/// | `daemon` | `online` / `offline`: actiond reachable | yes |
/// | `button/<b>/event` | `{"event_type":…,"timestamp":…}` (the event entity and the device triggers) | no |
/// | `button/<b>/assignment` | the hold's control (the select's option) | yes |
/// | `button/<b>/assignment/set` | command: an option | (from HA) |
/// | `control/<c>/state` | `ON` / `OFF` / `None` (toggles) | yes |
/// | `control/<c>/availability` | `online` / `offline` | yes |
/// | `control/<c>/set` | command: `ON`/`OFF` (switch) or `PRESS` (button) | (from HA) |
///
/// `<b>` and `<c>` are object ids (``BridgeTopics/objectID(_:)``).
public struct BridgeTopics: Hashable, Sendable {
  /// Home Assistant's discovery prefix, `homeassistant` by default.
  public var discoveryPrefix: String
  /// The node id: the discovery topic's `<node_id>`, `[a-zA-Z0-9_-]+`.
  public var nodeID: String
  /// The node's own tree, `actiond/<node>` by default.
  public var base: String

  public init(discoveryPrefix: String, nodeID: String, base: String) {
    self.discoveryPrefix = discoveryPrefix
    self.nodeID = nodeID
    self.base = base
  }

  /// Device-based discovery, retained:
  /// https://www.home-assistant.io/integrations/mqtt/#device-discovery-payload
  public var discovery: String { "\(discoveryPrefix)/device/\(nodeID)/config" }
  /// Home Assistant's birth and will (`online` / `offline`):
  /// https://www.home-assistant.io/integrations/mqtt/#birth-and-last-will-messages. Their
  /// topic is `homeassistant/status` whatever the discovery prefix (HA 2026.11.0
  /// mqtt/const.py:284-285 and 365-376: a constant, set apart from the prefix in its MQTT
  /// options), so with another prefix both that and `<prefix>/status` (where a user may have
  /// moved it along) are heard.
  public var homeAssistantStatusTopics: [String] {
    let own = "\(discoveryPrefix)/status"
    return own == Self.defaultHomeAssistantStatus ? [own] : [Self.defaultHomeAssistantStatus, own]
  }
  /// Home Assistant's default birth and will topic.
  public static let defaultHomeAssistantStatus = "homeassistant/status"

  /// Whether `topic` carries Home Assistant's birth or will.
  public func isHomeAssistantStatus(_ topic: String) -> Bool { homeAssistantStatusTopics.contains(topic) }
  public var bridgeAvailability: String { "\(base)/bridge" }
  public var daemonAvailability: String { "\(base)/daemon" }
  public func buttonEvent(_ id: String) -> String { "\(base)/button/\(id)/event" }
  public func assignment(_ id: String) -> String { "\(base)/button/\(id)/assignment" }
  public func assignmentCommand(_ id: String) -> String { "\(base)/button/\(id)/assignment/set" }
  public func controlState(_ id: String) -> String { "\(base)/control/\(id)/state" }
  public func controlAvailability(_ id: String) -> String { "\(base)/control/\(id)/availability" }
  public func controlCommand(_ id: String) -> String { "\(base)/control/\(id)/set" }
  /// What the bridge subscribes to (with QoS 1): the commands, Home Assistant's status, and
  /// its own discovery topic (to find components a previous run published).
  public var subscriptions: [String] {
    ["\(base)/control/+/set", "\(base)/button/+/assignment/set"] + homeAssistantStatusTopics + [discovery]
  }

  /// The node's retained state topics, as subscriptions: the bridge subscribes to them
  /// briefly when it connects to find what a previous run left (``BridgeModel/noteRetained(topic:)``).
  public var stateSubscriptions: [String] {
    ["\(base)/control/+/state", "\(base)/control/+/availability", "\(base)/button/+/assignment"]
  }

  /// Whether `topic` is one of the node's retained state topics (a control's `state` or
  /// `availability`, a button's `assignment`).
  public func isStateTopic(_ topic: String) -> Bool {
    let prefix = base + "/"
    guard topic.hasPrefix(prefix) else { return false }
    let parts = topic.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 3, !parts[1].isEmpty else { return false }
    return (parts[0] == "control" && (parts[2] == "state" || parts[2] == "availability"))
      || (parts[0] == "button" && parts[2] == "assignment")
  }

  /// What a command topic names, or nil for a topic that is not one of this node's commands.
  public enum CommandTarget: Hashable, Sendable {
    case control(id: String)
    case assignment(button: String)
  }

  public func commandTarget(of topic: String) -> CommandTarget? {
    let prefix = base + "/"
    guard topic.hasPrefix(prefix) else { return nil }
    let parts = topic.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
    if parts.count == 3 && parts[0] == "control" && parts[2] == "set" && !parts[1].isEmpty {
      return .control(id: String(parts[1]))
    }
    if parts.count == 4 && parts[0] == "button" && parts[2] == "assignment" && parts[3] == "set"
      && !parts[1].isEmpty
    {
      return .assignment(button: String(parts[1]))
    }
    return nil
  }

  /// Whether `s` may be a node id or object id: `[a-zA-Z0-9_-]+`, as Home Assistant requires
  /// of discovery topic parts (https://www.home-assistant.io/integrations/mqtt/#discovery-topic).
  public static func isValidID(_ s: String) -> Bool {
    !s.isEmpty && s.utf8.allSatisfy(isIDByte)
  }

  static func isIDByte(_ b: UInt8) -> Bool {
    (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b == 0x2D
  }

  /// A topic- and discovery-safe id for a name: every byte outside `[a-zA-Z0-9_-]` becomes
  /// `_` (`org.example.timer` → `org_example_timer`). Names that collide after this are told
  /// apart by the caller (``BridgeModel`` appends a hash).
  public static func objectID(_ name: String) -> String {
    let bytes = name.utf8.map { isIDByte($0) ? $0 : 0x5F }
    return bytes.isEmpty ? "_" : String(decoding: bytes, as: UTF8.self)
  }

  /// A node id from a host name: the first label (`pi.local` → `pi`), made safe.
  public static func nodeID(fromHostName host: String) -> String {
    let first = host.split(separator: ".").first.map(String.init) ?? host
    return objectID(first.isEmpty ? "actiond" : first)
  }

  /// FNV-1a 64 of `s`, as 8 hex digits of its low 32 bits: short, stable across runs and
  /// builds (Swift's `Hasher` is seeded per process).
  public static func shortHash(_ s: String) -> String {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for b in s.utf8 {
      h ^= UInt64(b)
      h = h &* 0x100_0000_01b3
    }
    let hex = String(h & 0xffff_ffff, radix: 16)
    return String(repeating: "0", count: 8 - hex.count) + hex
  }
}
