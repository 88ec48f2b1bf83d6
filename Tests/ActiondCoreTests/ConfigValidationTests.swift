// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

/// Problems of a one-line main file, without the `actiond.json:1: ` prefix.
private func check(_ text: String, dropIns: [ConfigurationSource] = []) -> [String] {
  problems(text, dropIns: dropIns).map { line in
    line.hasPrefix("actiond.json:1: ") ? String(line.dropFirst("actiond.json:1: ".count)) : line
  }
}

/// Problems of a main file with one control definition (written as JSON5 object members).
private func control(_ members: String) -> [String] {
  check("{ controls: [{ \(members) }] }")
}

private let toggle = #"kind: "a.b", type: "toggle", displayName: "T""#
private let button = #"kind: "a.b", type: "button", displayName: "B""#

@Suite struct ConfigSocketValidationTests {
  @Test func socketSettingsAreRead() throws {
    let c = try load(
      #"{ socket: { path: "/run/x.sock", group: "input", mode: "0600", controlGroup: 1001, controlUsers: ["alice", 1000], maxClients: 8 } }"#
    )
    #expect(
      c.socket
        == SocketSettings(
          path: "/run/x.sock", group: .name("input"), mode: 0o600, controlGroup: .id(1001),
          controlUsers: [.name("alice"), .id(1000)], maxClients: 8))
  }

  @Test func socketProblems() {
    let long = "/" + String(repeating: "a", count: 107)
    #expect(
      check(
        #"{ socket: { path: "\#(long)", group: "Bad Name", controlGroup: true, controlUsers: "bob", maxClients: 1025, owner: 1 } }"#
      )
        == [
          "socket.path: is too long for a Unix socket (at most 107 bytes, got 108)",
          "socket.group: must be a user or group name (letters, digits, _ and -, at most 32) or a number",
          "socket.controlGroup: must be a name or a number, got boolean",
          "socket.controlUsers: must be an array of user names or uids, got string",
          "socket.maxClients: must be between 1 and 1024, got 1025",
          "socket.owner: unknown key",
        ])
    #expect(
      check(#"{ socket: { controlUsers: [-1, "x y"] } }"#) == [
        "socket.controlUsers[0]: must be between 0 and 4294967294, got -1",
        "socket.controlUsers[1]: must be a user or group name (letters, digits, _ and -, at most 32) or a number",
      ])
    #expect(check(#"{ socket: 1 }"#) == ["socket: must be an object, got number"])
  }

  @Test func modes() throws {
    #expect(try load(#"{ socket: { mode: "666" } }"#).socket.mode == 0o666)
    #expect(try load(#"{ socket: { mode: "0777" } }"#).socket.mode == 0o777)
    #expect(
      check(#"{ socket: { mode: "0999" } }"#) == [
        #"socket.mode: must be octal permission bits between "000" and "0777", got "0999""#
      ])
    #expect(
      check(#"{ socket: { mode: "01777" } }"#) == [
        #"socket.mode: must be octal permission bits between "000" and "0777", got "01777""#
      ])
    #expect(
      check(#"{ socket: { mode: "0060" } }"#) == [
        #"socket.mode: must give the owner read and write access (0600), got "0060""#
      ])
    #expect(
      check(#"{ socket: { mode: 432 } }"#) == [
        #"socket.mode: must be an octal string such as "0660" (a JSON number would be read as decimal)"#
      ])
  }

  @Test func topLevelTypes() {
    #expect(
      check(
        #"{ stateDirectory: 1, controlsDirectory: "etc", buttons: {}, controls: {}, assignments: [], logLevel: "debug" }"#
      )
        == [
          "stateDirectory: must be a string, got number",
          #"controlsDirectory: must be an absolute path (starting with /), got "etc""#,
          "buttons: must be an array of buttons, got object",
          "controls: must be an array of control definitions, got object",
          "assignments: must be an object of button name → control, got array",
        ])
    #expect(check(#"{ stateDirectry: "/x" }"#) == ["stateDirectry: unknown key (did you mean stateDirectory?)"])
    #expect(check(#"{ loglevel: "info" }"#) == ["loglevel: unknown key (did you mean logLevel?)"])
    #expect(check(#"{ stateDirectory: "/a\u0000b" }"#) == ["stateDirectory: must not contain a NUL character"])
  }

  @Test func logLevels() throws {
    for level in LogLevel.allCases {
      #expect(try load(#"{ logLevel: "\#(level.name)" }"#).logLevel == level)
    }
    #expect(
      check(#"{ logLevel: "warn" }"#) == [
        #"logLevel: must be one of debug, info, notice, warning, error, got "warn" (did you mean warning?)"#
      ])
    #expect(LogLevel.debug < .error)
  }
}

