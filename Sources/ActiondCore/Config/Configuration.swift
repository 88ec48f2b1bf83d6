// SPDX-License-Identifier: Apache-2.0
/// The daemon's validated configuration: buttons, control definitions, assignments,
/// socket and paths. Produced by `ConfigurationLoader.load(main:dropIns:)`; every value
/// has been checked, every default applied, so consumers need no further validation.
/// The format is documented in docs/configuration.md.
public struct Configuration: Hashable, Sendable {
  public var socket: SocketSettings
  /// Where the state store lives (default `/var/lib/actiond`).
  public var stateDirectory: String
  /// Where drop-in control definitions are read from (default `/etc/actiond/controls.d`).
  public var controlsDirectory: String
  /// Log threshold; the command line's `--log-level` overrides it.
  public var logLevel: LogLevel
  /// Physical buttons, in file order; names are unique.
  public var buttons: [ButtonConfig]
  /// Control definitions from the main file, then the drop-ins (sorted by file name); kinds are unique.
  public var controls: [ControlDefinition]
  /// What each button's gestures perform, by button name, then gesture. A button without
  /// an entry is unassigned; a gesture without an entry does nothing (a button whose only
  /// entry is a `doublePress` has no hold). Entries are never empty. The state store's
  /// assignments override these at run time, gesture by gesture.
  public var assignments: [String: [Gesture: GestureAssignment]]
  /// Each button's feedback outputs (its `feedback` list), by button name; a button
  /// without any has no entry. Kept beside the buttons rather than in ``ButtonConfig`` so
  /// a change of feedback alone leaves a press in progress and the device binding alone
  /// (``unchangedButtons(since:)`` compares buttons only).
  public var feedback: [String: [FeedbackOutput]] = [:]

  /// Default paths, used when the configuration gives none.
  public static let defaultMainFile = "/etc/actiond/actiond.json"
  public static let defaultStateDirectory = "/var/lib/actiond"
  public static let defaultControlsDirectory = "/etc/actiond/controls.d"

  public init(
    socket: SocketSettings = SocketSettings(), stateDirectory: String = Configuration.defaultStateDirectory,
    controlsDirectory: String = Configuration.defaultControlsDirectory, logLevel: LogLevel = .info,
    buttons: [ButtonConfig] = [], controls: [ControlDefinition] = [],
    assignments: [String: [Gesture: GestureAssignment]] = [:]
  ) {
    self.socket = socket
    self.stateDirectory = stateDirectory
    self.controlsDirectory = controlsDirectory
    self.logLevel = logLevel
    self.buttons = buttons
    self.controls = controls
    self.assignments = assignments
  }

  /// The definition of a kind.
  public func control(kind: String) -> ControlDefinition? { controls.first { $0.kind == kind } }

  /// The button with a name.
  public func button(named name: String) -> ButtonConfig? { buttons.first { $0.name == name } }

  /// How many gestures are assigned, over all buttons (a button with a hold and a double
  /// press counts twice): what `--check-config` reports.
  public var assignmentCount: Int { assignments.values.reduce(0) { $0 + $1.count } }

  /// The configuration file's assignment of one gesture of a button.
  public func assignment(of button: String, gesture: Gesture) -> GestureAssignment? {
    assignments[button]?[gesture]
  }
}

/// The control socket: where it is and who may do what.
///
/// Anyone who can connect (file mode and `group`) may read: `status`, `list`, `get`,
/// `watch`, `devices`. Changing things (`perform`, `set`, `assign`, `press`, `reload`)
/// needs root, the daemon's own user, a member of `controlGroup`, or a uid/user in
/// `controlUsers`, checked with `SO_PEERCRED`.
public struct SocketSettings: Hashable, Sendable {
  /// Default `/run/actiond/actiond.sock`.
  public var path: String
  /// Group owning the socket file; nil = the daemon's group.
  public var group: AccountReference?
  /// Permission bits of the socket file, default `0o660`.
  public var mode: UInt32
  /// Members of this group may change things; nil = nobody extra.
  public var controlGroup: AccountReference?
  /// These users (names or uids) may change things.
  public var controlUsers: [AccountReference]
  /// Connections beyond this are refused (default 64, valid 1...1024).
  public var maxClients: Int

  public static let defaultPath = "/run/actiond/actiond.sock"
  public static let defaultMode: UInt32 = 0o660
  public static let defaultMaxClients = 64
  public static let maxClientsRange = 1...1024

  public init(
    path: String = SocketSettings.defaultPath, group: AccountReference? = nil,
    mode: UInt32 = SocketSettings.defaultMode,
    controlGroup: AccountReference? = nil, controlUsers: [AccountReference] = [],
    maxClients: Int = SocketSettings.defaultMaxClients
  ) {
    self.path = path
    self.group = group
    self.mode = mode
    self.controlGroup = controlGroup
    self.controlUsers = controlUsers
    self.maxClients = maxClients
  }
}

