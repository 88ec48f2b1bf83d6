// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

private let timer = ControlDefinition(
  kind: "org.example.timer", type: .toggle, displayName: "Work Timer",
  valueText: OnOff(on: "Running", off: "Stopped"), symbol: OnOff(on: "timer", off: "timer.slash"),
  tint: "orange", actionHint: OnOff(on: "Stop", off: "Start"), intent: .state)

private let flashlight = ControlDefinition(
  kind: "org.example.flashlight", type: .toggle, displayName: "Flashlight",
  intent: .write(path: "/sys/class/leds/${led}/brightness", on: "1", off: "0"),
  value: .file(path: "/sys/class/leds/${led}/brightness", on: "1"),
  parameters: [
    ParameterSpec(name: "led", type: .string, required: true),
    ParameterSpec(name: "level", type: .integer, defaultValue: .integer(1), minimum: 0, maximum: 255),
  ], requiresConfiguration: true)

private let photo = ControlDefinition(
  kind: "org.example.photo", type: .button, displayName: "Take Photo",
  intent: .exec(ExecSpec(argv: ["/usr/bin/fswebcam", "/tmp/photo.jpg"])))

@Suite struct ConfigHintTests {
  @Test func toggleHintFollowsTheValue() {
    #expect(ControlPresentation.hint(for: timer, missing: [], value: .off) == "Hold to Start")
    #expect(ControlPresentation.hint(for: timer, missing: [], value: .on) == "Hold to Stop")
  }

  @Test func toggleDefaultsAreTurnOnAndTurnOff() {
    let plain = ControlDefinition(kind: "a.b", type: .toggle, displayName: "Lamp", intent: .state)
    #expect(plain.actionHint == OnOff(on: "Turn Off", off: "Turn On"))
    #expect(plain.valueText == OnOff(on: "On", off: "Off"))
    #expect(plain.value == .store(initial: false))
    #expect(ControlPresentation.hint(for: plain, missing: [], value: .off) == "Hold to Turn On")
    #expect(ControlPresentation.hint(for: plain, missing: [], value: .on) == "Hold to Turn Off")
    #expect(ControlPresentation.valueText(for: plain, value: .on) == "On")
    #expect(ControlPresentation.valueText(for: plain, value: .off) == "Off")
  }

  @Test func unknownValueUsesThePreview() {
    #expect(ControlPresentation.hint(for: timer, missing: [], value: .unknown) == "Hold to Start")
    var preview = timer
    preview.previewValue = true
    #expect(ControlPresentation.hint(for: preview, missing: [], value: .unknown) == "Hold to Stop")
    let p = ControlPresentation(definition: preview, instance: try! instance(preview), value: .unknown)
    #expect(p.valueText == "Running")
    #expect(p.value == .unknown)  // the preview is shown, but never reported as the value
    #expect(p.symbol == "timer")
  }

  @Test func unavailableValueIsNotGuessed() {
    let hint = ControlPresentation.hint(for: timer, missing: [], value: .unavailable(reason: "exit 2"))
    #expect(hint == "Work Timer unavailable")
    let p = ControlPresentation(definition: timer, instance: try! instance(timer), value: .unavailable(reason: "x"))
    #expect(p.valueText == "Unavailable")
    #expect(p.value == .unavailable(reason: "x"))
  }

  @Test func buttonHintDefaultsToTheDisplayName() {
    #expect(ControlPresentation.hint(for: photo, missing: [], value: .unknown) == "Hold to Take Photo")
    var custom = photo
    custom.actionHint = OnOff(both: "Shoot")
    #expect(ControlPresentation.hint(for: custom, missing: [], value: .on) == "Hold to Shoot")
    let p = ControlPresentation(definition: photo, instance: try! instance(photo), value: .on)
    #expect(p.valueText == nil)
    #expect(p.value == .unknown)
    #expect(ControlPresentation.valueText(for: photo, value: .on) == nil)
  }

