// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// Records the evdev calls of beeper and rumble outputs, on devices that have the events
/// they are given and fail on demand. Descriptors: the named devices' from 50 up.
final class RecordingFeedbackEvdev: FeedbackEvdev {
  var calls: [String] = []
  /// `(fd, "EV_SND 2")`-style capabilities per descriptor ("*": every descriptor).
  var capabilities: [String: Set<String>] = ["*": ["EV_SND 1", "EV_SND 2", "EV_FF 80"]]
  /// Devices (``FeedbackDevice/configured``) that cannot be opened.
  var missing: Set<String> = []
  /// Descriptors whose writes fail (the device went away).
  var gone: Set<Int32> = []
  private var nextFD: Int32 = 50
  private var nextEffect: Int16 = 0

  func open(_ device: FeedbackDevice) throws(FeedbackLightError) -> (fd: Int32, label: String) {
    let name = device.configured ?? "?"
    calls.append("open \(name)")
    if missing.contains(name) { throw FeedbackLightError("no input device named \"\(name)\"") }
    nextFD += 1
    return (nextFD, "/dev/input/event\(nextFD) (\(name))")
  }
  func close(_ fd: Int32) { calls.append("close \(fd)") }
  func has(_ fd: Int32, type: UInt16, code: UInt16) throws(FeedbackLightError) -> Bool {
    let event = "\(type == 0x12 ? "EV_SND" : "EV_FF") \(code)"
    return (capabilities["\(fd)"] ?? capabilities["*"] ?? []).contains(event)
  }
  func write(_ fd: Int32, type: UInt16, code: UInt16, value: Int32) throws(FeedbackLightError) {
    calls.append("write \(fd) \(type == 0x12 ? "EV_SND" : "EV_FF") \(code) \(value)")
    if gone.contains(fd) { throw FeedbackLightError("write: ENODEV (No such device)") }
  }
  func uploadRumble(_ fd: Int32, magnitude: UInt16, lengthMs: UInt16) throws(FeedbackLightError) -> Int16 {
    calls.append("upload \(fd) \(magnitude) \(lengthMs) ms")
    defer { nextEffect += 1 }
    return nextEffect
  }
  func erase(_ fd: Int32, effect: Int16) throws(FeedbackLightError) { calls.append("erase \(fd) \(effect)") }
}

/// The button's device for the outputs that use it: one descriptor per syspath.
private final class ButtonDevice: ButtonDeviceLEDs {
  var device: String? = "input7"
  func ledDevice(forButton button: String) -> String? { button == "a" || button == "action" ? device : nil }
  func isLEDOn(device: String, code: UInt16) throws(SystemCallError) -> Bool { false }
  func setLED(device: String, code: UInt16, on: Bool) throws(SystemCallError) {}
  func isOpen(device: String) -> Bool { device == self.device }
  func descriptor(device: String) -> Int32? { device == self.device ? Int32(device.dropFirst(5)) : nil }
}

@Suite struct EvdevFeedbackTests {
  private func output(_ light: FeedbackOutput.Light, on: [FeedbackMoment] = [.held]) -> FeedbackOutput {
    FeedbackOutput(light: light, moments: on)
  }