@Suite struct ConfigButtonValidationTests {
  @Test func buttonsAreRead() throws {
    let c = try load(
      #"{ buttons: [{ name: "foot", key: 0x2f0, holdThresholdMs: 100, debounceMs: 20, grab: true, match: { id: "1a86:E026", name: "Foot*" } }, { name: "b.2", key: "BTN_A" }] }"#
    )
    let foot = c.buttons[0]
    #expect(foot.keyCode == 0x2f0)
    #expect(foot.keyName == "KEY_0x2f0")
    #expect(foot.holdThreshold == .milliseconds(100))
    #expect(foot.debounce == .milliseconds(20))
    #expect(foot.grab)
    let footName = try Glob("Foot*")
    #expect(foot.match == DeviceMatch(name: footName, vendor: 0x1a86, product: 0xe026))
    #expect(c.buttons[1].keyCode == 0x130)
    #expect(c.buttons[1].keyName == "BTN_SOUTH")  // the alias resolves to libevdev's name
    #expect(c.button(named: "b.2")?.match == .default)
    #expect(try load(#"{ buttons: [{ name: "x", key: 148, match: {} }] }"#).buttons[0].match == .default)
    #expect(
      try load(#"{ buttons: [{ name: "x", key: 1, holdThresholdMs: 10000, debounceMs: 200 }] }"#).buttons.count == 1)
  }

  @Test func namesAndKeys() {
    #expect(
      check(
        #"{ buttons: [{ name: "-x", key: "PROG1" }, { name: "y", key: "KEY_RESERVED" }, { name: "z", key: 768 }, { name: "w", key: true }, { name: "v", key: "NOTAKEY" }, 3] }"#
      )
        == [
          #"buttons[0].name: must be letters, digits, -, _ and . starting with a letter or digit (at most 64), got "-x""#,
          #"buttons[0].key: unknown key name "PROG1" (did you mean KEY_PROG1?)"#,
          "buttons[1].key: KEY_RESERVED is not a key",
          "buttons[2].key: must be between 1 and 767, got 768",
          #"buttons[3].key: must be a key name such as "KEY_PROG1" or a key code, got boolean"#,
          #"buttons[4].key: unknown key name "NOTAKEY"; names are those of linux/input-event-codes.h, such as KEY_PROG1 or BTN_0"#,
          "buttons[5]: must be an object, got number",
        ])
    #expect(
      check(#"{ buttons: [{ name: "x", key: "key_prog1" }] }"#) == [
        #"buttons[0].key: unknown key name "key_prog1" (did you mean KEY_PROG1?)"#
      ])
    #expect(
      check(#"{ buttons: [{ name: "x" }] }"#) == [
        #"buttons[0].key: missing (a key name such as "KEY_PROG1" or a code)"#
      ])
  }

  @Test func timings() {
    #expect(
      check(
        #"{ buttons: [{ name: "a", key: 1, holdThresholdMs: 10001, debounceMs: -1, grab: "yes" }, { name: "b", key: 1, holdThresholdMs: 150, debounceMs: 150 }, { name: "c", key: 1, holdThresholdMs: 1.5 }] }"#
      )
        == [
          "buttons[0].holdThresholdMs: must be between 100 and 10000 ms, got 10001",
          "buttons[0].debounceMs: must be between 0 and 200 ms, got -1",
          "buttons[0].grab: must be true or false, got string",
          "buttons[1].debounceMs: must be shorter than holdThresholdMs (150)",
          "buttons[2].holdThresholdMs: must be an integer, got a fraction",
        ])
  }

  @Test func shadowedButtons() {
    #expect(
      check(
        #"{ buttons: [{ name: "a", key: "KEY_PROG1" }, { name: "b", key: 148 }, { name: "c", key: 148, match: { tag: "other" } }] }"#
      ) == [
        "buttons[1].key: buttons[0] (a) already uses KEY_PROG1 on the same devices: one would shadow the other"
      ])
  }

  @Test func matchRules() throws {
    let c = try load(
      #"{ buttons: [{ name: "a", key: 1, match: { tag: ["actiond", "seat"], property: { ACTIOND_BUTTON: "action", ID_BUS: "usb*" }, phys: "usb-*", uniq: "SN?", link: "/dev/input/by-id/*kbd", devnode: "/dev/input/event[0-9]" } }] }"#
    )
    let m = c.buttons[0].match
    #expect(m.tags == ["actiond", "seat"])
    // The globs are made outside #expect: swift-testing 6.0 (Debian 13's) expands the right
    // side of == into a non-throwing autoclosure.
    let properties = ["ACTIOND_BUTTON": try Glob("action"), "ID_BUS": try Glob("usb*")]
    let (phys, uniq) = (try Glob("usb-*"), try Glob("SN?"))
    let (link, devnode) = (try Glob("/dev/input/by-id/*kbd"), try Glob("/dev/input/event[0-9]"))
    #expect(m.properties == properties)
    #expect(m.phys == phys)
    #expect(m.uniq == uniq)
    #expect(m.link == link)
    #expect(m.devnode == devnode)
    #expect(m.name == nil)
    #expect(m.vendor == nil)
  }

  @Test func matchProblems() {
    #expect(
      check(
        #"{ buttons: [{ name: "a", key: 1, match: { tag: [], property: {}, name: "[x", id: "1a86-e026", link: "by-id/x", devnode: 3, vendor: "1a86" } }] }"#
      )
        == [
          "buttons[0].match.tag: must not be empty (leave tag out to match without a tag)",
          "buttons[0].match.property: must not be empty",
          "buttons[0].match.name: unclosed [ in pattern (write \\[ for a literal [)",
          #"buttons[0].match.id: must be vendor:product in hexadecimal, such as "046d:c52b", got "1a86-e026""#,
          #"buttons[0].match.link: must be an absolute path (starting with /), got "by-id/x""#,
          "buttons[0].match.devnode: must be a string, got number",
          "buttons[0].match.vendor: unknown key",
        ])
    #expect(
      check(
        #"{ buttons: [{ name: "a", key: 1, match: { tag: ["a b", 1], property: { "A-B": "x", C: 1, D: "\\" } } }] }"#)
        == [
          #"buttons[0].match.tag[0]: must be a udev tag (letters, digits, _ and -), got "a b""#,
          "buttons[0].match.tag[1]: must be a string, got number",
          "buttons[0].match.property.A-B: is not a udev property name (letters, digits and _)",
          "buttons[0].match.property.C: must be a string, got number",
          "buttons[0].match.property.D: pattern ends with a lone \\",
        ])
    #expect(
      check(#"{ buttons: [{ name: "a", key: 1, match: "gpio-keys" }] }"#) == [
        "buttons[0].match: must be an object, got string"
      ])
    #expect(
      check(#"{ buttons: [{ name: "a", key: 1, match: { id: "zzzz:0001" } }] }"#) == [
        #"buttons[0].match.id: must be vendor:product in hexadecimal, such as "046d:c52b", got "zzzz:0001""#
      ])
  }
}