  @Test func missingParametersAreNamed() throws {
    let unconfigured = try instance(flashlight)
    #expect(unconfigured.missing == ["led"])
    #expect(
      ControlPresentation.hint(for: flashlight, missing: unconfigured.missing, value: .on)
        == "Configure Flashlight: choose led")
    #expect(
      ControlPresentation.hint(for: flashlight, missing: ["a", "b"], value: .on)
        == "Configure Flashlight: choose a and b")
    #expect(
      ControlPresentation.hint(for: flashlight, missing: ["a", "b", "c"], value: .on)
        == "Configure Flashlight: choose a, b and c")
    let p = ControlPresentation(definition: flashlight, instance: unconfigured, value: .unknown)
    #expect(p.hint == "Configure Flashlight: choose led")
    #expect(p.missing == ["led"])
  }

  @Test func presentationCarriesSymbolAndTint() throws {
    let on = ControlPresentation(definition: timer, instance: try instance(timer), value: .on)
    #expect(on.hint == "Hold to Stop")
    #expect(on.valueText == "Running")
    #expect(on.symbol == "timer")
    #expect(on.tint == "orange")
    #expect(on.instanceID == "org.example.timer")
    let off = ControlPresentation(definition: timer, instance: try instance(timer), value: .off)
    #expect(off.symbol == "timer.slash")
    #expect(off.valueText == "Stopped")
  }

  @Test func unassignedButton() {
    #expect(ControlPresentation.unassignedHint(button: "action") == "No control assigned to action")
  }

  @Test func controlValueNames() {
    #expect(ControlValue(true) == .on)
    #expect(ControlValue(false).isOn == false)
    #expect(ControlValue.unknown.isOn == nil)
    #expect(ControlValue.unavailable(reason: "r").stateName == "unavailable")
    #expect("\(ControlValue.unavailable(reason: "r"))" == "unavailable (r)")
  }
}

private func instance(
  _ d: ControlDefinition, _ c: [String: ParameterValue] = [:]
) throws(ParameterProblems) -> ControlInstance {
  try ControlInstance(definition: d, configuration: c)
}

@Suite struct ConfigInstanceTests {
  @Test func idIsKindAloneWithoutValues() throws {
    #expect(try instance(timer).id == "org.example.timer")
    #expect(try instance(timer).isConfigured)
  }

  @Test func idListsResolvedValuesSorted() throws {
    let i = try instance(flashlight, ["led": .string("green")])
    #expect(i.isConfigured)
    #expect(i.id == "org.example.flashlight{led=green,level=1}")
    #expect(i.configuration == ["led": .string("green")])
    #expect(i.values == ["led": .string("green"), "level": .integer(1)])
    let j = try instance(flashlight, ["level": .integer(7), "led": .string("red")])
    #expect(j.id == "org.example.flashlight{led=red,level=7}")
  }

  @Test func idEscapesSeparators() throws {
    let i = try instance(flashlight, ["led": .string("a,b=c{d}\\")])
    #expect(i.id == "org.example.flashlight{led=a\\,b\\=c\\{d\\}\\\\,level=1}")
  }

  @Test func requiresConfigurationIgnoresDefaultsOfRequiredParameters() throws {
    let d = ControlDefinition(
      kind: "a.b", type: .button, displayName: "Unit", intent: .provider,
      parameters: [ParameterSpec(name: "unit", type: .string, defaultValue: .string("x.service"), required: true)],
      requiresConfiguration: true)
    #expect(try instance(d).missing == ["unit"])
    var relaxed = d
    relaxed.requiresConfiguration = false
    #expect(try instance(relaxed).missing == [])
    #expect(try instance(relaxed).id == "a.b{unit=x.service}")
  }

