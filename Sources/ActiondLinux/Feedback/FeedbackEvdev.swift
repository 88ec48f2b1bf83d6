// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CActiondShim
import Glibc

/// The evdev calls of the beeper and rumble outputs, on event device descriptors.
/// ``LinuxFeedbackEvdev`` is the real one; daemon tests pass a recording fake.
public protocol FeedbackEvdev: AnyObject {
  /// Opens the event device an output names (``FeedbackDevice/path(_:)`` or
  /// ``FeedbackDevice/named(_:)``) for writing: its descriptor and what logs call it.
  func open(_ device: FeedbackDevice) throws(FeedbackLightError) -> (fd: Int32, label: String)
  /// Closes a descriptor ``open(_:)`` returned (the kernel then removes the effects it uploaded).
  func close(_ fd: Int32)
  /// Whether the device has event `code` of `type` (`EVIOCGBIT`).
  func has(_ fd: Int32, type: UInt16, code: UInt16) throws(FeedbackLightError) -> Bool
  /// Writes one event and `SYN_REPORT`.
  func write(_ fd: Int32, type: UInt16, code: UInt16, value: Int32) throws(FeedbackLightError)
  /// Uploads an `FF_RUMBLE` effect (`EVIOCSFF`): its effect id.
  func uploadRumble(_ fd: Int32, magnitude: UInt16, lengthMs: UInt16) throws(FeedbackLightError) -> Int16
  /// Removes an uploaded effect (`EVIOCRMFF`).
  func erase(_ fd: Int32, effect: Int16) throws(FeedbackLightError)
}

/// `EV_SND` and `EV_FF` of linux/input-event-codes.h.
enum EvdevTypes {
  static let sound: UInt16 = 0x12
  static let forceFeedback: UInt16 = 0x15
  static let rumble: UInt16 = 0x50
}

/// The real evdev calls. A named device is looked up through udev (the input devices it
/// knows, by `EVIOCGNAME`), a path is opened as it is (a `/dev/input/by-path` link
/// included); either must be an event device.
public final class LinuxFeedbackEvdev: FeedbackEvdev {
  public init() {}

  public func open(_ device: FeedbackDevice) throws(FeedbackLightError) -> (fd: Int32, label: String) {
    let node: String
    var label: String
    switch device {
    case .button: throw FeedbackLightError("the button's own device is not opened again")
    case .path(let path):
      node = path
      label = path
    case .named(let name):
      let found: InputDeviceInfo?
      do {
        found = try UdevDiscovery().enumerate().filter { $0.name == name && $0.devnode != nil }
          .min { $0.devnode! < $1.devnode! }
      } catch {
        throw FeedbackLightError("cannot enumerate input devices: \(error)")
      }
      guard let found, let devnode = found.devnode else {
        throw FeedbackLightError("no input device named \"\(name)\"")
      }
      node = devnode
      label = "\(devnode) (\(name))"
    }
    let fd = Glibc.open(node, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
    guard fd >= 0 else { throw FeedbackLightError(SystemCallError.last("open \(node)").description) }
    // An event device answers EVIOCGBIT; anything else (a file, a tty) is not one.
    guard actiond_evdev_has_code(fd, 0, 0) >= 0 else {
      let error = SystemCallError.last("\(node) is not an input event device (EVIOCGBIT)")
      Glibc.close(fd)
      throw FeedbackLightError(error.description)
    }
    if case .path = device, let real = realpath(node, nil) {
      let resolved = String(cString: real)
      free(real)
      if resolved != node { label += " (\(resolved))" }
    }
    return (fd, label)
  }

  public func close(_ fd: Int32) { _ = Glibc.close(fd) }

  public func has(_ fd: Int32, type: UInt16, code: UInt16) throws(FeedbackLightError) -> Bool {
    let rc = actiond_evdev_has_code(fd, UInt32(type), UInt32(code))
    guard rc >= 0 else { throw FeedbackLightError(SystemCallError.last("EVIOCGBIT").description) }
    return rc == 1
  }

  public func write(_ fd: Int32, type: UInt16, code: UInt16, value: Int32) throws(FeedbackLightError) {
    guard actiond_evdev_write_event(fd, UInt32(type), UInt32(code), value) == 0 else {
      throw FeedbackLightError(SystemCallError.last("write").description)
    }
  }

  public func uploadRumble(_ fd: Int32, magnitude: UInt16, lengthMs: UInt16) throws(FeedbackLightError) -> Int16 {
    let id = actiond_evdev_upload_rumble(fd, magnitude, magnitude, lengthMs)
    guard id >= 0 else { throw FeedbackLightError(SystemCallError.last("upload FF_RUMBLE (EVIOCSFF)").description) }
    return Int16(truncatingIfNeeded: id)
  }

  public func erase(_ fd: Int32, effect: Int16) throws(FeedbackLightError) {
    guard actiond_evdev_erase_effect(fd, Int32(effect)) == 0 else {
      throw FeedbackLightError(SystemCallError.last("remove effect \(effect) (EVIOCRMFF)").description)
    }
  }
}

/// A beeper (`EV_SND`) or a rumble motor (`EV_FF`) on an input device: the button's own
/// (the descriptor the input layer holds) or one the output names, opened here.
///
/// Binding checks that the device has the event (`SND_TONE`, `FF_RUMBLE`) and uploads the
/// rumble effect, once per device: when the output is configured for a named device, when
/// the button's device appears for its own. A device without the event fails the binding
/// (logged once by the driver) and nothing is ever written to it. On is the tone (its
/// frequency; 1 for `SND_BELL`) or playing the effect; off and release are 0: silence, the
/// effect stopped. Release writes only when it sounds. A named device whose write fails
/// (it went away) is closed and opened anew at the next moment; unbinding stops, removes
/// the effect and closes it.
public final class EvdevFeedbackOutput: FeedbackLight {
  public enum Kind: Hashable, Sendable {
    case sound(code: UInt16, value: Int32)
    case rumble(magnitude: UInt16, lengthMs: UInt16)
  }

