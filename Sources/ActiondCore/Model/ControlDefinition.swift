// SPDX-License-Identifier: Apache-2.0
/// A pair of values, one for each state of a toggle: `valueText`, `symbol`, `actionHint`.
///
/// For a button (which has no state) both members hold the same value.
public struct OnOff<Value: Hashable & Sendable>: Hashable, Sendable {
  /// The value shown while the toggle is on.
  public var on: Value
  /// The value shown while the toggle is off.
  public var off: Value

  public init(on: Value, off: Value) {
    self.on = on
    self.off = off
  }

  /// The same value for both states (a button, or a toggle that does not distinguish).
  public init(both value: Value) {
    self.on = value
    self.off = value
  }

  /// The member for a state: `on` when `isOn`, otherwise `off`.
  public subscript(_ isOn: Bool) -> Value { isOn ? on : off }
}

/// What kind of control a definition describes (WidgetKit's `ControlWidgetButton` / `ControlWidgetToggle`).
public enum ControlType: String, Hashable, Sendable, CaseIterable {
  /// A one-shot action: a hold performs the intent; there is no value.
  case button
  /// A boolean state: a hold requests `!current` from the intent, then re-reads the value.
  case toggle
}

/// A reference to a local user or group: by name, or by numeric id.
public enum AccountReference: Hashable, Sendable, CustomStringConvertible {
  case name(String)
  case id(UInt32)

  public var description: String {
    switch self {
    case .name(let n): return n
    case .id(let i): return String(i)
    }
  }
}

/// A child process to run (an exec intent or an exec value provider), as data.
///
/// The argv is never given to a shell. Its elements, `workingDirectory` and the
/// `environment` values may contain `${name}` placeholders for parameters of the control;
/// see `ParameterSubstitution`. Running it is the Linux side's job.
public struct ExecSpec: Hashable, Sendable {
  /// The program and its arguments; `argv[0]` is an absolute path or a name looked up in `PATH`.
  public var argv: [String]
  /// After this long the whole process group gets SIGTERM, then SIGKILL after a grace period.
  public var timeout: TimeSpan
  /// Absolute directory to run in; nil = the daemon's own (`/`).
  public var workingDirectory: String?
  /// An unprivileged account to run as; nil = the daemon's own.
  public var user: AccountReference?
  /// Extra environment variables (never `ACTIOND_*`, which the daemon sets).
  public var environment: [String: String]

  /// The default intent timeout: 10 s.
  public static let defaultTimeout = TimeSpan.seconds(10)

  public init(
    argv: [String], timeout: TimeSpan = ExecSpec.defaultTimeout, workingDirectory: String? = nil,
    user: AccountReference? = nil, environment: [String: String] = [:]
  ) {
    self.argv = argv
    self.timeout = timeout
    self.workingDirectory = workingDirectory
    self.user = user
    self.environment = environment
  }
}

/// What a hold performs (App Intents' `perform()`), as data. Running it is the "Controls" issue.
public enum IntentSpec: Hashable, Sendable {
  /// Run a program (never through a shell). For toggles `ACTIOND_VALUE` is the requested value, 1 or 0.
  case exec(ExecSpec)
  /// Write `on` or `off` (the requested value) to a file, e.g. `/sys/class/leds/<led>/brightness`.
  /// A button writes `on`. `path` may contain `${name}` placeholders.
  case write(path: String, on: String, off: String)
  /// No outside effect: only the daemon's store changes (toggles with a `store` value only).
  case state
  /// A connected client application performs it (socket protocol).
  case provider

  /// The intent's `type` as written in the configuration.
  public var typeName: String {
    switch self {
    case .exec: return "exec"
    case .write: return "write"
    case .state: return "state"
    case .provider: return "provider"
    }
  }
}

/// Where a toggle's current value comes from (`ControlValueProvider`), as data.
public enum ValueProviderSpec: Hashable, Sendable {
  /// The daemon's state store; `initial` is the value before anything was stored.
  case store(initial: Bool)
  /// Run a program: exit status 0 = on, 1 = off, anything else or a timeout = unavailable.
  case exec(ExecSpec)
  /// Read a file and interpret it with `interpretFile(_:on:)`. `path` may contain `${name}` placeholders.
  case file(path: String, on: String?)
  /// Ask the connected client application.
  case provider

  /// The provider's `type` as written in the configuration.
  public var typeName: String {
    switch self {
    case .store: return "store"
    case .exec: return "exec"
    case .file: return "file"
    case .provider: return "provider"
    }
  }

  /// How a `file` value provider reads its file: surrounding white space is trimmed; the
  /// text equal to `on` means on; otherwise a decimal integer means on when it is > 0
  /// (sysfs `brightness` reads 255 while `on` is "1"); anything else is unavailable, never a guess.
  public static func interpretFile(_ contents: String, on: String?) -> ControlValue {
    let trimmed = contents.trimmingASCIIWhitespace()
    if let on, trimmed == on.trimmingASCIIWhitespace() { return .on }
    if let n = Int64(trimmed) { return n > 0 ? .on : .off }
    if trimmed.isEmpty { return .unavailable(reason: "the file is empty") }
    let shown = trimmed.count > 40 ? String(trimmed.prefix(40)) + "…" : trimmed
    return .unavailable(reason: "unexpected content \(JSONEncoding.quoted(shown))")
  }

