// SPDX-License-Identifier: Apache-2.0
/// The protocol version this build speaks, sent in `hello` and `version`.
///
/// It increases only for incompatible changes; adding fields, events, requests or
/// error codes keeps the version (clients ignore what they do not know).
public enum ProtocolVersion {
  public static let current: Int64 = 1
  /// The longest line either side accepts, excluding the newline.
  public static let maxLineLength = 64 * 1024
}

/// A client-chosen request id, echoed in the reply: an integer or a string.
public enum RequestID: Hashable, Sendable, CustomStringConvertible {
  case integer(Int64)
  case string(String)

  public var json: JSONValue {
    switch self {
    case .integer(let i): return .integer(i)
    case .string(let s): return .string(s)
    }
  }

  public var description: String {
    switch self {
    case .integer(let i): return String(i)
    case .string(let s): return JSONEncoding.quoted(s)
    }
  }

  /// nil for `null`; throws for anything that is not an integer or a string of at most 256 bytes.
  init?(json: JSONValue) throws(ProtocolError) {
    switch json {
    case .null: return nil
    case .integer(let i): self = .integer(i)
    case .string(let s):
      guard s.utf8.count <= 256 else { throw .badRequest("field \"id\" must be at most 256 bytes long") }
      self = .string(s)
    default:
      guard let i = json.integerValue else {
        throw .badRequest("field \"id\" must be an integer or a string, got \(json.typeName)")
      }
      self = .integer(i)
    }
  }
}

/// The name of a request, as written in its `request` member.
public enum RequestName: String, Hashable, Sendable, CaseIterable {
  case status, list, get, assign, set, perform, press, reload, subscribe, unsubscribe, devices, register, ping,
    version

  /// Mutating requests change state or act on the machine, so only root, the daemon's
  /// own user, the control group and the control users may send them; everyone who can
  /// connect may read.
  public var isMutating: Bool {
    switch self {
    case .assign, .set, .perform, .press, .reload, .register: return true
    case .status, .list, .get, .subscribe, .unsubscribe, .devices, .ping, .version: return false
    }
  }
}

/// What a `press` request does with the button's key: a virtual key-down and key-up
/// (or two of each) fed to the button's recognizer, so every gesture, the feedback and
/// a momentary toggle behave as with the real key.
public enum VirtualPress: Hashable, Sendable, CustomStringConvertible {
  /// Down and up at once: a short press (on a double-press button its `released` comes
  /// once the window passed, as with the key).
  case short
  /// Down now, up after the span: a hold when it reaches the hold threshold, a long hold
  /// when it reaches the long-hold threshold.
  case hold(TimeSpan)
  /// Two short presses, the second one debounce after the first release (the soonest
  /// that is not chatter, well inside the double-press window).
  case double

  /// The longest `holdMs`: twice the longest long-hold threshold, so every gesture can
  /// be tried, while a typo (`7000000`) cannot leave a key down for hours.
  public static let maxHold = TimeSpan.milliseconds(120_000)

  public var description: String {
    switch self {
    case .short: "short press"
    case .hold(let span): "hold for \(span.milliseconds) ms"
    case .double: "double press"
    }
  }
}

/// What `perform` acts on.
public enum PerformTarget: Hashable, Sendable {
  /// The control assigned to the named button, or (nil) to the only configured button.
  case button(String?)
  /// A control by kind, optionally one configured instance of it.
  case control(kind: String, configuration: JSONObject?)
}

/// Which events a subscriber receives. Each present set narrows the stream; an
/// absent set does not filter. A `buttons` filter passes only events that concern
/// one of the buttons; a `kinds` filter passes only events that concern one of the kinds.
public struct SubscriptionFilter: Hashable, Sendable {
  public var events: Set<EventName>?
  public var buttons: Set<String>?
  public var kinds: Set<String>?

  public init(events: Set<EventName>? = nil, buttons: Set<String>? = nil, kinds: Set<String>? = nil) {
    self.events = events
    self.buttons = buttons
    self.kinds = kinds
  }

  /// Everything.
  public static let all = SubscriptionFilter()

