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

  @Test func everyProblemIsReportedWithItsPath() {
    #expect(feedbackProblems(#""LED_CAPSL""#) == ["\(p): must be an array of feedback outputs, got string"])
    #expect(
      feedbackProblems(
        #"[{}, { led: "LED_CAPS", sysfs: "ACT" }, { led: "capsl" }, { led: 16 }, { led: true }, { sysfs: "../x" }, { sysfs: "/sys/devices/x" }, { sysfs: "" }]"#
      ) == [
        #"\#(p)[0]: needs led (an LED of the button's input device, such as "LED_CAPSL") or sysfs (an LED class device under /sys/class/leds, such as "ACT")"#,
        "\(p)[1].sysfs: cannot be given with led: an output is one LED",
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