  /// How an `exec` value provider's exit status is read: 0 = on, 1 = off, anything else unavailable.
  public static func interpretExitStatus(_ status: Int32) -> ControlValue {
    switch status {
    case 0: return .on
    case 1: return .off
    default: return .unavailable(reason: "the value command exited with status \(status)")
    }
  }
}

/// The type of a control parameter.
public enum ParameterType: String, Hashable, Sendable, CaseIterable {
  case string, integer, boolean, choice
}

/// A parameter a configurable control declares (`ControlConfigurationIntent` parameter).
public struct ParameterSpec: Hashable, Sendable {
  /// Lower-case identifier (`led`, `unit_name`): `[a-z][a-z0-9_]*`, at most 64 characters,
  /// so `ACTIOND_PARAM_<NAME>` is unambiguous.
  public var name: String
  public var type: ParameterType
  /// The allowed values of a `choice` parameter (empty for other types).
  public var choices: [String]
  /// The value used when an assignment gives none (unless the control `requiresConfiguration`).
  public var defaultValue: ParameterValue?
  /// A required parameter must have a value before the instance can be performed.
  public var required: Bool
  /// Human-readable name for clients; nil = use `name`.
  public var title: String?
  public var description: String?
  /// Inclusive bounds of an `integer` parameter.
  public var minimum: Int64?
  public var maximum: Int64?

  public init(
    name: String, type: ParameterType, choices: [String] = [], defaultValue: ParameterValue? = nil,
    required: Bool = false, title: String? = nil, description: String? = nil, minimum: Int64? = nil,
    maximum: Int64? = nil
  ) {
    self.name = name
    self.type = type
    self.choices = choices
    self.defaultValue = defaultValue
    self.required = required
    self.title = title
    self.description = description
    self.minimum = minimum
    self.maximum = maximum
  }

  /// The environment variable an exec intent gets for this parameter: `ACTIOND_PARAM_LED`.
  public var environmentName: String { ParameterSpec.environmentName(for: name) }

  /// `ACTIOND_PARAM_` followed by the upper-cased parameter name.
  public static func environmentName(for name: String) -> String { "ACTIOND_PARAM_" + name.uppercased() }

  /// Whether `name` is a valid parameter name: `[a-z][a-z0-9_]*`, 1...64 characters.
  public static func isValidName(_ name: String) -> Bool {
    let u = Array(name.utf8)
    guard let first = u.first, u.count <= 64, first >= 0x61 && first <= 0x7A else { return false }
    return u.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || $0.isASCIIDigit || $0 == UInt8(ascii: "_") }
  }

  /// Checks a value against this parameter's type, choices and bounds; nil when it fits,
  /// otherwise the message ("must be one of red, green").
  public func check(_ value: ParameterValue) -> String? {
    switch (type, value) {
    case (.string, .string(let s)):
      if s.utf8.contains(0) { return "must not contain a NUL character" }
      return nil
    case (.choice, .string(let s)):
      return choices.contains(s)
        ? nil : "must be one of \(choices.map { JSONEncoding.quoted($0) }.joined(separator: ", "))"
    case (.integer, .integer(let i)):
      if let minimum, i < minimum { return "must be at least \(minimum)" }
      if let maximum, i > maximum { return "must be at most \(maximum)" }
      return nil
    case (.boolean, .boolean):
      return nil
    default:
      return "must be \(type == .integer ? "an integer" : type == .boolean ? "a boolean" : "a string")"
    }
  }
}

/// The value of one parameter of a configured control instance.
public enum ParameterValue: Hashable, Sendable, CustomStringConvertible {
  case string(String)
  case integer(Int64)
  case boolean(Bool)

  /// The text an exec intent sees in `ACTIOND_PARAM_<NAME>` and in `${name}`:
  /// strings as they are, integers in decimal, booleans `true`/`false`.
  public var text: String {
    switch self {
    case .string(let s): return s
    case .integer(let i): return String(i)
    case .boolean(let b): return b ? "true" : "false"
    }
  }

  public var description: String { text }

  /// The value as JSON (for the socket protocol and the state store).
  public var json: JSONValue {
    switch self {
    case .string(let s): return .string(s)
    case .integer(let i): return .integer(i)
    case .boolean(let b): return .bool(b)
    }
  }

  /// The value of a JSON scalar, or nil for anything else (null, arrays, objects, fractions).
  public init?(json: JSONValue) {
    switch json {
    case .string(let s): self = .string(s)
    case .bool(let b): self = .boolean(b)
    case .integer(let i): self = .integer(i)
    case .double(let d):
      guard let i = Int64(exactly: d) else { return nil }
      self = .integer(i)
    default: return nil
    }
  }
}