  public let kind: Kind
  public let device: FeedbackDevice
  /// The button's name.
  public let button: String
  public private(set) var label: String
  /// `SND_TONE`, `FF_RUMBLE`: what the label starts with.
  private let what: String
  private weak var deviceLEDs: (any ButtonDeviceLEDs)?
  private let evdev: any FeedbackEvdev

  private struct Binding {
    var fd: Int32
    /// The button's device (its syspath) for ``FeedbackDevice/button``; nil for one opened here.
    var syspath: String?
    var effect: Int16?
    /// Why the device cannot take the output (it lacks the event); nothing is written then.
    var refused: FeedbackLightError?
  }
  private var binding: Binding?
  /// It sounds or plays now (what release must silence).
  private var active = false

  public init(
    kind: Kind, device: FeedbackDevice, button: String, deviceLEDs: (any ButtonDeviceLEDs)?, evdev: any FeedbackEvdev
  ) {
    self.kind = kind
    self.device = device
    self.button = button
    self.deviceLEDs = deviceLEDs
    self.evdev = evdev
    let what =
      switch kind {
      case .sound(let code, _): SoundCodes.name(of: code)
      case .rumble: RumbleEffect.name
      }
    self.what = what
    label = device == .button ? "\(what) of button \(button)'s device" : "\(what) of \(device)"
  }

  /// `output`'s kind: the event and its value, or the effect.
  public static func kind(of output: FeedbackOutput) -> Kind? {
    switch output.light {
    case .sound(let code, let hertz, _): .sound(code: code, value: hertz)
    case .rumble(let strength, _):
      .rumble(magnitude: RumbleEffect.magnitude(percent: strength), lengthMs: RumbleEffect.lengthMs(of: output))
    case .inputLED, .sysfs: nil
    }
  }

  private var event: (type: UInt16, code: UInt16) {
    switch kind {
    case .sound(let code, _): (EvdevTypes.sound, code)
    case .rumble: (EvdevTypes.forceFeedback, EvdevTypes.rumble)
    }
  }