/// A physical button: one key code on the devices a `DeviceMatch` selects.
public struct ButtonConfig: Hashable, Sendable {
  /// Unique name (`action`): letters, digits, `-`, `_`, `.`, starting with a letter or digit, ≤ 64.
  /// It is `ACTIOND_BUTTON` for intents and the name clients use.
  public var name: String
  /// The evdev key code (`EV_KEY`), 1...`KeyCodes.maximum`.
  public var keyCode: UInt16
  /// The key's canonical name (`KEY_PROG1`), or `KEY_0x2f0`-style hex when the header names no key.
  public var keyName: String
  public var match: DeviceMatch
  /// How long the key must stay down for a hold (default 600 ms, valid 100...10000 ms).
  public var holdThreshold: TimeSpan
  /// Chatter suppression window (default 0 = off, valid 0...200 ms).
  public var debounce: TimeSpan
  /// Grab the device (`EVIOCGRAB`) so no other program sees its keys. Off by default:
  /// grabbing a keyboard for one key takes all its keys away from the desktop.
  public var grab: Bool
  /// A second key-down this soon after a short press's release is a double press
  /// (default 300 ms, valid 100...1000 ms, longer than `debounce`). Only buttons with a
  /// `doublePress` assignment wait for it.
  public var doublePressWindow: TimeSpan
  /// A press lasting this long is a long hold (valid 200...60000 ms, longer than
  /// `holdThreshold`; default ``defaultLongHoldThreshold(holdThreshold:)``). Only
  /// buttons with a `longHold` assignment act on it.
  public var longHoldThreshold: TimeSpan

  // The recognizer owns the timing rules; the configuration only spells them in milliseconds.
  public static let defaultHoldThreshold = RecognizerSettings.defaultHoldThreshold
  public static let holdThresholdRangeMs: ClosedRange<Int64> =
    RecognizerSettings.holdThresholdRange.lowerBound
    .milliseconds...RecognizerSettings.holdThresholdRange.upperBound
    .milliseconds
  public static let defaultDebounce = RecognizerSettings.defaultDebounce
  public static let debounceRangeMs: ClosedRange<Int64> =
    RecognizerSettings.debounceRange.lowerBound.milliseconds...RecognizerSettings.debounceRange.upperBound.milliseconds
  public static let defaultDoublePressWindow = RecognizerSettings.defaultDoublePressWindow
  public static let doublePressWindowRange = RecognizerSettings.doublePressWindowRange
  public static let doublePressWindowRangeMs: ClosedRange<Int64> =
    doublePressWindowRange.lowerBound.milliseconds...doublePressWindowRange.upperBound.milliseconds
  public static let longHoldThresholdRange = RecognizerSettings.longHoldThresholdRange
  public static let longHoldThresholdRangeMs: ClosedRange<Int64> =
    longHoldThresholdRange.lowerBound.milliseconds...longHoldThresholdRange.upperBound.milliseconds

  /// The long-hold threshold of a button that sets none (the recognizer's rule: 3 s, and
  /// at least 1 s after the hold threshold).
  public static func defaultLongHoldThreshold(holdThreshold: TimeSpan) -> TimeSpan {
    RecognizerSettings.defaultLongHoldThreshold(holdThreshold: holdThreshold)
  }

  public init(
    name: String, keyCode: UInt16, keyName: String? = nil, match: DeviceMatch = .default,
    holdThreshold: TimeSpan = ButtonConfig.defaultHoldThreshold, debounce: TimeSpan = ButtonConfig.defaultDebounce,
    grab: Bool = false, doublePressWindow: TimeSpan = ButtonConfig.defaultDoublePressWindow,
    longHoldThreshold: TimeSpan? = nil
  ) {
    self.name = name
    self.keyCode = keyCode
    self.keyName = keyName ?? KeyCodes.name(of: keyCode) ?? "KEY_0x" + String(keyCode, radix: 16)
    self.match = match
    self.holdThreshold = holdThreshold
    self.debounce = debounce
    self.grab = grab
    self.doublePressWindow = doublePressWindow
    // The default follows the hold threshold given here (a later change of
    // `holdThreshold` does not move it: set both).
    self.longHoldThreshold = longHoldThreshold ?? ButtonConfig.defaultLongHoldThreshold(holdThreshold: holdThreshold)
  }

  /// The press recognizer's settings for this button. A loaded configuration never throws
  /// here (the loader checked the same ranges); a hand-built `ButtonConfig` may.
  public func recognizerSettings() throws(RecognizerSettings.Invalid) -> RecognizerSettings {
    try RecognizerSettings(
      holdThreshold: holdThreshold, debounce: debounce, doublePressWindow: doublePressWindow,
      longHoldThreshold: longHoldThreshold)
  }

  /// Whether `name` is a valid button name.
  public static func isValidName(_ name: String) -> Bool {
    let u = Array(name.utf8)
    guard let first = u.first, u.count <= 64, first.isASCIILetter || first.isASCIIDigit else { return false }
    return u.allSatisfy {
      $0.isASCIILetter || $0.isASCIIDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
        || $0 == UInt8(ascii: ".")
    }
  }
}

extension Configuration {
  /// The names of the buttons a reload from `old` to this configuration leaves exactly as
  /// they were (same name, key, device match, timing: hold threshold, debounce,
  /// double-press window and long-hold threshold, grab), wherever they moved in the list.
  /// Both the engine (recognizers) and the input layer (device bindings) carry these over,
  /// by this one rule, so a press or hold in progress on an untouched button survives a
  /// reload. A renamed button is a new button: its name is its identity.
  public func unchangedButtons(since old: Configuration) -> Set<String> {
    Set(buttons.filter { old.button(named: $0.name) == $0 }.map(\.name))
  }
}