  public func matches(_ event: Event) -> Bool {
    if let events, !events.contains(event.name) { return false }
    if let buttons, !event.buttons.contains(where: buttons.contains) { return false }
    if let kinds {
      guard event.kinds.contains(where: kinds.contains) else { return false }
    }
    return true
  }

  public var json: JSONValue {
    var b = ObjectBuilder()
    b.set("events", strings: events.map { $0.map(\.rawValue).sorted() })
    b.set("buttons", strings: buttons.map { $0.sorted() })
    b.set("kinds", strings: kinds.map { $0.sorted() })
    return b.value
  }

  init(reading r: inout FieldReader) throws(ProtocolError) {
    if let names = try r.optionalStringArray("events") {
      var set = Set<EventName>()
      for n in names {
        guard let e = EventName(rawValue: n) else {
          let known = EventName.allCases.map(\.rawValue).joined(separator: ", ")
          throw .badRequest("unknown event \"\(n)\" in field \"events\" (known: \(known))")
        }
        set.insert(e)
      }
      events = set
    }
    buttons = try r.optionalStringArray("buttons").map(Set.init)
    kinds = try r.optionalStringArray("kinds").map(Set.init)
  }

  public init(json: JSONValue) throws(ProtocolError) {
    var r = try FieldReader(json, context: "subscription")
    try self.init(reading: &r)
  }
}

/// A client's request to the daemon.
public struct Request: Hashable, Sendable {
  public enum Body: Hashable, Sendable {
    /// Per button: the assigned control and its state; `button` narrows to one.
    case status(button: String?)
    /// Every control definition and configured instance (like `currentControls()`).
    case list
    /// The instances of one kind.
    case get(kind: String)
    /// Assigns a control (with its configuration) to one gesture of a button (default
    /// `hold`) and persists it; `momentary` only for a hold.
    case assign(
      button: String, kind: String, configuration: JSONObject, gesture: Gesture = .hold, momentary: Bool = false)
    /// An application changed the source of truth: set the stored value, then reload.
    case set(kind: String, value: Bool, configuration: JSONObject?)
    /// Runs the intent exactly as a hold would; the reply comes after the intent finished.
    case perform(PerformTarget)
    /// A virtual press of the button's key (a short press by default), recognized like the key.
    case press(button: String, VirtualPress = .short)
    /// Re-runs the value providers of one kind (or all) and announces changes.
    case reload(kind: String?)
    /// Starts (or replaces) this connection's event subscription.
    case subscribe(SubscriptionFilter)
    case unsubscribe
    /// Bound input devices and their state.
    case devices
    /// This connection becomes the provider of the kinds (intent or value `provider`).
    case register(kinds: [String])
    case ping
    case version
  }

  public var id: RequestID?
  public var body: Body

  public init(id: RequestID?, _ body: Body) {
    self.id = id
    self.body = body
  }

  public var name: RequestName {
    switch body {
    case .status: return .status
    case .list: return .list
    case .get: return .get
    case .assign: return .assign
    case .set: return .set
    case .perform: return .perform
    case .press: return .press
    case .reload: return .reload
    case .subscribe: return .subscribe
    case .unsubscribe: return .unsubscribe
    case .devices: return .devices
    case .register: return .register
    case .ping: return .ping
    case .version: return .version
    }
  }

  public var isMutating: Bool { name.isMutating }

