// SPDX-License-Identifier: Apache-2.0
/// One button the daemon listens to: an evdev key on whichever input device matches.
///
/// The match rule is a closure so the input layer does not depend on how the
/// configuration expresses it (tags, properties, name globs, ...): the daemon passes
/// `{ match.matches($0) }`.
public struct ButtonBinding {
  /// The button's name from the configuration (`action`): its identity in every
  /// ``InputEvent`` and ``InputSource`` call, as everywhere above the input layer.
  public var name: String
  /// The evdev key code (`KEY_PROG1` = 148, `BTN_0` = 256, ...).
  public var keyCode: UInt16
  /// Whether the device carrying this button is grabbed exclusively (`EVIOCGRAB`).
  ///
  /// A grab hides *every* event of the device from everyone else: grabbing a whole
  /// keyboard for one key blocks typing on it. Meant for dedicated buttons.
  public var grab: Bool
  /// Whether a device carries this button. Called with every event device udev knows.
  public var matches: (InputDeviceInfo) -> Bool

  public init(name: String, keyCode: UInt16, grab: Bool = false, matches: @escaping (InputDeviceInfo) -> Bool) {
    self.name = name
    self.keyCode = keyCode
    self.grab = grab
    self.matches = matches
  }
}

/// Why a device stopped being read.
public enum DeviceUnbindReason: Hashable, Sendable, CustomStringConvertible {
  /// udev reported the device removed.
  case removed
  /// Reading failed: `ENODEV` when unplugged or revoked, another errno otherwise.
  case readFailed(String)
  /// It no longer carries any bound button (a `change` event or a new configuration).
  case noLongerMatched
  /// The input source shut down.
  case shutdown

  public var description: String {
    switch self {
    case .removed: "removed"
    case .readFailed(let reason): "read failed: \(reason)"
    case .noLongerMatched: "no longer matched by any button"
    case .shutdown: "shutting down"
    }
  }

  /// The stable code announced as `device-removed`'s `reason` (the detail, such as the
  /// errno of a failed read, goes to the log only).
  public var code: String {
    switch self {
    case .removed: "removed"
    case .readFailed: "read-failed"
    case .noLongerMatched: "no-longer-matched"
    case .shutdown: "shutdown"
    }
  }

  /// Every ``code``, as docs/protocol.md's table lists them.
  public static let codes = ["removed", "read-failed", "no-longer-matched", "shutdown"]
}

/// A device bound to buttons, as the input source last reported it with
/// ``InputEvent/deviceBound(_:readOnly:)``.
public struct BoundInputDevice: Hashable, Sendable {
  /// The device as it was when it was reported bound.
  public var info: InputDeviceInfo
  /// The names of the buttons it serves, in the order of the binding list (the
  /// configuration's) when it was reported.
  public var buttons: [String]
  /// Whether it is grabbed exclusively.
  public var grabbed: Bool

  public init(info: InputDeviceInfo, buttons: [String], grabbed: Bool) {
    self.info = info
    self.buttons = buttons
    self.grabbed = grabbed
  }
}

