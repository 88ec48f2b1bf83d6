// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Testing

@testable import ActiondLinux

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
    let device = FakeButtonDevice(device: nil)
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
    let device = FakeButtonDevice()
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
}