  /// A tone on a named device: opened and checked once at the binding; on is the tone's
  /// frequency, off 0; the release silences only what sounds; unbinding closes it.
  @Test func aToneOnANamedDeviceSoundsAndIsSilenced() throws {
    let evdev = RecordingFeedbackEvdev()
    let factory = LinuxFeedbackLights(inputLEDs: nil, evdev: evdev)
    let light = factory.light(
      for: output(.sound(code: SoundCodes.tone, hertz: 880, device: .named("PC Speaker"))), button: "action")
    #expect(light.label == "SND_TONE of device \"PC Speaker\"")
    try light.bind()
    #expect(light.label == "SND_TONE of /dev/input/event51 (PC Speaker)")
    try light.set(true)
    try light.set(false)
    #expect(try light.release() == false, "silent already: nothing written")
    try light.set(true)
    #expect(try light.release() == true)
    light.unbind()
    #expect(
      evdev.calls == [
        "open PC Speaker", "write 51 EV_SND 2 880", "write 51 EV_SND 2 0", "write 51 EV_SND 2 880",
        "write 51 EV_SND 2 0", "close 51",
      ])
  }

  /// A rumble on the button's own device: the effect is uploaded when the device is bound
  /// (strength and the longest on-step as its length), played and stopped by EV_FF with its
  /// id, removed at the unbinding; a new device gets its own upload.
  @Test func aRumbleOnTheButtonsDeviceUploadsOncePlaysAndIsRemoved() throws {
    let evdev = RecordingFeedbackEvdev()
    let device = ButtonDevice()
    device.device = nil
    let factory = LinuxFeedbackLights(inputLEDs: device, evdev: evdev)
    let out = FeedbackOutput(
      light: .rumble(strength: 50, device: .button), moments: [.held, .failed],
      patterns: [
        .held: FeedbackPattern(alternatingMilliseconds: [40]), .failed: .init(alternatingMilliseconds: [90, 20, 30]),
      ])
    #expect(RumbleEffect.lengthMs(of: out) == 90)
    let light = factory.light(for: out, button: "action")
    #expect(light.label == "FF_RUMBLE of button action's device")
    try light.bind()
    #expect(try light.set(true) == false, "no device: nothing to play")
    #expect(evdev.calls.isEmpty)
    device.device = "input7"
    try light.bind()
    try light.set(true)
    try light.set(false)
    try light.set(true)
    try light.release()
    #expect(
      evdev.calls == [
        "upload 7 32767 90 ms", "write 7 EV_FF 0 1", "write 7 EV_FF 0 0", "write 7 EV_FF 0 1", "write 7 EV_FF 0 0",
      ])
    evdev.calls = []
    device.device = "input8"  // the button moved: the old descriptor is gone with its effect
    try light.set(true)
    light.unbind()
    #expect(evdev.calls == ["upload 8 32767 90 ms", "write 8 EV_FF 1 1", "write 8 EV_FF 1 0", "erase 8 1"])
  }

  /// A device without the event refuses the binding, with the reason, and nothing is ever
  /// written to it (no upload, no event); every later write fails the same way.
  @Test func aDeviceWithoutTheEventIsRefusedAndNeverWritten() throws {
    let evdev = RecordingFeedbackEvdev()
    evdev.capabilities = ["*": ["EV_SND 1"]]
    let device = ButtonDevice()
    let factory = LinuxFeedbackLights(inputLEDs: device, evdev: evdev)
    let rumble = factory.light(for: output(.rumble(strength: 100, device: .button)), button: "a")
    let tone = factory.light(
      for: output(.sound(code: SoundCodes.tone, hertz: 1000, device: .path("/dev/input/event3"))), button: "a")
    for light in [rumble, tone] {
      #expect {
        try light.bind()
      } throws: { error in
        "\(error)" == "the device has no EV_FF FF_RUMBLE" || "\(error)" == "the device has no EV_SND SND_TONE"
      }
      #expect(throws: FeedbackLightError.self) { try light.set(true) }
      #expect(try light.release() == false)
      light.unbind()
    }
    #expect(evdev.calls == ["open /dev/input/event3", "close 51"])
  }

  /// A named device that went away: the failed write closes it, the next moment opens it
  /// anew (a device plugged back works again); one missing at the start is opened later.
  @Test func aNamedDeviceThatWentAwayIsOpenedAnew() throws {
    let evdev = RecordingFeedbackEvdev()
    evdev.missing = ["Beeper"]
    let light = LinuxFeedbackLights(inputLEDs: nil, evdev: evdev).light(
      for: output(.sound(code: SoundCodes.bell, hertz: 1, device: .named("Beeper"))), button: "a")
    #expect(throws: FeedbackLightError.self) { try light.bind() }
    #expect(throws: FeedbackLightError.self) { try light.set(true) }
    evdev.missing = []
    try light.set(true)
    evdev.gone = [51]
    #expect(throws: FeedbackLightError.self) { try light.set(false) }
    #expect(try light.release() == false, "closed with the failed write")
    evdev.gone = []
    try light.set(true)
    #expect(
      evdev.calls == [
        "open Beeper", "open Beeper", "open Beeper", "write 51 EV_SND 1 1", "write 51 EV_SND 1 0", "close 51",
        "open Beeper", "write 52 EV_SND 1 1",
      ])
  }

  /// The real daemon on fakes: the threshold beep starts in the loop turn that decides the
  /// hold and is silenced 60 ms later; a stop mid-beep silences it; the rumble on a
  /// device without FF_RUMBLE is logged once and the hold still performs.
  @Test func theDaemonBeepsTheTickAndSilencesAtTheStop() throws {
    let evdev = RecordingFeedbackEvdev()
    evdev.capabilities = ["*": ["EV_SND 2"]]
    let device = ButtonDevice()
    device.device = nil
    let wired = try WiredDaemon(
      feedback: #"[{ sound: "SND_TONE", hz: 2000, device: "PC Speaker" }, { rumble: "FF_RUMBLE" }]"#,
      lights: LinuxFeedbackLights(inputLEDs: device, evdev: evdev))
    #expect(evdev.calls == ["open PC Speaker"], "the named device is opened at the start")
    device.device = "input7"
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    let refused = wired.log.records(event: "feedback-failed")
    #expect(refused.count == 1)
    #expect(
      refused.first?.message
        == "button action: feedback on FF_RUMBLE of button action's device failed: the device has no EV_FF "
        + "FF_RUMBLE (not logged again until it works)")
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    #expect(evdev.calls == ["open PC Speaker"], "a press is not a sound by default")
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    #expect(evdev.calls.last == "write 51 EV_SND 2 2000", "the tick in the turn that decided the hold")
    try wired.turn(until: "the tick's end") { evdev.calls.last == "write 51 EV_SND 2 0" }
    wired.runner.complete(with: .exited(0))
    try wired.turn(until: "performed") { evdev.calls.last == "write 51 EV_SND 2 2000" }
    wired.daemon.shutdown(reason: "test")
    #expect(evdev.calls.suffix(2) == ["write 51 EV_SND 2 0", "close 51"], "a stop silences and closes")
    #expect(wired.log.records(event: "feedback-failed").count == 1)
    #expect(wired.log.records(event: "performed").count == 1)
  }
}