  @Test func valuesAreCheckedAgainstSpecs() throws {
    let d = ControlDefinition(
      kind: "a.b", type: .button, displayName: "X", intent: .provider,
      parameters: [
        ParameterSpec(name: "color", type: .choice, choices: ["red", "green"]),
        ParameterSpec(name: "n", type: .integer, minimum: 1, maximum: 3),
        ParameterSpec(name: "flag", type: .boolean),
      ])
    #expect(throws: ParameterProblems.self) { try instance(d, ["color": .string("blue")]) }
    do {
      _ = try ControlInstance(
        definition: d,
        configuration: ["color": "blue", "n": 9, "flag": "yes", "colour": "red", "m": [1]] as JSONObject)
      Issue.record("expected problems")
    } catch {
      #expect(
        error.problems.map(\.description) == [
          #"color: must be one of "red", "green""#,
          "n: must be at most 3",
          "flag: must be a boolean",
          "colour: unknown parameter of a.b (did you mean color?); known: color, n, flag",
          "m: unknown parameter of a.b; known: color, n, flag",
        ])
    }
    do {
      _ = try ControlInstance(definition: d, configuration: ["n": 0, "flag": [true], "n": 1] as JSONObject)
      Issue.record("expected problems")
    } catch {
      #expect(
        error.problems.map(\.description) == [
          "n: given more than once", "n: must be at least 1", "flag: must be a boolean",
        ])
    }
    do {
      // The typed entry point checks too.
      _ = try instance(d, ["n": .string("1"), "color": .integer(1)])
      Issue.record("expected problems")
    } catch {
      #expect(error.problems.map(\.description) == ["color: must be a string", "n: must be an integer"])
    }
    #expect(
      try instance(d, ["n": .integer(1), "flag": .boolean(true), "color": .string("red")]).id
        == "a.b{color=red,flag=true,n=1}")
  }

  @Test func noParametersMeansNoneAccepted() {
    do {
      _ = try ControlInstance(definition: timer, configuration: ["x": 1] as JSONObject)
      Issue.record("expected problems")
    } catch {
      #expect(error.description == "x: unknown parameter: org.example.timer takes no parameters")
    }
  }

  @Test func parameterEnvironment() throws {
    let i = try instance(flashlight, ["led": .string("green")])
    #expect(i.parameterEnvironment == ["ACTIOND_PARAM_LED": "green", "ACTIOND_PARAM_LEVEL": "1"])
    #expect(ParameterSpec.environmentName(for: "unit_name") == "ACTIOND_PARAM_UNIT_NAME")
  }

  @Test func parameterNames() {
    for good in ["led", "a", "unit_name", "x2"] { #expect(ParameterSpec.isValidName(good), "\(good)") }
    for bad in ["", "Led", "2x", "_a", "a-b", "a.b", String(repeating: "a", count: 65)] {
      #expect(!ParameterSpec.isValidName(bad), "\(bad)")
    }
  }

  @Test func kinds() {
    for good in ["org.example.timer", "a.b", "com.x-y.z_1", "org.actiond.work-timer"] {
      #expect(ControlDefinition.isValidKind(good), "\(good)")
    }
    for bad in ["timer", "", ".a", "a.", "a..b", "a.-b", "a.b c", "a/b.c", String(repeating: "a.", count: 128) + "a"] {
      #expect(!ControlDefinition.isValidKind(bad), "\(bad)")
    }
  }
}

@Suite struct ConfigSubstitutionTests {
  @Test func wholeValuesNeverSplit() throws {
    let values: [String: ParameterValue] = [
      "unit": .string("a b;rm -rf / $(x)"), "n": .integer(3), "on": .boolean(false),
    ]
    let spec = ExecSpec(
      argv: ["/bin/systemctl", "start", "${unit}", "--n=${n}", "${on}"], environment: ["U": "${unit}"])
    let out = try spec.substituting(values)
    #expect(out.argv == ["/bin/systemctl", "start", "a b;rm -rf / $(x)", "--n=3", "false"])
    #expect(out.environment == ["U": "a b;rm -rf / $(x)"])
  }

