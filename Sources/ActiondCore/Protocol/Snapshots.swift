// SPDX-License-Identifier: Apache-2.0
/// The wire picture of one control instance: everything a client needs to render
/// it (like `ControlInfo` plus the rendered template of iOS Controls), as data.
///
/// The engine fills it from its control model; the protocol does not depend on that
/// model so that the wire format stays stable when the model changes.
public struct ControlSnapshot: Hashable, Sendable {
  /// `toggle` (boolean state) or `button` (one-shot action).
  public enum Style: String, Hashable, Sendable {
    case toggle
    case button
  }

  /// Reverse-DNS identifier of the control definition, e.g. `org.example.timer`.
  public var kind: String
  public var displayName: String
  public var type: Style
  /// Parameter values of this configured instance; empty for unconfigured controls.
  public var configuration: JSONObject
  /// Toggle state; `nil` (`null` on the wire) for buttons and while the value is unknown or unavailable.
  public var value: Bool?
  /// The value label to show, e.g. "Running"; for buttons usually nil.
  public var valueText: String?
  /// Icon name for the current state.
  public var symbol: String?
  public var tint: String?
  /// The rendered hint, always `Hold to <verb>`, e.g. "Hold to Start".
  public var hint: String
  /// False while a required configuration is missing (`requiresConfiguration`).
  public var configured: Bool
  /// False when the value provider failed or the provider client is not connected.
  public var available: Bool
  /// True while the control's intent runs.
  public var performing: Bool
  /// Why the control is unavailable or unconfigured, for people.
  public var reason: String?

  public init(
    kind: String, displayName: String, type: Style, configuration: JSONObject = [:], value: Bool? = nil,
    valueText: String? = nil, symbol: String? = nil, tint: String? = nil, hint: String, configured: Bool = true,
    available: Bool = true, performing: Bool = false, reason: String? = nil
  ) {
    self.kind = kind
    self.displayName = displayName
    self.type = type
    self.configuration = configuration
    self.value = value
    self.valueText = valueText
    self.symbol = symbol
    self.tint = tint
    self.hint = hint
    self.configured = configured
    self.available = available
    self.performing = performing
    self.reason = reason
  }

  public var json: JSONValue {
    var b = ObjectBuilder()
    b.set("kind", kind)
    b.set("displayName", displayName)
    b.set("type", type.rawValue)
    b.set("configuration", .object(configuration))
    b.set("value", value.json)
    b.set("valueText", valueText)
    b.set("symbol", symbol)
    b.set("tint", tint)
    b.set("hint", hint)
    b.set("configured", configured)
    b.set("available", available)
    b.set("performing", performing)
    b.set("reason", reason)
    return b.value
  }

  public init(json: JSONValue) throws(ProtocolError) {
    var r = try FieldReader(json, context: "control")
    kind = try r.string("kind")
    displayName = try r.optionalString("displayName") ?? kind
    let t = try r.string("type")
    guard let style = Style(rawValue: t) else {
      throw .badRequest("field \"type\" of control must be \"toggle\" or \"button\", got \"\(t)\"")
    }
    type = style
    configuration = try r.optionalObject("configuration") ?? [:]
    value = try r.optionalBool("value")
    valueText = try r.optionalString("valueText")
    symbol = try r.optionalString("symbol")
    tint = try r.optionalString("tint")
    hint = try r.optionalString("hint") ?? ""
    configured = try r.optionalBool("configured") ?? true
    available = try r.optionalBool("available") ?? true
    performing = try r.optionalBool("performing") ?? false
    reason = try r.optionalString("reason")
  }
}

/// One physical button: its key, whether a device carrying it is bound, its timing and
/// the control assigned to each gesture (the answer to "what does this button do now").
public struct ButtonStatus: Hashable, Sendable {
  /// The configured button name, e.g. `action`.
  public var name: String
  /// The evdev key code name, e.g. `KEY_PROG1`.
  public var key: String
  /// Device nodes currently bound for this button; empty when no device matches.
  public var devices: [String]
  public var holdThreshold: TimeSpan
  /// How soon after a short press's release a second key-down is a double press.
  public var doublePressWindow: TimeSpan
  /// How long a press lasts before it is a long hold.
  public var longHoldThreshold: TimeSpan
  /// The hold's control (`control` on the wire); nil when the hold is unassigned.
  public var control: ControlSnapshot?
  /// Whether the hold is momentary (on while held, off at the release).
  public var momentary: Bool
  /// The double press's control; nil when none is assigned.
  public var doublePress: ControlSnapshot?
  /// The long hold's control; nil when none is assigned.
  public var longHold: ControlSnapshot?
  /// The button's feedback outputs (its `feedback` list), without their patterns;
  /// `feedback` on the wire, left out when empty.
  public var feedback: [FeedbackOutput] = []

