// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondLinux

/// A directory that looks like `/sys/class/leds/NAME`: `trigger`, `brightness`, `max_brightness`.
private func fakeLED(_ dir: TemporaryDirectory, trigger: String, brightness: String = "0\n") throws -> String {
  let led = dir.file("leds/ACT")
  guard mkdir(dir.file("leds"), 0o755) == 0, mkdir(led, 0o755) == 0 else { throw Errno.current }
  _ = try dir.write("leds/ACT/trigger", trigger)
  _ = try dir.write("leds/ACT/brightness", brightness)
  _ = try dir.write("leds/ACT/max_brightness", "255\n")
  return led
}

private func contents(_ path: String) -> String { SmallFile.read(path).text ?? "<missing>" }

/// Records the LED calls an ``InputDeviceLED`` makes, on a device that can change or go.
private final class FakeButtonLEDs: ButtonDeviceLEDs {
  var device: String? = "input9"
  var openDevices: Set<String> = ["input9", "input10", "input11"]
  var lit: [String: Bool] = [:]
  var calls: [String] = []
  var writeError: Errno?
  func ledDevice(forButton button: String) -> String? { button == "action" ? device : nil }
  func isLEDOn(device: String, code: UInt16) throws(SystemCallError) -> Bool {
    calls.append("get \(device) \(code)")
    return lit["\(device) \(code)"] ?? false
  }
  func setLED(device: String, code: UInt16, on: Bool) throws(SystemCallError) {
    calls.append("set \(device) \(code) \(on ? 1 : 0)")
    if let writeError { throw SystemCallError("cannot write EV_LED to /dev/input/event9", writeError) }
    lit["\(device) \(code)"] = on
  }
  func isOpen(device: String) -> Bool { openDevices.contains(device) }
  func descriptor(device: String) -> Int32? { openDevices.contains(device) ? Int32(device.dropFirst(5)) : nil }
}

@Suite struct FeedbackLightsTests {
  @Test func theActiveTriggerIsTheBracketedWord() {
    #expect(SysfsLED.activeTrigger("[none] timer heartbeat\n") == "none")
    #expect(SysfsLED.activeTrigger("none rc-feedback kbd-scrolllock [mmc0] timer\n") == "mmc0")
    #expect(SysfsLED.activeTrigger("none timer\n") == nil)
  }

  /// An LED with no trigger: its trigger is left alone, on is max_brightness, and its
  /// brightness comes back at the release.
  @Test func aSysfsLEDWithoutATriggerGetsItsBrightnessBack() throws {
    let dir = try TemporaryDirectory("actiond-leds")
    let led = try fakeLED(dir, trigger: "[none] timer heartbeat\n", brightness: "7\n")
    let light = SysfsLED(directory: led)
    try light.set(true)
    #expect(contents(led + "/brightness") == "255")
    #expect(contents(led + "/trigger") == "[none] timer heartbeat\n", "a trigger none is not written")
    try light.set(false)
    #expect(contents(led + "/brightness") == "0")
    try light.release()
    #expect(contents(led + "/brightness") == "7")
    try light.release()  // not taken: nothing
    #expect(contents(led + "/brightness") == "7")
  }

  /// A board LED with a trigger (the Pi's ACT on mmc0): taken over with trigger none,
  /// given back with brightness first, then its trigger.
  @Test func aSysfsLEDWithATriggerGetsItsTriggerBack() throws {
    let dir = try TemporaryDirectory("actiond-leds")
    let led = try fakeLED(dir, trigger: "none timer [heartbeat]\n")
    let light = SysfsLED(directory: led)
    #expect(light.label == led)
    try light.set(true)
    #expect(contents(led + "/trigger") == "none")
    #expect(contents(led + "/brightness") == "255")
    try light.release()
    #expect(contents(led + "/trigger") == "heartbeat")
    #expect(contents(led + "/brightness") == "0")
    // Taken again: the trigger read now (what the kernel shows after the restore) is saved.
    _ = try dir.write("leds/ACT/trigger", "none timer [heartbeat]\n")
    try light.set(false)
    #expect(contents(led + "/trigger") == "none")
    try light.release()
    #expect(contents(led + "/trigger") == "heartbeat")
  }

  @Test func aMissingSysfsLEDFailsWithTheReason() throws {
    let dir = try TemporaryDirectory("actiond-leds")
    let light = SysfsLED(directory: dir.file("leds/gone"))
    #expect {
      try light.set(true)
    } throws: { error in
      "\(error)".hasPrefix("cannot open \(dir.file("leds/gone"))/trigger: ")
    }
    try light.release()  // never taken: nothing to restore, no error
  }

  /// EV_LED: the prior state is read from the device at the first write and written
  /// back at the release.
  @Test func anInputLEDRestoresItsPriorState() throws {
    let leds = FakeButtonLEDs()
    leds.lit["input9 1"] = true  // Caps Lock was on
    let light = InputDeviceLED(leds: leds, button: "action", code: 1)
    #expect(light.label == "LED_CAPSL of button action's device")
    try light.set(true)
    try light.set(false)
    try light.release()
    #expect(leds.calls == ["get input9 1", "set input9 1 1", "set input9 1 0", "set input9 1 1"])
    #expect(leds.lit["input9 1"] == true)
  }

  /// When the button moves to another device, the first is given back and the new one
  /// taken; a device gone took its LED with it (nothing to restore); without a device
  /// nothing is written; a failed write is an error the driver logs.
  @Test func anInputLEDFollowsTheButtonsDevice() throws {
    let leds = FakeButtonLEDs()
    let light = InputDeviceLED(leds: leds, button: "action", code: 8)
    try light.set(true)
    leds.device = "input10"
    leds.lit["input10 8"] = true
    try light.set(false)
    #expect(leds.calls == ["get input9 8", "set input9 8 1", "set input9 8 0", "get input10 8", "set input10 8 0"])
    leds.calls = []
    leds.openDevices.remove("input10")
    leds.device = nil
    try light.release()
    #expect(leds.calls == [])
    try light.set(true)  // no device: nothing to show, not an error
    #expect(leds.calls == [])
    leds.device = "input11"
    leds.writeError = Errno(EBADF)
    #expect {
      try light.set(true)
    } throws: { error in
      "\(error)".hasPrefix("cannot write EV_LED to /dev/input/event9: ")
    }
  }

  @Test func theFactoryMakesEachKindOfLight() {
    let leds = FakeButtonLEDs()
    let factory = LinuxFeedbackLights(ledsDirectory: "/tmp/leds", inputLEDs: leds)
    #expect(
      factory.light(for: FeedbackOutput(light: .sysfs(name: "ACT")), button: "a").label
        == "/tmp/leds/ACT")
    #expect(
      factory.light(for: FeedbackOutput(light: .inputLED(code: 1)), button: "a").label
        == "LED_CAPSL of button a's device")
  }
}