  /// A spec without a `$` is returned as it is (the key-down's fast path); a placeholder in
  /// any single part of it (one argument, the working directory, one environment value)
  /// is still found, and a malformed one still fails.
  @Test func aPlaceholderInAnyOnePartIsSubstitutedAndNoneLeavesTheSpecAsItIs() throws {
    let plain = ExecSpec(argv: ["/bin/true", "a{b}c"], workingDirectory: "/srv", environment: ["A": "{x}"])
    #expect(try plain.substituting(["x": .string("y")]) == plain)
    let values: [String: ParameterValue] = ["x": .string("y")]
    #expect(try ExecSpec(argv: ["/bin/echo", "-", "${x}"]).substituting(values).argv == ["/bin/echo", "-", "y"])
    #expect(
      try ExecSpec(argv: ["/bin/true"], workingDirectory: "/srv/${x}").substituting(values).workingDirectory
        == "/srv/y")
    #expect(
      try ExecSpec(argv: ["/bin/true"], environment: ["A": "1", "B": "<${x}>"]).substituting(values).environment
        == ["A": "1", "B": "<y>"])
    #expect(
      try ExecSpec(argv: ["/bin/true"], environment: ["B": "$HOME"]).substituting(values).environment["B"] == "$HOME")
    #expect(throws: ParameterSubstitution.Failure.self) {
      try ExecSpec(argv: ["/bin/true"], environment: ["B": "${x"]).substituting(values)
    }
    #expect(throws: ParameterSubstitution.Failure.self) {
      try ExecSpec(argv: ["/bin/true"], workingDirectory: "/srv/${missing}").substituting(values)
    }
  }

  @Test func dollarIsLiteralUnlessBraced() throws {
    #expect(try ParameterSubstitution.substitute("$HOME/$1 $", values: [:]) == "$HOME/$1 $")
    #expect(try ParameterSubstitution.substitute("$${led} ${led}", values: ["led": .string("g")]) == "${led} g")
    #expect(try ParameterSubstitution.substitute("$$x", values: [:]) == "$$x")
    #expect(try ParameterSubstitution.placeholders(in: "${a}${b}-${a}") == ["a", "b", "a"])
  }

  @Test func malformedPlaceholders() {
    #expect(throws: ParameterSubstitution.Failure.self) { try ParameterSubstitution.placeholders(in: "${led") }
    #expect(throws: ParameterSubstitution.Failure.self) { try ParameterSubstitution.placeholders(in: "${LED}") }
    #expect(throws: ParameterSubstitution.Failure.self) { try ParameterSubstitution.placeholders(in: "${}") }
    do {
      _ = try ParameterSubstitution.substitute("${led}", values: [:])
      Issue.record("expected a failure")
    } catch {
      #expect(error.message == "parameter led has no value")
    }
  }

  @Test func intentsAndProvidersSubstitutePaths() throws {
    let values: [String: ParameterValue] = ["led": .string("green")]
    #expect(
      try flashlight.intent.substituting(values) == .write(path: "/sys/class/leds/green/brightness", on: "1", off: "0"))
    #expect(try flashlight.value?.substituting(values) == .file(path: "/sys/class/leds/green/brightness", on: "1"))
    #expect(try IntentSpec.state.substituting(values) == .state)
  }

  @Test func pathsTakeOneComponentPerValue() throws {
    #expect(flashlight.pathParameters == ["led"])
    #expect(timer.pathParameters.isEmpty)
    for bad in ["..", ".", "", "a/b", "../x"] {
      #expect(throws: ParameterSubstitution.Failure.self, "\(bad)") {
        try flashlight.intent.substituting(["led": .string(bad)])
      }
      #expect(throws: ParameterProblems.self, "\(bad)") {
        try ControlInstance(definition: flashlight, configuration: ["led": ParameterValue.string(bad)])
      }
    }
    // Arguments are not paths: a script path is a fine argument.
    let run = ExecSpec(argv: ["/bin/sh", "${path}"], workingDirectory: "/srv/${dir}")
    #expect(try run.substituting(["path": .string("/opt/x.sh"), "dir": .string("a")]).argv[1] == "/opt/x.sh")
    #expect(throws: ParameterSubstitution.Failure.self) {
      try run.substituting(["path": .string("/opt/x.sh"), "dir": .string("a/b")])
    }
    let d = ControlDefinition(
      kind: "a.b", type: .button, displayName: "Run", intent: .exec(run),
      parameters: [ParameterSpec(name: "path", type: .string), ParameterSpec(name: "dir", type: .string)])
    #expect(d.pathParameters == ["dir"])
    #expect(try ControlInstance(definition: d, configuration: ["path": "/opt/x.sh"] as JSONObject).isConfigured)
  }

  @Test func fileValues() {
    #expect(ValueProviderSpec.interpretFile("1\n", on: "1") == .on)
    #expect(ValueProviderSpec.interpretFile("255\n", on: "1") == .on)
    #expect(ValueProviderSpec.interpretFile(" 0 ", on: "1") == .off)
    #expect(ValueProviderSpec.interpretFile("active\n", on: "active") == .on)
    #expect(
      ValueProviderSpec.interpretFile("inactive", on: "active")
        == .unavailable(reason: "unexpected content \"inactive\""))
    #expect(ValueProviderSpec.interpretFile("\n", on: nil) == .unavailable(reason: "the file is empty"))
    #expect(ValueProviderSpec.interpretFile("-1", on: nil) == .off)
  }

  @Test func exitStatuses() {
    #expect(ValueProviderSpec.interpretExitStatus(0) == .on)
    #expect(ValueProviderSpec.interpretExitStatus(1) == .off)
    #expect(ValueProviderSpec.interpretExitStatus(3) == .unavailable(reason: "the value command exited with status 3"))
  }
}