  public init(
    name: String, key: String, devices: [String], holdThreshold: TimeSpan,
    doublePressWindow: TimeSpan = ButtonConfig.defaultDoublePressWindow, longHoldThreshold: TimeSpan? = nil,
    control: ControlSnapshot?, momentary: Bool = false, doublePress: ControlSnapshot? = nil,
    longHold: ControlSnapshot? = nil
  ) {
    self.name = name
    self.key = key
    self.devices = devices
    self.holdThreshold = holdThreshold
    self.doublePressWindow = doublePressWindow
    self.longHoldThreshold = longHoldThreshold ?? ButtonConfig.defaultLongHoldThreshold(holdThreshold: holdThreshold)
    self.control = control
    self.momentary = momentary
    self.doublePress = doublePress
    self.longHold = longHold
  }

  /// True when at least one device carrying the key is open.
  public var bound: Bool { !devices.isEmpty }

  /// The control of one gesture (`control` for the hold).
  public func control(of gesture: Gesture) -> ControlSnapshot? {
    switch gesture {
    case .hold: control
    case .doublePress: doublePress
    case .longHold: longHold
    }
  }

  public var json: JSONValue {
    var b = ObjectBuilder()
    b.set("name", name)
    b.set("key", key)
    b.set("bound", bound)
    b.set("devices", strings: devices)
    b.set("holdThresholdMs", holdThreshold.milliseconds)
    b.set("doublePressWindowMs", doublePressWindow.milliseconds)
    b.set("longHoldThresholdMs", longHoldThreshold.milliseconds)
    b.set("control", control?.json ?? .null)
    b.set("momentary", momentary)
    b.set("doublePress", doublePress?.json ?? .null)
    b.set("longHold", longHold?.json ?? .null)
    if !feedback.isEmpty { b.set("feedback", .array(feedback.map(ButtonStatus.json(of:)))) }
    return b.value
  }

  /// `{"led":"LED_CAPSL","on":["held"],"indicator":false}`, `{"sysfs":"ACT",...}`,
  /// `{"sound":"SND_TONE","hz":1000,"device":"PC Speaker",...}` or
  /// `{"rumble":"FF_RUMBLE","strength":100,...}` (`device` left out for the button's own).
  static func json(of output: FeedbackOutput) -> JSONValue {
    var b = ObjectBuilder()
    switch output.light {
    case .inputLED(let code): b.set("led", LEDCodes.name(of: code) ?? String(code))
    case .sysfs(let name): b.set("sysfs", name)
    case .sound(let code, let hertz, let device):
      b.set("sound", SoundCodes.name(of: code))
      if code == SoundCodes.tone { b.set("hz", Int64(hertz)) }
      if let device = device.configured { b.set("device", device) }
    case .rumble(let strength, let device):
      b.set("rumble", RumbleEffect.name)
      b.set("strength", Int64(strength))
      if let device = device.configured { b.set("device", device) }
    }
    b.set("on", strings: output.moments.map(\.rawValue))
    b.set("indicator", output.indicator)
    return b.value
  }

  /// One feedback output, or nil for a kind of output this version does not know (none
  /// of `led`, `sound`, `rumble`, `sysfs`: a newer daemon's), which clients ignore.
  static func feedbackOutput(_ json: JSONValue) throws(ProtocolError) -> FeedbackOutput? {
    var r = try FieldReader(json, context: "feedback output")
    guard ["led", "sound", "rumble", "sysfs"].contains(where: { r.object[$0] != nil }) else { return nil }
    let light: FeedbackOutput.Light
    if let led = try r.optionalString("led") {
      guard let code = LEDCodes.code(named: led) ?? UInt16(led) else {
        throw .badRequest("unknown LED \"\(led)\" in a feedback output")
      }
      light = .inputLED(code: code)
    } else if let sound = try r.optionalString("sound") {
      guard let code = SoundCodes.code(named: sound) else {
        throw .badRequest("unknown sound \"\(sound)\" in a feedback output")
      }
      let device = try r.optionalString("device").map(FeedbackDevice.init(configured:)) ?? .button
      let hertz = try r.optionalInteger("hz").map { Int32(clamping: $0) } ?? SoundCodes.defaultHertz
      light = .sound(code: code, hertz: code == SoundCodes.tone ? hertz : 1, device: device)
    } else if try r.optionalString("rumble") != nil {
      let device = try r.optionalString("device").map(FeedbackDevice.init(configured:)) ?? .button
      let strength = try r.optionalInteger("strength").map { Int(clamping: $0) } ?? RumbleEffect.defaultStrength
      light = .rumble(strength: strength, device: device)
    } else {
      light = .sysfs(name: try r.string("sysfs"))
    }
    var moments: [FeedbackMoment] = []
    // A moment this version does not know (a newer daemon's) is left out, not an error.
    for name in try r.optionalStringArray("on") ?? [] {
      if let moment = FeedbackMoment(rawValue: name) { moments.append(moment) }
    }
    return FeedbackOutput(light: light, moments: moments, indicator: try r.optionalBool("indicator") ?? false)
  }