/// What the input layer reports. A button is named by its binding's name
/// (``ButtonBinding/name``), in the binding list last given to ``InputSource/start(_:)`` or
/// ``InputSource/reconfigure(_:keeping:)``.
public enum InputEvent {
  /// A device was opened for (or changed its set of, or the grab of) bound buttons.
  /// `readOnly`: it could be opened for reading only (its LEDs cannot be written).
  case deviceBound(BoundInputDevice, readOnly: Bool)
  /// A device was closed; its buttons have already been reported ``lost(button:at:)``.
  /// The device is as it was last reported bound (what `device-removed` repeats).
  case deviceUnbound(BoundInputDevice, reason: DeviceUnbindReason)
  /// A button is now read from `device`; `isDown` is the key's state at that moment
  /// (a key already down is not a press).
  case appeared(button: String, device: InputDeviceInfo, isDown: Bool, at: MonotonicInstant)
  /// An EV_KEY event of the button's key `code`: value 1 press, 0 release, 2 autorepeat,
  /// stamped by the kernel on CLOCK_MONOTONIC.
  case key(button: String, code: UInt16, value: Int32, at: MonotonicInstant)
  /// The kernel dropped events (`SYN_DROPPED`); after resynchronising, the key is
  /// `isDown`. Events lost in between are not guessed.
  case resync(button: String, isDown: Bool, at: MonotonicInstant)
  /// The kernel released the button's key itself, in a frame ended by `SYN_REPORT` value 1:
  /// the device is going away (unplug; ``lost(button:at:)`` follows) or was reset. Nothing
  /// was dropped and the release is not the user's: a press in progress is `device-lost`.
  case releasedByKernel(button: String, at: MonotonicInstant)
  /// The button's device went away or stopped matching: a hold in progress is cancelled.
  case lost(button: String, at: MonotonicInstant)
  /// A device matches the button but does not have its key: the binding is refused
  /// for that device (reported once per device).
  case refused(button: String, device: InputDeviceInfo, reason: String)
  /// A further device matches a button that is already bound elsewhere; it is ignored
  /// while the first one stays (reported once per device).
  case ignoredExtraMatch(button: String, device: InputDeviceInfo, boundTo: InputDeviceInfo)
  /// A matching device could not be opened or grabbed (reported once until udev
  /// reports a change of that device).
  case deviceFailed(InputDeviceInfo, reason: String)
  /// Device discovery had a problem (e.g. the udev monitor overflowed and devices
  /// were enumerated again).
  case discoveryProblem(String)
}

/// Where button events come from: real devices (`InputManager` in ActiondLinux) or a
/// recording fake (``RecordingInputSource``) for engine and daemon tests.
///
/// All calls and events happen on the daemon's one loop thread.
public protocol InputSource: AnyObject {
  /// Receives every ``InputEvent``. Set before ``start(_:)``.
  var onEvent: (InputEvent) -> Void { get set }
  /// Discovers devices and binds the buttons that have one; the others wait quietly.
  func start(_ bindings: [ButtonBinding]) throws
  /// Replaces the binding list (configuration reload). `unchanged` names the buttons
  /// whose configuration is identical (`Configuration.unchangedButtons(since:)`),
  /// wherever they moved in the list: they stay on their device, silently. Every other
  /// bound button reports ``InputEvent/appeared(button:device:isDown:at:)``. Devices that
  /// stay bound stay open.
  func reconfigure(_ bindings: [ButtonBinding], keeping unchanged: Set<String>)
  /// Reads everything pending on the named button's device now, delivering its events
  /// before returning: a hold deadline calls this first, so a release stamped before the
  /// deadline is seen even when it was not read yet. A name without a device: nothing.
  func drain(button: String)
  /// Ungrabs and closes every device and stops following udev.
  func shutdown()
  /// The device the named button is bound to, or nil while it waits for one (or no
  /// binding has that name).
  func device(forButton button: String) -> InputDeviceInfo?
  /// Every device bound now, as last reported with
  /// ``InputEvent/deviceBound(_:readOnly:)``, sorted by devnode: the one
  /// record of bound devices (`actionctl devices` and the status line read it here).
  var boundDevices: [BoundInputDevice] { get }
}

extension InputSource {
  /// Replaces the binding list keeping no button's binding: every bound button reports
  /// ``InputEvent/appeared(button:device:isDown:at:)`` again.
  public func reconfigure(_ bindings: [ButtonBinding]) { reconfigure(bindings, keeping: []) }
}

extension ButtonBinding {
  /// The binding of a configured button: its key, grab flag and device match.
  public init(_ button: ButtonConfig) {
    let match = button.match
    self.init(name: button.name, keyCode: button.keyCode, grab: button.grab, matches: { match.matches($0) })
  }
}
