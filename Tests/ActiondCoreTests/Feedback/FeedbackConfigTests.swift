// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

/// Problems of a main file whose one button has `feedback` (JSON5), without the file prefix.
private func feedbackProblems(_ feedback: String) -> [String] {
  problems(#"{ buttons: [{ name: "action", key: "KEY_PROG1", feedback: \#(feedback) }] }"#).map { line in
    line.hasPrefix("actiond.json:1: ") ? String(line.dropFirst("actiond.json:1: ".count)) : line
  }
}

private let p = "buttons[0].feedback"

@Suite struct FeedbackConfigTests {
  @Test func theKeyboardAndTheRaspberryPiExamples() throws {
    let c = try load(
      """
      { buttons: [
          { name: "action", key: "KEY_PROG1", feedback: [{ led: "LED_CAPSL", on: ["held"] }] },
          { name: "pi", key: "BTN_0", feedback: [{ sysfs: "ACT", indicator: true }] },
      ] }
      """)
    #expect(c.feedback["action"] == [FeedbackOutput(light: .inputLED(code: 1), moments: [.held])])
    #expect(c.feedback["pi"] == [FeedbackOutput(light: .sysfs(name: "ACT"), moments: [], indicator: true)])
    #expect(c.feedback["pi"]?.first?.patterns == FeedbackPattern.defaults)
  }

  @Test func defaultsOverridesAndSpellings() throws {
    let c = try load(
      """
      { buttons: [{ name: "action", key: "KEY_PROG1", feedback: [
          { sysfs: "/sys/class/leds/led0" },
          { led: 8, indicator: true, on: ["failed", "performed"],
            patterns: { failed: [50, 50, 50, 50], performed: "on" } },
      ] }] }
      """)
    let outputs = try #require(c.feedback["action"])
    #expect(outputs[0] == FeedbackOutput(light: .sysfs(name: "led0"), moments: FeedbackMoment.allCases))
    #expect(outputs[1].light == .inputLED(code: 8))
    #expect(outputs[1].moments == [.performed, .failed])
    #expect(outputs[1].patterns[.failed] == FeedbackPattern(alternatingMilliseconds: [50, 50, 50, 50]))
    #expect(outputs[1].patterns[.performed] == .whileDown)
    #expect(outputs[1].patterns[.held] == FeedbackPattern.defaults[.held])
    #expect(try load(#"{ buttons: [{ name: "a", key: "KEY_A" }] }"#).feedback.isEmpty)
  }