  /// Reads a button leniently: members an older daemon does not send take their defaults.
  public init(json: JSONValue) throws(ProtocolError) {
    var r = try FieldReader(json, context: "button")
    name = try r.string("name")
    key = try r.optionalString("key") ?? ""
    devices = try r.optionalStringArray("devices") ?? []
    holdThreshold = .milliseconds(try r.optionalInteger("holdThresholdMs") ?? 0)
    doublePressWindow =
      try r.optionalInteger("doublePressWindowMs").map { .milliseconds($0) } ?? ButtonConfig.defaultDoublePressWindow
    longHoldThreshold =
      try r.optionalInteger("longHoldThresholdMs").map { .milliseconds($0) }
      ?? ButtonConfig.defaultLongHoldThreshold(holdThreshold: holdThreshold)
    control = try r.raw("control").map { v throws(ProtocolError) in try ControlSnapshot(json: v) }
    momentary = try r.optionalBool("momentary") ?? false
    doublePress = try r.raw("doublePress").map { v throws(ProtocolError) in try ControlSnapshot(json: v) }
    longHold = try r.raw("longHold").map { v throws(ProtocolError) in try ControlSnapshot(json: v) }
    if let raw = r.raw("feedback"), case .array(let items) = raw {
      for item in items {
        if let output = try ButtonStatus.feedbackOutput(item) { feedback.append(output) }
      }
    }
  }
}

/// An input device the daemon watches for one or more buttons.
public struct DeviceSnapshot: Hashable, Sendable {
  /// e.g. `/dev/input/event3`.
  public var devnode: String
  /// The kernel's device name, e.g. `gpio-keys`.
  public var name: String
  public var phys: String?
  /// `vendor:product` in hexadecimal, e.g. `046d:c52b`.
  public var id: String?
  /// Names of the buttons this device carries.
  public var buttons: [String]
  /// True when the daemon holds an exclusive grab (`EVIOCGRAB`).
  public var grabbed: Bool

  public init(devnode: String, name: String, phys: String? = nil, id: String? = nil, buttons: [String], grabbed: Bool) {
    self.devnode = devnode
    self.name = name
    self.phys = phys
    self.id = id
    self.buttons = buttons
    self.grabbed = grabbed
  }

  /// Formats the vendor and product the way `lsusb` and the configuration's `match.id` do.
  public static func formatID(vendor: UInt16, product: UInt16) -> String {
    func hex4(_ v: UInt16) -> String {
      let s = String(v, radix: 16)
      return String(repeating: "0", count: 4 - s.count) + s
    }
    return "\(hex4(vendor)):\(hex4(product))"
  }

  public var json: JSONValue {
    var b = ObjectBuilder()
    b.set("devnode", devnode)
    b.set("name", name)
    b.set("phys", phys)
    b.set("id", id)
    b.set("buttons", strings: buttons)
    b.set("grabbed", grabbed)
    return b.value
  }

  public init(json: JSONValue) throws(ProtocolError) {
    var r = try FieldReader(json, context: "device")
    devnode = try r.string("devnode")
    name = try r.optionalString("name") ?? ""
    phys = try r.optionalString("phys")
    id = try r.optionalString("id")
    buttons = try r.optionalStringArray("buttons") ?? []
    grabbed = try r.optionalBool("grabbed") ?? false
  }
}

/// Decodes an array member element by element, naming the failing index.
func decodeArray<T>(
  _ values: [JSONValue], _ what: String, _ decode: (JSONValue) throws(ProtocolError) -> T
) throws(ProtocolError) -> [T] {
  var out: [T] = []
  out.reserveCapacity(values.count)
  for (i, v) in values.enumerated() {
    do {
      out.append(try decode(v))
    } catch {
      throw .badRequest("\(what)[\(i)]: \(error.message)")
    }
  }
  return out
}