@Suite struct ConfigControlValidationTests {
  @Test func fullToggleIsRead() throws {
    let c = try load(
      """
      { controls: [{ kind: "org.example.unit", type: "toggle", displayName: "Unit", title: "Systemd unit",
        description: "Starts and stops a unit", valueText: { on: "Active" }, symbol: "gear", tint: "#ff8800",
        actionHint: { on: "Stop", off: "Start" }, previewValue: true, requiresConfiguration: true,
        intent: { type: "exec", argv: ["/bin/systemctl", "${verb}", "--", "${unit}"], timeoutMs: 30000,
                  workingDirectory: "/", user: "nobody", environment: { LANG: "C", EMPTY: "" } },
        value: { type: "exec", argv: ["/bin/systemctl", "is-active", "--quiet", "${unit}"], timeoutMs: 2000 },
        parameters: [
          { name: "unit", type: "string", required: true, title: "Unit", description: "The unit to toggle" },
          { name: "verb", type: "choice", choices: ["start", "restart"], default: "start" },
          { name: "n", type: "integer", minimum: 0, maximum: 9, default: 3 },
          { name: "f", type: "boolean", default: false },
        ] }] }
      """)
    let d = try #require(c.control(kind: "org.example.unit"))
    #expect(d.title == "Systemd unit")
    #expect(d.description == "Starts and stops a unit")
    #expect(d.valueText == OnOff(on: "Active", off: "Off"))
    #expect(d.symbol == OnOff(both: "gear"))
    #expect(d.tint == "#ff8800")
    #expect(d.previewValue)
    #expect(d.requiresConfiguration)
    #expect(
      d.intent
        == .exec(
          ExecSpec(
            argv: ["/bin/systemctl", "${verb}", "--", "${unit}"], timeout: .milliseconds(30000), workingDirectory: "/",
            user: .name("nobody"), environment: ["LANG": "C", "EMPTY": ""])))
    #expect(
      d.value == .exec(ExecSpec(argv: ["/bin/systemctl", "is-active", "--quiet", "${unit}"], timeout: .seconds(2))))
    #expect(
      d.parameters == [
        ParameterSpec(name: "unit", type: .string, required: true, title: "Unit", description: "The unit to toggle"),
        ParameterSpec(name: "verb", type: .choice, choices: ["start", "restart"], defaultValue: .string("start")),
        ParameterSpec(name: "n", type: .integer, defaultValue: .integer(3), minimum: 0, maximum: 9),
        ParameterSpec(name: "f", type: .boolean, defaultValue: .boolean(false)),
      ])
    #expect(d.source == "actiond.json")
  }

  @Test func buttonAndIntentsAreRead() throws {
    let c = try load(
      """
      { controls: [
        { kind: "a.photo", type: "button", displayName: "Photo", actionHint: "Shoot", symbol: "camera",
          intent: { type: "exec", argv: ["fswebcam", ""] } },
        { kind: "a.led", type: "toggle", displayName: "LED", intent: { type: "write", path: "/sys/x", on: "255" },
          value: { type: "file", path: "/sys/x" } },
        { kind: "a.app", type: "toggle", displayName: "App", intent: { type: "provider" }, value: { type: "provider" } },
        { kind: "a.store", type: "toggle", displayName: "S", intent: { type: "state" }, value: { type: "store", initial: true } },
        { kind: "a.poke", type: "button", displayName: "Poke", intent: { type: "write", path: "/sys/y" } },
      ] }
      """)
    #expect(c.controls[0].actionHint == OnOff(both: "Shoot"))
    #expect(c.controls[0].intent == .exec(ExecSpec(argv: ["fswebcam", ""])))
    #expect(c.controls[0].valueText == nil)
    #expect(c.controls[0].value == nil)
    #expect(c.controls[1].intent == .write(path: "/sys/x", on: "255", off: "0"))
    #expect(c.controls[1].value == .file(path: "/sys/x", on: nil))
    #expect(c.controls[2].intent == .provider)
    #expect(c.controls[2].value == .provider)
    #expect(c.controls[3].value == .store(initial: true))
    #expect(c.controls[4].intent == .write(path: "/sys/y", on: "1", off: "0"))
  }

  @Test func identityProblems() {
    #expect(
      control(#"type: "toggle", displayName: "T", intent: { type: "state" }"#) == [
        #"controls[0].kind: missing (a reverse-DNS identifier such as "org.example.timer")"#
      ])
    #expect(
      control(#"kind: "a.b", displayName: "T", intent: { type: "state" }"#) == [
        #"controls[0].type: missing ("button" or "toggle")"#
      ])
    #expect(
      control(#"kind: "a.b", type: "toggle", intent: { type: "state" }"#) == [
        "controls[0].displayName: missing (the name lists and hints show)"
      ])
    #expect(
      control(
        #"kind: "a.b", type: "toggle", displayName: "\#(String(repeating: "x", count: 101))", intent: { type: "state" }"#
      )
        == ["controls[0].displayName: is too long (at most 100 characters)"])
    #expect(
      control("\(toggle), intent: { type: \"state\" }, Kind: 1") == [
        "controls[0].Kind: unknown key (did you mean kind?)"
      ])
    #expect(
      check(#"{ controls: [{ \#(toggle), intent: { type: "state" } }, { \#(toggle), intent: { type: "state" } }] }"#)
        == [
          "controls[1].kind: duplicate kind a.b: already defined in actiond.json:1"
        ])
    #expect(check("{ controls: [1] }") == ["controls[0]: must be a control definition object, got number"])
  }

  @Test func presentationProblems() {
    #expect(
      control(
        #"\#(button), intent: { type: "provider" }, valueText: { on: "x" }, symbol: { on: "a", off: "b" }, actionHint: { on: "a", off: "b" }, tint: "chartreuse", previewValue: true, value: { type: "store" }"#
      )
        == [
          "controls[0].valueText: only toggles have a value text (a button has no state)",
          "controls[0].symbol: a button has no on/off state: give symbol as one string",
          "controls[0].actionHint: a button has no on/off state: give actionHint as one string",
          #"controls[0].tint: must be a colour name (red, orange, yellow, green, mint, teal, cyan, blue, indigo, purple, pink, brown, gray, white, black) or #rrggbb, got "chartreuse""#,
          "controls[0].previewValue: only toggles have a preview value (a button has no state)",
          "controls[0].value: only toggles have a value provider (a button has no state)",
        ])
    #expect(
      control(
        ##"\##(toggle), intent: { type: "state" }, valueText: { on: "", of: "x" }, symbol: { on: "a" }, actionHint: { on: "Hold to Stop", off: "Start" }, previewValue: 1, tint: "#12345""##
      )
        == [
          "controls[0].valueText.on: must not be empty",
          "controls[0].valueText.of: unknown key (did you mean off?)",
          "controls[0].symbol.off: missing (the symbol while off)",
          #"controls[0].actionHint.on: write only the verb ("Start"): the daemon always says "Hold to <verb>""#,
          "controls[0].previewValue: must be true or false, got number",
          ##"controls[0].tint: must be a colour name (red, orange, yellow, green, mint, teal, cyan, blue, indigo, purple, pink, brown, gray, white, black) or #rrggbb, got "#12345""##,
        ])
    #expect(
      control(#"\#(button), intent: { type: "provider" }, actionHint: "hold to go", symbol: 3"#) == [
        #"controls[0].actionHint: write only the verb ("Start"): the daemon always says "Hold to <verb>""#,
        "controls[0].symbol: must be a string, got number",
      ])
    #expect(
      control(#"\#(toggle), intent: { type: "state" }, actionHint: ["a"]"#) == [
        "controls[0].actionHint: must be a string or {on, off}, got array"
      ])
  }

  @Test func intentProblems() {
    #expect(
      control(toggle) == [
        #"controls[0].intent: missing (what a hold does: {type: "exec"|"write"|"state"|"provider"})"#
      ])
    #expect(
      control("\(toggle), intent: \"state\"") == [
        "controls[0].intent: must be an object with a type (exec, write, state, provider), got string"
      ])
    #expect(control("\(toggle), intent: {}") == ["controls[0].intent.type: missing (exec, write, state, provider)"])
    #expect(
      control("\(toggle), intent: { type: \"shell\" }") == [
        #"controls[0].intent.type: must be one of exec, write, state, provider, got "shell""#
      ])
    #expect(control("\(toggle), intent: { type: \"state\", path: \"/x\" }") == ["controls[0].intent.path: unknown key"])
    #expect(control("\(toggle), intent: { type: \"provider\", argv: [] }") == ["controls[0].intent.argv: unknown key"])
    #expect(
      control("\(button), intent: { type: \"state\" }") == [
        "controls[0].intent.type: a state intent needs a toggle (a button has no state to change)"
      ])
    #expect(
      control("\(toggle), intent: { type: \"state\" }, value: { type: \"file\", path: \"/x\" }") == [
        #"controls[0].intent.type: a state intent only changes the daemon's store, so value.type must be "store", not "file""#
      ])
  }

  @Test func execProblems() {
    #expect(
      control("\(button), intent: { type: \"exec\" }") == [
        #"controls[0].intent.argv: missing (the program and its arguments, e.g. ["/usr/bin/systemctl", "start", "x"])"#
      ])
    #expect(
      control(
        #"\#(button), intent: { type: "exec", argv: ["", 1], timeoutMs: 99, workingDirectory: "tmp", user: "root", environment: { "1X": "a", ACTIOND_KIND: "b", OK: 3, "A-B": "c" }, shell: true }"#
      )
        == [
          "controls[0].intent.argv[0]: must not be empty",
          "controls[0].intent.argv[1]: must be a string, got number",
          "controls[0].intent.timeoutMs: must be between 100 and 3600000 ms, got 99",
          #"controls[0].intent.workingDirectory: must be an absolute path (starting with /), got "tmp""#,
          "controls[0].intent.user: must be an unprivileged user (leave user out to run as the daemon's own user)",
          #"controls[0].intent.environment["1X"]: is not a valid environment variable name (letters, digits and _, not starting with a digit)"#,
          "controls[0].intent.environment.ACTIOND_KIND: ACTIOND_* variables are set by the daemon",
          "controls[0].intent.environment.OK: must be a string, got number",
          "controls[0].intent.environment.A-B: is not a valid environment variable name (letters, digits and _, not starting with a digit)",
          "controls[0].intent.shell: unknown key",
        ])
    #expect(
      control(#"\#(button), intent: { type: "exec", argv: ["x"], user: 0, environment: [] }"#) == [
        "controls[0].intent.user: must be an unprivileged user (leave user out to run as the daemon's own user)",
        "controls[0].intent.environment: must be an object of NAME: value, got array",
      ])
    #expect(
      control(#"\#(button), intent: { type: "exec", argv: ["x"], timeoutMs: 3600001 }"#) == [
        "controls[0].intent.timeoutMs: must be between 100 and 3600000 ms, got 3600001"
      ])
  }

  @Test func programMustNotBeARelativePath() {
    #expect(
      control(#"\#(button), intent: { type: "exec", argv: ["bin/run"] }"#) == [
        #"controls[0].intent.argv[0]: must be an absolute path or a program name looked up in PATH, got "bin/run""#
      ])
    #expect(control(#"\#(button), intent: { type: "exec", argv: ["run", "a/b"] }"#) == [])
  }

  @Test func pathParametersMustBeOneComponent() {
    #expect(
      control(
        #"\#(toggle), intent: { type: "write", path: "/sys/class/leds/${led}/brightness" }, value: { type: "file", path: "/x/${mode}" }, parameters: [{ name: "led", type: "string", default: ".." }, { name: "mode", type: "choice", choices: ["a", "b/c"], default: "a" }]"#
      )
        == [
          "controls[0].parameters[0].default: must not be . or .. (it is used in a path)",
          "controls[0].parameters[1].choices[1]: must not contain / (it is used in a path as one component)",
        ])
    // A broken parameter is reported once, not again for each placeholder naming it.
    #expect(
      control(
        #"\#(toggle), intent: { type: "write", path: "/x/${mode}" }, parameters: [{ name: "mode", type: "choice", choices: [""], default: "a" }]"#
      )
        == ["controls[0].parameters[0].choices[0]: must not be empty"])
    let led =
      #"{ kind: "a.led", type: "toggle", displayName: "LED", intent: { type: "write", path: "/sys/class/leds/${led}/brightness" }, parameters: [{ name: "led", type: "string", required: true }] }"#
    #expect(
      check(
        #"{ buttons: [{ name: "a", key: 1 }], controls: [\#(led)], assignments: { a: { kind: "a.led", configuration: { led: "../../../etc/shadow" } } } }"#
      )
        == ["assignments.a.configuration.led: must not contain / (it is used in a path as one component)"])
  }

  @Test func writeAndValueProblems() {
    #expect(
      control(#"\#(toggle), intent: { type: "write", on: 1 }"#) == [
        "controls[0].intent.path: missing (the file to write, e.g. /sys/class/leds/<led>/brightness)",
        "controls[0].intent.on: must be a string, got number",
      ])
    #expect(
      control(#"\#(button), intent: { type: "write", path: "/x", off: "0" }"#) == [
        "controls[0].intent.off: a button writes only `on` (it has no off state)"
      ])
    #expect(
      control(#"\#(toggle), intent: { type: "provider" }, value: { type: "file", on: "1" }"#) == [
        "controls[0].value.path: missing (the file to read)"
      ])
    #expect(
      control(#"\#(toggle), intent: { type: "provider" }, value: { type: "store", initial: "no" }"#) == [
        "controls[0].value.initial: must be true or false, got string"
      ])
    #expect(
      control(#"\#(toggle), intent: { type: "provider" }, value: { type: "exec", argv: [] }"#) == [
        "controls[0].value.argv: must not be empty"
      ])
    #expect(
      control(#"\#(toggle), intent: { type: "provider" }, value: { type: "dbus" }"#) == [
        #"controls[0].value.type: must be one of store, exec, file, provider, got "dbus""#
      ])
    #expect(
      control(#"\#(toggle), intent: { type: "provider" }, value: { type: "provider", x: 1 }"#) == [
        "controls[0].value.x: unknown key"
      ])
  }

  @Test func parameterProblems() {
    #expect(
      control(
        #"\#(button), intent: { type: "provider" }, parameters: [{ name: "Led", type: "string" }, { name: "a", type: "list" }, { name: "b", type: "integer", choices: ["x"], minimum: 5, maximum: 1 }, { name: "c", type: "choice" }, { name: "d", type: "choice", choices: [] }, { name: "e", type: "choice", choices: ["x", "x", 1] }, { name: "f", type: "string", minimum: 1 }, { type: "string" }, { name: "g", type: "string", required: "yes" }, 5]"#
      )
        == [
          #"controls[0].parameters[0].name: must be lower-case letters, digits and _, starting with a letter (at most 64), got "Led""#,
          #"controls[0].parameters[1].type: must be one of string, integer, boolean, choice, got "list""#,
          "controls[0].parameters[2].choices: only choice parameters have choices",
          "controls[0].parameters[2].maximum: must not be less than minimum (5)",
          "controls[0].parameters[3].choices: missing (a choice parameter needs its choices)",
          "controls[0].parameters[4].choices: must not be empty",
          #"controls[0].parameters[5].choices[1]: duplicate choice "x""#,
          "controls[0].parameters[5].choices[2]: must be a string, got number",
          "controls[0].parameters[6].minimum: only integer parameters have a minimum",
          #"controls[0].parameters[7].name: missing (a lower-case identifier such as "led")"#,
          "controls[0].parameters[8].required: must be true or false, got string",
          "controls[0].parameters[9]: must be an object, got number",
        ])
    #expect(
      control(
        #"\#(button), intent: { type: "provider" }, parameters: [{ name: "a", type: "string" }, { name: "a", type: "string" }]"#
      )
        == ["controls[0].parameters[1].name: duplicate parameter name a (also parameters[0])"])
    #expect(
      control(#"\#(button), intent: { type: "provider" }, parameters: {}"#) == [
        "controls[0].parameters: must be an array of parameters, got object"
      ])
  }

  @Test func parameterDefaults() {
    #expect(
      control(
        #"\#(button), intent: { type: "provider" }, parameters: [{ name: "a", type: "integer", default: "1" }, { name: "b", type: "choice", choices: ["x"], default: "y" }, { name: "c", type: "integer", maximum: 3, default: 4 }, { name: "d", type: "boolean", default: null }, { name: "e", type: "integer", default: 1.5 }]"#
      )
        == [
          "controls[0].parameters[0].default: must be an integer",
          #"controls[0].parameters[1].default: must be one of "x""#,
          "controls[0].parameters[2].default: must be at most 3",
          "controls[0].parameters[3].default: does not fit the parameter's type",
          "controls[0].parameters[4].default: does not fit the parameter's type",
        ])
  }

  @Test func requiresConfigurationNeedsARequiredParameter() {
    let message =
      "controls[0].requiresConfiguration: needs at least one required parameter (requiresConfiguration means: cannot run until they are chosen)"
    #expect(control("\(button), intent: { type: \"provider\" }, requiresConfiguration: true") == [message])
    #expect(
      control(
        #"\#(button), intent: { type: "provider" }, requiresConfiguration: true, parameters: [{ name: "a", type: "string" }]"#
      )
        == [message])
    #expect(
      control(
        #"\#(button), intent: { type: "provider" }, requiresConfiguration: true, parameters: [{ name: "a", type: "string", required: true }]"#
      )
        == [])
  }

  @Test func placeholders() {
    let params =
      #"parameters: [{ name: "led", type: "string", required: true }, { name: "opt", type: "string" }, { name: "dflt", type: "string", default: "x" }]"#
    #expect(
      control(
        #"\#(toggle), \#(params), intent: { type: "exec", argv: ["/bin/x", "${led}", "${dflt}", "${opt}", "${lde}", "${LED", "$${nothing}"], workingDirectory: "/${nope}", environment: { A: "${led}${opt}" } }, value: { type: "file", path: "/sys/${led}/${x}" }"#
      )
        == [
          "controls[0].intent.argv[3]: ${opt} may have no value: give parameter opt a default or make it required",
          "controls[0].intent.argv[4]: ${lde} names no parameter of this control (did you mean ${led}?)",
          "controls[0].intent.argv[5]: unterminated ${ (write $${ for a literal ${)",
          "controls[0].intent.workingDirectory: ${nope} names no parameter of this control",
          "controls[0].intent.environment.A: ${opt} may have no value: give parameter opt a default or make it required",
          "controls[0].value.path: ${x} names no parameter of this control",
        ])
    #expect(
      control(#"\#(toggle), intent: { type: "write", path: "/sys/${Led}" }"#) == [
        "controls[0].intent.path: ${Led} is not a parameter name (lower-case letters, digits and _)"
      ])
  }
}