  public var json: JSONValue {
    var b = ObjectBuilder("type", "request")
    if let id { b.set("id", id.json) }
    b.set("request", name.rawValue)
    switch body {
    case .status(let button): b.set("button", button)
    case .list, .unsubscribe, .devices, .ping, .version: break
    case .get(let kind): b.set("kind", kind)
    case .assign(let button, let kind, let configuration, let gesture, let momentary):
      b.set("button", button)
      b.set("kind", kind)
      if !configuration.isEmpty { b.set("configuration", .object(configuration)) }
      // Defaults are left out, so a hold's request reads as before gestures.
      if gesture != .hold { b.set("gesture", gesture.rawValue) }
      if momentary { b.set("momentary", true) }
    case .set(let kind, let value, let configuration):
      b.set("kind", kind)
      b.set("value", .bool(value))
      if let configuration { b.set("configuration", .object(configuration)) }
    case .perform(.button(let button)): b.set("button", button)
    case .perform(.control(let kind, let configuration)):
      b.set("kind", kind)
      if let configuration { b.set("configuration", .object(configuration)) }
    case .press(let button, let press):
      b.set("button", button)
      // A short press reads as before holds and double presses could be pressed.
      switch press {
      case .short: break
      case .hold(let span): b.set("holdMs", .integer(span.milliseconds))
      case .double: b.set("double", true)
      }
    case .reload(let kind): b.set("kind", kind)
    case .subscribe(let filter):
      for m in filter.json.objectValue ?? [:] { b.set(m.key, m.value) }
    case .register(let kinds): b.set("kinds", strings: kinds)
    }
    return b.value
  }

  /// Reads the body of a request whose `type`, `id` and `request` members were already taken.
  static func body(_ name: RequestName, _ r: inout FieldReader) throws(ProtocolError) -> Body {
    switch name {
    case .status: return .status(button: try r.optionalString("button"))
    case .list: return .list
    case .get: return .get(kind: try r.string("kind"))
    case .assign:
      let button = try r.string("button")
      let kind = try r.string("kind")
      let configuration = try r.optionalObject("configuration") ?? [:]
      var gesture = Gesture.hold
      if let name = try r.optionalString("gesture") {
        guard let g = Gesture(rawValue: name) else {
          throw .badRequest(
            "field \"gesture\" of request \"assign\" must be one of \(Gesture.names), got \(JSONEncoding.quoted(name))")
        }
        gesture = g
      }
      let momentary = try r.optionalBool("momentary") ?? false
      if momentary, gesture != .hold {
        throw .badRequest("field \"momentary\" of request \"assign\" is only for gesture \"hold\", not \"\(gesture)\"")
      }
      return .assign(
        button: button, kind: kind, configuration: configuration, gesture: gesture, momentary: momentary)
    case .set:
      return .set(
        kind: try r.string("kind"), value: try r.bool("value"), configuration: try r.optionalObject("configuration"))
    case .perform:
      let button = try r.optionalString("button")
      let kind = try r.optionalString("kind")
      let configuration = try r.optionalObject("configuration")
      switch (button, kind) {
      case (.some, .some):
        throw .badRequest("request \"perform\" takes either \"button\" or \"kind\", not both")
      case (_, .some(let kind)):
        return .perform(.control(kind: kind, configuration: configuration))
      case (let button, nil):
        if configuration != nil {
          throw .badRequest("field \"configuration\" of request \"perform\" needs \"kind\"")
        }
        return .perform(.button(button))
      }
    case .press:
      let button = try r.string("button")
      let holdMs = try r.optionalInteger("holdMs")
      let double = try r.optionalBool("double") ?? false
      switch (holdMs, double) {
      case (.some, true):
        throw .badRequest("request \"press\" takes either \"holdMs\" or \"double\", not both")
      case (.some(let ms), false):
        guard ms >= 0, ms <= VirtualPress.maxHold.milliseconds else {
          throw .badRequest(
            "field \"holdMs\" of request \"press\" must be 0...\(VirtualPress.maxHold.milliseconds) (milliseconds), got \(ms)"
          )
        }
        return .press(button: button, .hold(.milliseconds(ms)))
      case (nil, true): return .press(button: button, .double)
      case (nil, false): return .press(button: button, .short)
      }
    case .reload: return .reload(kind: try r.optionalString("kind"))
    case .subscribe: return .subscribe(try SubscriptionFilter(reading: &r))
    case .unsubscribe: return .unsubscribe
    case .devices: return .devices
    case .register:
      let kinds = try r.stringArray("kinds")
      guard !kinds.isEmpty else { throw .badRequest("field \"kinds\" of request \"register\" must not be empty") }
      return .register(kinds: kinds)
    case .ping: return .ping
    case .version: return .version
    }
  }
}