/// A control definition (WidgetKit's `ControlWidget` with its configuration), as data.
///
/// Definitions come from the main configuration file's `controls` and from the drop-in
/// directory. They are validated by `ConfigurationLoader`; code that builds one by hand
/// gets the same defaults through `init`.
public struct ControlDefinition: Hashable, Sendable {
  /// Unique reverse-DNS identifier, e.g. `org.example.timer`.
  public var kind: String
  public var type: ControlType
  /// What lists and hints show ("Work Timer").
  public var displayName: String
  /// A longer title for clients; nil = `displayName`.
  public var title: String?
  public var description: String?
  /// The value label per state; default "On"/"Off". Buttons have none (nil).
  public var valueText: OnOff<String>?
  /// Icon names per state (clients choose how to render them); nil = none.
  public var symbol: OnOff<String>?
  /// A colour name (`orange`) or `#rrggbb`; nil = the client's default.
  public var tint: String?
  /// The verb shown after "Hold to": `on` while the toggle is on, `off` while it is off.
  /// Toggles default to "Turn Off"/"Turn On", buttons to the display name.
  public var actionHint: OnOff<String>
  public var intent: IntentSpec
  /// Where a toggle's value comes from; nil for buttons. Toggles default to `.store(initial: false)`.
  public var value: ValueProviderSpec?
  /// What lists show before a toggle's value is known (`ControlValueProvider.previewValue`).
  public var previewValue: Bool
  public var parameters: [ParameterSpec]
  /// When true, every required parameter must be given by the assignment (defaults are
  /// only suggestions), like `promptsForUserConfiguration()`.
  public var requiresConfiguration: Bool
  /// The file the definition came from (`actiond.json`, `controls.d/timer.json`), for messages.
  public var source: String

  /// The default value texts of a toggle.
  public static let defaultValueText = OnOff(on: "On", off: "Off")
  /// The default verbs of a toggle: while on, a hold turns it off.
  public static let defaultToggleActionHint = OnOff(on: "Turn Off", off: "Turn On")

  /// A definition with the configuration's defaults applied: toggles get "On"/"Off",
  /// "Turn Off"/"Turn On" and a `store` value; buttons get their display name as the verb,
  /// and `valueText` and `value` are ignored for them (a button has no state).
  public init(
    kind: String, type: ControlType, displayName: String, title: String? = nil, description: String? = nil,
    valueText: OnOff<String>? = nil, symbol: OnOff<String>? = nil, tint: String? = nil,
    actionHint: OnOff<String>? = nil, intent: IntentSpec, value: ValueProviderSpec? = nil,
    previewValue: Bool = false, parameters: [ParameterSpec] = [], requiresConfiguration: Bool = false,
    source: String = ""
  ) {
    self.kind = kind
    self.type = type
    self.displayName = displayName
    self.title = title
    self.description = description
    self.symbol = symbol
    self.tint = tint
    self.intent = intent
    self.previewValue = previewValue
    self.parameters = parameters
    self.requiresConfiguration = requiresConfiguration
    self.source = source
    switch type {
    case .button:
      self.valueText = nil
      self.actionHint = actionHint ?? OnOff(both: displayName)
      self.value = nil
    case .toggle:
      self.valueText = valueText ?? ControlDefinition.defaultValueText
      self.actionHint = actionHint ?? ControlDefinition.defaultToggleActionHint
      self.value = value ?? .store(initial: false)
    }
  }

  /// The parameter with this name, if declared.
  public func parameter(named name: String) -> ParameterSpec? {
    parameters.first { $0.name == name }
  }

  /// Whether `kind` is a reverse-DNS identifier: at least two dot-separated labels of
  /// letters, digits, `-` and `_`, each starting with a letter or digit; at most 255 characters.
  public static func isValidKind(_ kind: String) -> Bool {
    guard !kind.isEmpty, kind.utf8.count <= 255 else { return false }
    let labels = kind.split(separator: ".", omittingEmptySubsequences: false)
    guard labels.count >= 2 else { return false }
    return labels.allSatisfy { label in
      guard let first = label.utf8.first, first.isASCIILetter || first.isASCIIDigit else { return false }
      return label.utf8.allSatisfy {
        $0.isASCIILetter || $0.isASCIIDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
      }
    }
  }
}

extension String {
  /// The string without leading and trailing ASCII white space (space, tab, CR, LF, VT, FF).
  func trimmingASCIIWhitespace() -> String {
    let isSpace: (UInt8) -> Bool = { $0 == 0x20 || ($0 >= 0x09 && $0 <= 0x0D) }
    let u = Array(utf8)
    var start = 0
    var end = u.count
    while start < end && isSpace(u[start]) { start += 1 }
    while end > start && isSpace(u[end - 1]) { end -= 1 }
    return String(decoding: u[start..<end], as: UTF8.self)
  }
}