@Suite struct ConfigMatchTests {
  private let gpio = InputDeviceInfo(
    syspath: "/sys/devices/platform/gpio-keys/input/input3/event3", devnode: "/dev/input/event3",
    name: "gpio-keys", phys: "gpio-keys/input0", bustype: 0x19, vendor: 0x0001, product: 0x0001,
    tags: ["actiond", "systemd"], properties: ["ACTIOND_BUTTON": "action", "ID_INPUT_KEY": "1"],
    links: ["/dev/input/by-path/platform-gpio-keys-event"])
  private let foot = InputDeviceInfo(
    syspath: "/sys/devices/pci0000:00/usb1/input/input9/event9", devnode: "/dev/input/event9",
    name: "PCsensor FootSwitch Keyboard", phys: "usb-0000:00:14.0-2/input0", uniq: "SN123", bustype: 3,
    vendor: 0x1a86, product: 0xe026, tags: [],
    links: [
      "/dev/input/by-id/usb-PCsensor_FootSwitch-event-kbd", "/dev/input/by-path/pci-0000:00:14.0-usb-0:2:1.0-event-kbd",
    ])

  @Test func defaultMatchIsTheActiondTag() {
    #expect(DeviceMatch.default.matches(gpio))
    #expect(!DeviceMatch.default.matches(foot))
  }

  @Test func eachRuleAlone() throws {
    #expect(DeviceMatch(properties: ["ACTIOND_BUTTON": try Glob("action")]).matches(gpio))
    #expect(!DeviceMatch(properties: ["ACTIOND_BUTTON": try Glob("other")]).matches(gpio))
    #expect(!DeviceMatch(properties: ["ACTIOND_BUTTON": try Glob("*")]).matches(foot))
    #expect(DeviceMatch(name: try Glob("*FootSwitch*")).matches(foot))
    #expect(!DeviceMatch(name: try Glob("FootSwitch")).matches(foot))
    #expect(DeviceMatch(phys: try Glob("usb-*-2/input0")).matches(foot))
    // A device without phys or uniq is compared as the empty string.
    #expect(DeviceMatch(phys: try Glob("*")).matches(InputDeviceInfo(syspath: "", devnode: nil, name: "x")))
    #expect(!DeviceMatch(phys: try Glob("?*")).matches(InputDeviceInfo(syspath: "", devnode: nil, name: "x")))
    #expect(DeviceMatch(uniq: try Glob("SN1[0-9][0-9]")).matches(foot))
    #expect(DeviceMatch(vendor: 0x1a86, product: 0xe026).matches(foot))
    #expect(!DeviceMatch(vendor: 0x1a86, product: 0xe027).matches(foot))
    #expect(DeviceMatch(link: try Glob("/dev/input/by-id/usb-PCsensor_*")).matches(foot))
    #expect(!DeviceMatch(link: try Glob("/dev/input/by-id/*")).matches(gpio))
    #expect(DeviceMatch(devnode: try Glob("/dev/input/event3")).matches(gpio))
    #expect(!DeviceMatch(devnode: try Glob("/dev/input/event3")).matches(foot))
    let nodeless = InputDeviceInfo(syspath: "/sys/x", devnode: nil, name: "gpio-keys", tags: ["actiond"])
    #expect(!DeviceMatch(tags: ["actiond"], devnode: try Glob("*")).matches(nodeless))
  }

  @Test func rulesAreANDed() throws {
    let both = DeviceMatch(tags: ["actiond"], name: try Glob("gpio-keys"))
    #expect(both.matches(gpio))
    var tagged = foot
    tagged.tags = ["actiond"]
    #expect(!both.matches(tagged))
    #expect(!DeviceMatch(tags: ["actiond", "seat"]).matches(gpio))
    #expect(DeviceMatch(tags: ["actiond", "systemd"]).matches(gpio))
  }