  /// The output is configured, or the button's device appeared: a named device is opened
  /// (once), the button's own is bound anew (a device that appeared is a new descriptor).
  public func bind() throws(FeedbackLightError) {
    if device == .button {
      unbind()
      guard let deviceLEDs, let syspath = deviceLEDs.ledDevice(forButton: button),
        let fd = deviceLEDs.descriptor(device: syspath)
      else { return }
      try attach(fd: fd, syspath: syspath)
    } else if binding == nil {
      let (fd, name) = try evdev.open(device)
      label = "\(what) of \(name)"
      try attach(fd: fd, syspath: nil)
    }
  }

  /// Stops what plays, removes the effect and closes a device opened here.
  public func unbind() {
    guard let binding else { return }
    self.binding = nil
    defer { active = false }
    if binding.syspath == nil {
      // Closing removes the effect and stops it: the kernel flushes what this file uploaded.
      if binding.refused == nil, let effect = binding.effect { try? evdev.erase(binding.fd, effect: effect) }
      evdev.close(binding.fd)
      return
    }
    // The button's device: only while the input layer still holds that descriptor.
    guard let syspath = binding.syspath, let deviceLEDs, deviceLEDs.descriptor(device: syspath) == binding.fd,
      binding.refused == nil
    else { return }
    if active { try? write(binding, on: false) }
    if let effect = binding.effect { try? evdev.erase(binding.fd, effect: effect) }
  }

  /// A write on a device already bound; binding a named device (opening it, uploading
  /// its effect) is not.
  public func isQuick(_ write: FeedbackScheduler.Write) -> Bool { binding != nil }

  @discardableResult public func set(_ on: Bool) throws(FeedbackLightError) -> Bool {
    guard let binding = try current() else { return false }
    if let refused = binding.refused { throw refused }
    do {
      try write(binding, on: on)
    } catch {
      lost()
      throw error
    }
    active = on
    return true
  }

  @discardableResult public func release() throws(FeedbackLightError) -> Bool {
    guard active, let binding, binding.refused == nil else { return false }
    active = false
    if let syspath = binding.syspath, deviceLEDs?.descriptor(device: syspath) != binding.fd { return false }
    do {
      try write(binding, on: false)
    } catch {
      lost()
      throw error
    }
    return true
  }

  /// The binding to write to now; nil while the button has no device.
  private func current() throws(FeedbackLightError) -> Binding? {
    if device == .button {
      guard let deviceLEDs, let syspath = deviceLEDs.ledDevice(forButton: button),
        let fd = deviceLEDs.descriptor(device: syspath)
      else { return nil }
      if binding?.syspath != syspath || binding?.fd != fd { try bind() }
    } else if binding == nil {
      try bind()
    }
    return binding
  }

  private func attach(fd: Int32, syspath: String?) throws(FeedbackLightError) {
    var new = Binding(fd: fd, syspath: syspath)
    do {
      let (type, code) = event
      if !(try evdev.has(fd, type: type, code: code)) {
        let what = type == EvdevTypes.sound ? "EV_SND \(SoundCodes.name(of: code))" : "EV_FF FF_RUMBLE"
        new.refused = FeedbackLightError("the device has no \(what)")
      } else if case .rumble(let magnitude, let length) = kind {
        new.effect = try evdev.uploadRumble(fd, magnitude: magnitude, lengthMs: length)
      }
    } catch {
      if syspath == nil { evdev.close(fd) }
      throw error
    }
    binding = new
    active = false
    if let refused = new.refused { throw refused }
  }

  private func write(_ binding: Binding, on: Bool) throws(FeedbackLightError) {
    switch kind {
    case .sound(let code, let value):
      try evdev.write(binding.fd, type: EvdevTypes.sound, code: code, value: on ? value : 0)
    case .rumble:
      guard let effect = binding.effect else { return }
      try evdev.write(binding.fd, type: EvdevTypes.forceFeedback, code: UInt16(bitPattern: effect), value: on ? 1 : 0)
    }
  }

  /// A write failed: a device opened here went away (or broke) and is opened anew at the
  /// next moment; the button's own is bound anew when the input layer reopens it.
  private func lost() {
    active = false
    if let binding, binding.syspath == nil { evdev.close(binding.fd) }
    binding = nil
  }
}
