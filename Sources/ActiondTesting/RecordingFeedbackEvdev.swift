// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux

/// Records the evdev calls of beeper and rumble outputs, on devices that have the events
/// they are given and fail on demand. Descriptors: the named devices' from 51 up, in the
/// order they are opened.
public final class RecordingFeedbackEvdev: FeedbackEvdev {
  /// Every call so far: `open NAME`, `close FD`, `write FD EV_SND|EV_FF CODE VALUE`,
  /// `upload FD MAGNITUDE LENGTH ms`, `erase FD EFFECT`.
  public var calls: [String] = []
  /// `"EV_SND 2"`-style capabilities per descriptor (`"51"`), or `"*"` for every descriptor.
  public var capabilities: [String: Set<String>] = ["*": ["EV_SND 1", "EV_SND 2", "EV_FF 80"]]
  /// Devices (``FeedbackDevice/configured``) that cannot be opened.
  public var missing: Set<String> = []
  /// Descriptors whose writes fail (the device went away).
  public var gone: Set<Int32> = []
  private var nextFD: Int32 = 50
  private var nextEffect: Int16 = 0

  public init() {}

  public func open(_ device: FeedbackDevice) throws(FeedbackLightError) -> (fd: Int32, label: String) {
    let name = device.configured ?? "?"
    calls.append("open \(name)")
    if missing.contains(name) { throw FeedbackLightError("no input device named \"\(name)\"") }
    nextFD += 1
    return (nextFD, "/dev/input/event\(nextFD) (\(name))")
  }

  public func close(_ fd: Int32) { calls.append("close \(fd)") }

  public func has(_ fd: Int32, type: UInt16, code: UInt16) throws(FeedbackLightError) -> Bool {
    (capabilities["\(fd)"] ?? capabilities["*"] ?? []).contains("\(Self.typeName(type)) \(code)")
  }

  public func write(_ fd: Int32, type: UInt16, code: UInt16, value: Int32) throws(FeedbackLightError) {
    calls.append("write \(fd) \(Self.typeName(type)) \(code) \(value)")
    if gone.contains(fd) { throw FeedbackLightError("write: ENODEV (No such device)") }
  }

  public func uploadRumble(_ fd: Int32, magnitude: UInt16, lengthMs: UInt16) throws(FeedbackLightError) -> Int16 {
    calls.append("upload \(fd) \(magnitude) \(lengthMs) ms")
    defer { nextEffect += 1 }
    return nextEffect
  }

  public func erase(_ fd: Int32, effect: Int16) throws(FeedbackLightError) { calls.append("erase \(fd) \(effect)") }

  /// `EV_SND` (0x12) or, the only other type feedback writes, `EV_FF`.
  private static func typeName(_ type: UInt16) -> String { type == 0x12 ? "EV_SND" : "EV_FF" }
}

/// The button's device as the input manager offers it to beepers and rumble outputs: the
/// buttons `a` and `action` are on ``device`` (nil: waiting for one), whose descriptor is
/// its number (`input7`: 7); it has no LEDs to speak of.
public final class FakeButtonDevice: ButtonDeviceLEDs {
  /// The device's syspath-like name, `inputN`.
  public var device: String?

  public init(device: String? = "input7") { self.device = device }

  public func ledDevice(forButton button: String) -> String? { button == "a" || button == "action" ? device : nil }
  public func isLEDOn(device: String, code: UInt16) throws(SystemCallError) -> Bool { false }
  public func setLED(device: String, code: UInt16, on: Bool) throws(SystemCallError) {}
  public func isOpen(device: String) -> Bool { device == self.device }
  public func descriptor(device: String) -> Int32? { device == self.device ? Int32(device.dropFirst(5)) : nil }
}