  /// The beeper and the rumble: defaults (SND_TONE at 1000 Hz, full strength, the
  /// button's own device, every moment but pressed), a device by path or by name.
  @Test func soundAndRumbleOutputs() throws {
    let c = try load(
      """
      { buttons: [{ name: "action", key: "KEY_PROG1", feedback: [
          { sound: "SND_TONE", device: "/dev/input/by-path/platform-pcspkr-event-spkr", on: ["held"] },
          { sound: "SND_BELL", device: "Beeper" },
          { sound: "SND_TONE", hz: 2500 },
          { rumble: "FF_RUMBLE" },
          { rumble: "FF_RUMBLE", strength: 40, device: "Xbox Wireless Controller", on: ["held", "pressed"] },
      ] }] }
      """)
    let outputs = try #require(c.feedback["action"])
    #expect(
      outputs.map(\.light) == [
        .sound(code: SoundCodes.tone, hertz: 1000, device: .path("/dev/input/by-path/platform-pcspkr-event-spkr")),
        .sound(code: SoundCodes.bell, hertz: 1, device: .named("Beeper")),
        .sound(code: SoundCodes.tone, hertz: 2500, device: .button),
        .rumble(strength: 100, device: .button),
        .rumble(strength: 40, device: .named("Xbox Wireless Controller")),
      ])
    #expect(outputs[0].moments == [.held])
    #expect(
      outputs[1].moments == [.held, .performed, .failed, .busy], "a sound is not on all the while the key is down")
    #expect(outputs[3].moments == [.held, .performed, .failed, .busy])
    #expect(outputs[4].moments == [.pressed, .held])
    #expect(RumbleEffect.lengthMs(of: outputs[3]) == 300, "the longest on-step: performed's 300 ms")
    #expect(RumbleEffect.lengthMs(of: outputs[4]) == 0, "pressed is on while down: played until stopped")
    #expect(RumbleEffect.magnitude(percent: 40) == 26214)
    #expect(
      outputs.map(\.description) == [
        "sound SND_TONE 1000 Hz on /dev/input/by-path/platform-pcspkr-event-spkr (held)",
        #"sound SND_BELL on device "Beeper" (held, performed, failed, busy)"#,
        "sound SND_TONE 2500 Hz (held, performed, failed, busy)",
        "rumble 100% (held, performed, failed, busy)",
        #"rumble 40% on device "Xbox Wireless Controller" (pressed, held)"#,
      ])
  }

  @Test func everySoundAndRumbleProblemIsReportedWithItsPath() {
    #expect(
      feedbackProblems(
        #"[{ sound: "tone" }, { sound: "SND_CLICK" }, { sound: 2 }, { sound: "SND_BELL", hz: 440 }, { sound: "SND_TONE", hz: 5 }, { sound: "SND_TONE", led: "LED_MISC" }, { sound: "SND_TONE" }, { sound: "SND_BELL" }, { sound: "SND_TONE", device: "X", indicator: true }]"#
      ) == [
        #"\#(p)[0].sound: unknown sound "tone": SND_TONE (a tone of hz) or SND_BELL (did you mean SND_TONE?)"#,
        #"\#(p)[1].sound: unknown sound "SND_CLICK": SND_TONE (a tone of hz) or SND_BELL"#,
        "\(p)[2].sound: must be a string, got number",
        "\(p)[3].hz: is for SND_TONE: SND_BELL rings at the device's own pitch",
        "\(p)[4].hz: must be between 20 and 20000 Hz, got 5",
        "\(p)[5].sound: cannot be given with led: an output is one LED, beeper or motor",
        "\(p)[7].sound: the same beeper (the button's device) as feedback[6]",
        "\(p)[8].indicator: needs a light (led or sysfs): a sound output cannot show a state while idle",
      ])
    #expect(
      feedbackProblems(
        #"[{ rumble: "FF_PERIODIC" }, { rumble: "FF_RUMBLE", strength: 0 }, { rumble: "FF_RUMBLE", strength: 0.5 }, { rumble: "FF_RUMBLE", hz: 100 }, { led: "LED_MISC", device: "PC Speaker", strength: 3 }, { rumble: "FF_RUMBLE", device: "" }, { rumble: "FF_RUMBLE", device: "/dev/input/../x" }, { rumble: "FF_RUMBLE", patterns: { pressed: "on" } }, { rumble: "" }]"#
      ) == [
        #"\#(p)[0].rumble: unknown effect "FF_PERIODIC": the rumble effect is "FF_RUMBLE""#,
        "\(p)[1].strength: must be between 1 and 100%, got 0",
        "\(p)[2].strength: must be an integer, got a fraction",
        "\(p)[3].hz: is for sound outputs, not rumble",
        "\(p)[4].device: is for sound and rumble outputs, not led",
        "\(p)[4].strength: is for rumble outputs, not led",
        "\(p)[5].device: must not be empty",
        #"\#(p)[6].device: must be an input event device node such as /dev/input/event5 or a link to one, or a device name such as "PC Speaker", got "/dev/input/../x""#,
        "\(p)[7].patterns.pressed: pressed is not in on, so this pattern is never shown",
        "\(p)[8].rumble: must not be empty",
      ])
  }

  @Test func everyProblemIsReportedWithItsPath() {
    #expect(feedbackProblems(#""LED_CAPSL""#) == ["\(p): must be an array of feedback outputs, got string"])
    #expect(
      feedbackProblems(
        #"[{}, { led: "LED_CAPS", sysfs: "ACT" }, { led: "capsl" }, { led: 16 }, { led: true }, { sysfs: "../x" }, { sysfs: "/sys/devices/x" }, { sysfs: "" }]"#
      ) == [
        #"\#(p)[0]: needs led (an LED of the button's input device, such as "LED_CAPSL"), sysfs (an LED class device under /sys/class/leds, such as "ACT"), sound ("SND_TONE" or "SND_BELL") or rumble ("FF_RUMBLE")"#,
        "\(p)[1].sysfs: cannot be given with led: an output is one LED, beeper or motor",
        #"\#(p)[2].led: unknown LED name "capsl" (did you mean LED_CAPSL?)"#,
        "\(p)[3].led: must be between 0 and 15, got 16",
        #"\#(p)[4].led: must be an LED name such as "LED_CAPSL" or an LED code, got boolean"#,
        #"\#(p)[5].sysfs: must be the name of an LED class device (such as "ACT") or its path under /sys/class/leds, got "../x""#,
        #"\#(p)[6].sysfs: must be the name of an LED class device (such as "ACT") or its path under /sys/class/leds, got "/sys/devices/x""#,
        "\(p)[7].sysfs: must not be empty",
      ])
    #expect(
      feedbackProblems(
        #"[{ led: "LED_MISC", on: ["held", "hold", "held"], indicator: "yes", colour: 1 }, { led: "LED_MISC" }, { sysfs: "ACT", on: [] }, { sysfs: "x", on: "held" }]"#
      ) == [
        #"\#(p)[0].on[1]: must be one of pressed, held, performed, failed, busy, got "hold" (did you mean held?)"#,
        "\(p)[0].on[2]: held is listed twice",
        #"\#(p)[0].indicator: must be true or false, got string"#,
        "\(p)[0].colour: unknown key",
        "\(p)[1].led: the same LED as feedback[0]",
        "\(p)[2].on: shows nothing: name a moment (pressed, held, performed, failed, busy) or set indicator: true",
        "\(p)[3].on: must be an array of moments (pressed, held, performed, failed, busy), got string",
      ])
    #expect(
      feedbackProblems(
        #"[{ sysfs: "ACT", on: ["held", "failed", "busy", "performed"], patterns: { held: [], failed: [0, 80.5], busy: "off", performed: 3, pressed: [1], tick: [1] } }]"#
      ) == [
        "\(p)[0].patterns.held: must have 1 to 32 durations, got 0",
        "\(p)[0].patterns.failed[0]: must be between 1 and 10000 ms, got 0",
        "\(p)[0].patterns.failed[1]: must be an integer, got a fraction",
        #"\#(p)[0].patterns.busy: must be "on" (on while the key is down) or milliseconds alternating on and off, starting with on, such as [80, 80, 80], got "off""#,
        #"\#(p)[0].patterns.performed: must be "on" (on while the key is down) or milliseconds alternating on and off, starting with on, such as [80, 80, 80], got number"#,
        "\(p)[0].patterns.pressed: pressed is not in on, so this pattern is never shown",
        "\(p)[0].patterns.tick: unknown key",
      ])
  }

  @Test func oneLEDClassDeviceServesOneOutput() {
    #expect(
      problems(
        #"{ buttons: [{ name: "a", key: "KEY_A", feedback: [{ sysfs: "ACT" }] }, { name: "b", key: "KEY_B", feedback: [{ sysfs: "/sys/class/leds/ACT" }] }] }"#
      ) == [
        "actiond.json:1: buttons[1].feedback[0].sysfs: LED ACT is already driven by buttons[0].feedback[0] (one LED, one output)"
      ])
  }
}