  @Test func globs() throws {
    let cases: [(String, String, Bool)] = [
      ("abc", "abc", true), ("abc", "abd", false), ("a*", "a", true), ("a*c", "abbbc", true), ("a*c", "abbb", false),
      ("*", "", true), ("?", "", false), ("?", "é", true), ("a?c", "abc", true), ("[abc]x", "bx", true),
      ("[!abc]x", "bx", false), ("[^abc]x", "dx", true), ("[a-c]", "b", true), ("[a-c]", "d", false),
      ("[]]", "]", true), ("[!]]", "a", true), ("\\*", "*", true), ("\\*", "a", false), ("[a-]", "-", true),
      ("*a*b*c*", "xaxbxcx", true), ("*a*b*c*", "xaxcxbx", false), ("**", "anything", true),
      ("*/event*", "/dev/input/event3", true),
    ]
    for (pattern, text, expected) in cases {
      #expect(try Glob(pattern).matches(text) == expected, "\(pattern) ~ \(text)")
    }
    #expect(throws: Glob.SyntaxError.self) { try Glob("[abc") }
    #expect(throws: Glob.SyntaxError.self) { try Glob("abc\\") }
    #expect(throws: Glob.SyntaxError.self) { try Glob("[z-a]") }
  }

  @Test func pathologicalGlobIsLinear() throws {
    // A backtracking matcher would take exponential time here; the iterative one does not.
    let g = try Glob(String(repeating: "*a", count: 30) + "b")
    #expect(!g.matches(String(repeating: "a", count: 200)))
  }

  @Test func description() throws {
    let m = DeviceMatch(tags: ["actiond"], name: try Glob("gpio*"), vendor: 0x1a86, product: 0xe026)
    #expect(m.description == #"tag=actiond name="gpio*" id=1a86:e026"#)
  }
}

@Suite struct ConfigBridgeTests {
  @Test func snapshotOfAToggle() throws {
    let i = try ControlInstance(definition: timer, configuration: [:] as [String: ParameterValue])
    let on = ControlPresentation(definition: timer, instance: i, value: .on).snapshot(performing: true)
    #expect(
      on
        == ControlSnapshot(
          kind: "org.example.timer", displayName: "Work Timer", type: .toggle, configuration: [:], value: true,
          valueText: "Running", symbol: "timer", tint: "orange", hint: "Hold to Stop", configured: true,
          available: true, performing: true, reason: nil))
    let unavailable = ControlPresentation(definition: timer, instance: i, value: .unavailable(reason: "timeout"))
      .snapshot()
    #expect(unavailable.value == nil)
    #expect(unavailable.available == false)
    #expect(unavailable.reason == "timeout")
    #expect(unavailable.hint == "Work Timer unavailable")
  }

  @Test func snapshotOfAnUnconfiguredInstance() throws {
    let i = try ControlInstance(definition: flashlight, configuration: ["level": ParameterValue.integer(4)])
    let s = ControlPresentation(definition: flashlight, instance: i, value: .unknown).snapshot()
    #expect(s.configured == false)
    #expect(s.available == false, "it cannot be performed until configured")
    #expect(s.reason == "Configure Flashlight: choose led")
    #expect(s.configuration == ["level": 4])
    #expect(s.hint == "Configure Flashlight: choose led")
  }

  @Test func snapshotOfAButton() throws {
    let i = try ControlInstance(definition: photo, configuration: [:] as [String: ParameterValue])
    let s = ControlPresentation(definition: photo, instance: i, value: .on).snapshot()
    #expect(s.type == .button)
    #expect(s.value == nil)
    #expect(s.valueText == nil)
  }

  @Test func configurationRoundTripsThroughJSONAndTheStore() throws {
    let i = try ControlInstance(
      definition: flashlight, configuration: ["led": ParameterValue.string("green"), "level": .integer(9)])
    #expect(i.configurationJSON == ["led": "green", "level": 9])
    let again = try ControlInstance(definition: flashlight, configuration: i.configurationJSON)
    #expect(again == i)
    let stored = StateSnapshot.Assignment(i)
    #expect(stored.kind == "org.example.flashlight")
    #expect(stored.configuration == ["led": "green", "level": 9])
  }

  @Test func buttonRecognizerSettings() throws {
    let b = ButtonConfig(name: "a", keyCode: 148, holdThreshold: .milliseconds(250), debounce: .milliseconds(5))
    let s = try b.recognizerSettings()
    #expect(s.holdThreshold == .milliseconds(250))
    #expect(s.debounce == .milliseconds(5))
    let bad = ButtonConfig(name: "a", keyCode: 148, holdThreshold: .milliseconds(50))
    #expect(throws: RecognizerSettings.Invalid.self) { try bad.recognizerSettings() }
    #expect(ButtonConfig.holdThresholdRangeMs == 100...10_000)
    #expect(ButtonConfig.debounceRangeMs == 0...200)
    #expect(b.keyName == "KEY_PROG1")
  }
}

