// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CActiondShim
import Glibc

/// Why a feedback light could not be written (for the log line; feedback never fails a
/// press or an intent).
public struct FeedbackLightError: Error, CustomStringConvertible, Sendable, Equatable {
  public var description: String
  public init(_ description: String) { self.description = description }
}

/// One light a feedback output drives. It is taken over at the first ``set(_:)``, saving
/// what it showed, and given back with ``release()``, restoring that.
///
/// Both return whether they wrote to the light: only a write that went through shows that
/// a failing light works again (a release of a light never taken writes nothing).
public protocol FeedbackLight: AnyObject {
  /// What logs call it: `/sys/class/leds/ACT`, `LED_CAPSL of button action's device`.
  var label: String { get }
  /// Shows on or off, taking the light first when it is not taken yet; false when there is
  /// nothing to write to (an `led` output while its button has no device).
  @discardableResult func set(_ on: Bool) throws(FeedbackLightError) -> Bool
  /// Restores what the light showed before it was taken; nothing (false) when it is not
  /// taken, or its device went away with it.
  @discardableResult func release() throws(FeedbackLightError) -> Bool
  /// A press that may show a moment at its threshold starts: a light whose taking can
  /// block takes itself now, still showing what it showed, so that the threshold's first
  /// write does not wait (a sysfs LED leaving its trigger waits for an RCU grace period,
  /// 10–30 ms). True when it took itself; ``release()`` gives it back as usual.
  @discardableResult func prepare() throws(FeedbackLightError) -> Bool
  /// Whether `write` would be one quick write that never waits for the kernel: a taken
  /// LED's brightness, an `EV_LED`, a tone. False when it would take a sysfs LED from its
  /// trigger or give it back to one, or open a device: the daemon makes the quick ones
  /// right before a command's spawn and the others after it (``FeedbackDriver/writeQuick()``).
  func isQuick(_ write: FeedbackScheduler.Write) -> Bool
  /// The output was configured, or its button's device appeared: a beeper or motor checks
  /// its device and uploads its effect now (an LED needs nothing: it is taken at its first
  /// write).
  func bind() throws(FeedbackLightError)
  /// The output goes (a reload replaced it, the daemon stops), after its release: an
  /// uploaded effect is removed, a device opened for it closed.
  func unbind()
}

extension FeedbackLight {
  /// Taking costs nothing worth moving (an `EV_LED` write, a beeper): nothing is done early.
  @discardableResult public func prepare() throws(FeedbackLightError) -> Bool { false }
  /// An `EV_LED` or `EV_SND` write on a descriptor already open: one system call.
  public func isQuick(_ write: FeedbackScheduler.Write) -> Bool { true }
  public func bind() throws(FeedbackLightError) {}
  public func unbind() {}
}

/// Makes the light of each configured feedback output.
public protocol FeedbackLightFactory: AnyObject {
  /// The light of `output`, an output of the button named `button`.
  func light(for output: FeedbackOutput, button: String) -> any FeedbackLight
}

/// The LEDs of the input device a button is bound to, written as `EV_LED` through the
/// evdev descriptor the input layer holds. ``InputManager`` is the real one.
public protocol ButtonDeviceLEDs: AnyObject {
  /// Which device the named button is bound to now (its syspath); nil while it waits for one.
  func ledDevice(forButton button: String) -> String?
  /// Whether LED `code` of the open device `device` (a syspath) is lit (`EVIOCGLED`).
  func isLEDOn(device: String, code: UInt16) throws(SystemCallError) -> Bool
  /// Sets LED `code` of the open device `device` (`EV_LED` and `SYN_REPORT` in one write).
  func setLED(device: String, code: UInt16, on: Bool) throws(SystemCallError)
  /// Whether `device` is still open (a device that went away took its LED with it).
  func isOpen(device: String) -> Bool
  /// The descriptor the input layer holds for `device` while it is open: a beeper or a
  /// rumble on the button's own device writes (and uploads its effect) there.
  func descriptor(device: String) -> Int32?
}

/// The real lights: LED class devices under `ledsDirectory`, the LEDs of the buttons' own
/// input devices through `inputLEDs` (nil: the input source has none, every `led` output
/// then fails its writes, logged once), and beepers and rumble motors through `evdev` on
/// the buttons' own devices or the ones the outputs name.
public final class LinuxFeedbackLights: FeedbackLightFactory {
  public let ledsDirectory: String
  private weak var inputLEDs: (any ButtonDeviceLEDs)?
  private let evdev: any FeedbackEvdev

  public init(
    ledsDirectory: String = ConfigurationLoader.ledsDirectory, inputLEDs: (any ButtonDeviceLEDs)?,
    evdev: any FeedbackEvdev = LinuxFeedbackEvdev()
  ) {
    self.ledsDirectory = ledsDirectory
    self.inputLEDs = inputLEDs
    self.evdev = evdev
  }

  public func light(for output: FeedbackOutput, button: String) -> any FeedbackLight {
    switch output.light {
    case .sysfs(let name): SysfsLED(directory: ledsDirectory + "/" + name)
    case .inputLED(let code): InputDeviceLED(leds: inputLEDs, button: button, code: code)
    case .sound(_, _, let device), .rumble(_, let device):
      EvdevFeedbackOutput(
        kind: EvdevFeedbackOutput.kind(of: output)!, device: device, button: button, deviceLEDs: inputLEDs,
        evdev: evdev)
    }
  }
}