@Suite struct ConfigAssignmentValidationTests {
  private let base =
    #"buttons: [{ name: "action", key: 148 }, { name: "foot", key: 149 }], controls: [{ kind: "a.led", type: "toggle", displayName: "LED", intent: { type: "write", path: "/sys/${led}" }, parameters: [{ name: "led", type: "choice", choices: ["red", "green"], required: true }, { name: "n", type: "integer", default: 2 }] }]"#

  @Test func bothFormsAreRead() throws {
    let c = try load(
      #"{ \#(base), assignments: { action: "a.led", foot: { kind: "a.led", configuration: { led: "green" } } } }"#)
    #expect(c.assignments["action"]?[.hold]?.instance.missing == ["led"])
    #expect(c.assignments["action"]?[.hold]?.instance.id == "a.led{n=2}")
    #expect(c.assignments["foot"]?[.hold]?.instance.id == "a.led{led=green,n=2}")
    #expect(c.assignments["foot"]?[.hold]?.instance.isConfigured == true)
  }

  @Test func problems() {
    #expect(
      check(
        #"{ \#(base), assignments: { action: { kind: "a.led", configuration: { led: "blue", n: "2", m: 1 }, config: {} }, foot: { configuration: [] }, hand: 7, "x y": "a.lde" } }"#
      )
        == [
          #"assignments.action.configuration.led: must be one of "red", "green""#,
          "assignments.action.configuration.n: must be an integer",
          "assignments.action.configuration.m: unknown parameter of a.led; known: led, n",
          "assignments.action.config: unknown key (did you mean configuration?)",
          "assignments.foot.kind: missing (the kind of the control to assign)",
          "assignments.foot.configuration: must be an object of parameter values, got array",
          #"assignments.hand: no button is named "hand"; buttons: action, foot"#,
          "assignments.hand: must be a kind, {kind, configuration, momentary} or {hold, doublePress, longHold}, got number",
          #"assignments["x y"]: no button is named "x y"; buttons: action, foot"#,
          #"assignments["x y"]: no control has kind "a.lde" (did you mean a.led?)"#,
        ])
    #expect(
      check(#"{ \#(base), assignments: { foot: { kind: "a.led", configuration: "red" } } }"#) == [
        "assignments.foot.configuration: must be an object of parameter values, got string"
      ])
    #expect(
      check(#"{ \#(base), assignments: { foot: { kind: 3 } } }"#) == [
        "assignments.foot.kind: must be a string, got number"
      ])
  }

  @Test func brokenDefinitionsAndButtonsAreNotReportedTwice() {
    #expect(
      check(
        #"{ buttons: [{ name: "action", key: "NOPE" }], controls: [{ kind: "a.b", type: "toggle" }], assignments: { action: "a.b" } }"#
      )
        == [
          #"buttons[0].key: unknown key name "NOPE"; names are those of linux/input-event-codes.h, such as KEY_PROG1 or BTN_0"#,
          "controls[0].displayName: missing (the name lists and hints show)",
          #"controls[0].intent: missing (what a hold does: {type: "exec"|"write"|"state"|"provider"})"#,
        ])
  }

  @Test func assignmentsMayUseDropInKinds() throws {
    let dropIn = ConfigurationSource(name: "d.json", text: timerControl)
    let c = try load(
      #"{ buttons: [{ name: "a", key: 1 }], assignments: { a: "org.example.timer" } }"#, dropIns: [dropIn])
    #expect(c.assignments["a"]?[.hold]?.instance.kind == "org.example.timer")
  }
}