@Suite struct ConfigSuggestionTests {
  @Test func suggestions() {
    let keys = ["holdThresholdMs", "debounceMs", "grab", "on", "off", "warning", "configuration"]
    #expect(closestMatch(to: "holdTresholdMs", in: keys) == "holdThresholdMs")
    #expect(closestMatch(to: "GRAB", in: keys) == "grab")
    #expect(closestMatch(to: "garb", in: keys) == "grab")  // a swap is one edit
    #expect(closestMatch(to: "of", in: keys) == "off")  // ties prefer the word's continuation
    #expect(closestMatch(to: "warn", in: keys) == "warning")
    #expect(closestMatch(to: "config", in: keys) == "configuration")
    #expect(closestMatch(to: "x", in: keys) == nil)
    #expect(closestMatch(to: "", in: keys) == nil)
    #expect(closestMatch(to: "shell", in: keys) == nil)
    #expect(editDistance(Array("kitten".utf8), Array("sitting".utf8)) == 3)
    #expect(editDistance([], Array("abc".utf8)) == 3)
  }
}

@Suite struct ConfigDefinitionJSONTests {
  /// Every definition prints as configuration that loads back to the same definition.
  @Test func definitionsRoundTrip() throws {
    let text = """
      { controls: [
        { kind: "a.unit", type: "toggle", displayName: "Unit", title: "T", description: "D",
          valueText: { on: "Up", off: "Down" }, symbol: { on: "s1", off: "s2" }, tint: "#abc",
          actionHint: { on: "Stop", off: "Start" }, previewValue: true, requiresConfiguration: true,
          intent: { type: "exec", argv: ["/bin/x", "${unit}"], timeoutMs: 1500, workingDirectory: "/tmp",
                    user: 65534, environment: { B: "2", A: "1" } },
          value: { type: "exec", argv: ["is-up", "${unit}"], user: "nobody" },
          parameters: [
            { name: "unit", type: "string", required: true, title: "Unit", description: "which" },
            { name: "n", type: "integer", minimum: -1, maximum: 5, default: 0 },
            { name: "c", type: "choice", choices: ["x", "y"], default: "y" },
            { name: "b", type: "boolean", default: true },
          ] },
        { kind: "a.led", type: "toggle", displayName: "LED", intent: { type: "write", path: "/sys/${led}", on: "255" },
          value: { type: "file", path: "/sys/${led}", on: "255" },
          parameters: [{ name: "led", type: "string", required: true }] },
        { kind: "a.file", type: "toggle", displayName: "F", intent: { type: "provider" }, value: { type: "file", path: "/f" } },
        { kind: "a.app", type: "toggle", displayName: "App", intent: { type: "provider" }, value: { type: "provider" } },
        { kind: "a.timer", type: "toggle", displayName: "Timer", intent: { type: "state" } },
        { kind: "a.photo", type: "button", displayName: "Photo", symbol: "camera", tint: "red", intent: { type: "exec", argv: ["snap"] } },
        { kind: "a.poke", type: "button", displayName: "Poke", actionHint: "Poke It", intent: { type: "write", path: "/p" } },
      ] }
      """
    let original = try load(text)
    #expect(original.controls.count == 7)
    let printed = JSONEncoding.pretty(.array(original.controls.map(\.json)))
    let reloaded = try load("{}", dropIns: [ConfigurationSource(name: "actiond.json", text: printed)])
    #expect(reloaded.controls == original.controls)
    let timerJSON = original.controls[4].json
    #expect(timerJSON["value"] == ["type": "store", "initial": false])
    #expect(timerJSON["actionHint"] == ["on": "Turn Off", "off": "Turn On"])
    #expect(original.controls[5].json["actionHint"] == "Photo")
    #expect(original.controls[5].json["value"] == nil)
  }
}