/// An LED class device (`/sys/class/leds/NAME`). Taking it saves its trigger (the
/// bracketed word of `trigger`) and `brightness`, then sets the trigger `none`; on is
/// `max_brightness`, off 0. Releasing writes the brightness back and then the trigger
/// (in that order: writing brightness 0 would remove a trigger restored first).
public final class SysfsLED: FeedbackLight {
  public let directory: String
  public var label: String { directory }
  private var saved: (trigger: String?, brightness: String)?
  private var maximum = "1"

  public init(directory: String) { self.directory = directory }

  /// The active trigger of a `trigger` file's text: `none timer [heartbeat]` → heartbeat.
  /// nil when none is bracketed (a driver without triggers).
  public static func activeTrigger(_ text: String) -> String? {
    for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" })
    where word.hasPrefix("[") && word.hasSuffix("]") && word.count > 2 {
      return String(word.dropFirst().dropLast())
    }
    return nil
  }

  @discardableResult public func set(_ on: Bool) throws(FeedbackLightError) -> Bool {
    if saved == nil { try take() }
    try write("brightness", on ? maximum : "0")
    return true
  }

  /// Taken at the key-down of a press whose threshold it shows: the trigger's RCU wait is
  /// paid then, not at the threshold. Leaving a trigger turns the LED off, so what it
  /// showed is written back: nothing is seen until a pattern shows.
  @discardableResult public func prepare() throws(FeedbackLightError) -> Bool {
    guard saved == nil else { return false }
    if try take(), let brightness = saved?.brightness, brightness != "0" { try write("brightness", brightness) }
    return true
  }

  /// Saves the trigger and brightness and sets the trigger `none`; true when a trigger was left.
  @discardableResult private func take() throws(FeedbackLightError) -> Bool {
    let trigger = SysfsLED.activeTrigger(try read("trigger"))
    let brightness = try read("brightness").trimmingSpaces
    maximum = try read("max_brightness").trimmingSpaces
    let leaves = trigger != "none" && trigger != nil
    if leaves { try write("trigger", "none") }
    saved = (trigger, brightness)
    return leaves
  }

  /// A brightness write on a light already taken; taking it (`set` on a light not taken)
  /// and giving it back to a trigger (`led_trigger_set`) are not.
  public func isQuick(_ write: FeedbackScheduler.Write) -> Bool {
    guard let saved else { return write == .release }
    return write != .release || saved.trigger == nil || saved.trigger == "none"
  }

  @discardableResult public func release() throws(FeedbackLightError) -> Bool {
    guard let saved else { return false }
    self.saved = nil
    try write("brightness", saved.brightness)
    if let trigger = saved.trigger, trigger != "none" { try write("trigger", trigger) }
    return true
  }

  private func read(_ attribute: String) throws(FeedbackLightError) -> String {
    let (text, error) = SmallFile.read(directory + "/" + attribute)
    guard let text else { throw FeedbackLightError(error ?? "cannot read \(directory)/\(attribute)") }
    return text
  }

  private func write(_ attribute: String, _ value: String) throws(FeedbackLightError) {
    if let error = SmallFile.write(directory + "/" + attribute, value) { throw FeedbackLightError(error) }
  }
}

/// An LED of the device a button is bound to (`EV_LED`). Taking it reads the LED's state
/// on that device (`EVIOCGLED`); releasing writes it back to that device, if it is still
/// open (a device that went away took its LED with it), whichever button it serves by
/// then. When the button moved to another device, that one is taken anew.
public final class InputDeviceLED: FeedbackLight {
  /// The button's name.
  public let button: String
  public let code: UInt16
  public let label: String
  private weak var leds: (any ButtonDeviceLEDs)?
  private var saved: (device: String, on: Bool)?

  public init(leds: (any ButtonDeviceLEDs)?, button: String, code: UInt16) {
    self.leds = leds
    self.button = button
    self.code = code
    label = "\(LEDCodes.name(of: code) ?? "LED \(code)") of button \(button)'s device"
  }

  /// While the button has no device there is no LED to show: nothing is written and
  /// nothing fails (the driver shows the state again when a device appears).
  @discardableResult public func set(_ on: Bool) throws(FeedbackLightError) -> Bool {
    guard let leds, let device = leds.ledDevice(forButton: button) else { return false }
    do {
      if let saved, saved.device != device, leds.isOpen(device: saved.device) {
        try leds.setLED(device: saved.device, code: code, on: saved.on)
      }
      if saved?.device != device { saved = (device, try leds.isLEDOn(device: device, code: code)) }
      try leds.setLED(device: device, code: code, on: on)
    } catch {
      throw FeedbackLightError(error.description)
    }
    return true
  }

  @discardableResult public func release() throws(FeedbackLightError) -> Bool {
    guard let saved else { return false }
    self.saved = nil
    guard let leds, leds.isOpen(device: saved.device) else { return false }
    do {
      try leds.setLED(device: saved.device, code: code, on: saved.on)
    } catch {
      throw FeedbackLightError(error.description)
    }
    return true
  }
}

extension String {
  /// Without the spaces and newline a sysfs attribute ends with.
  fileprivate var trimmingSpaces: String {
    var s = Substring(self)
    while let last = s.last, last == "\n" || last == " " { s = s.dropLast() }
    while let first = s.first, first == " " { s = s.dropFirst() }
    return String(s)
  }
}
