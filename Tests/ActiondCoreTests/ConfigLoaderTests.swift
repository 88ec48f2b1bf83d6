// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

/// Loads `text` as the main file `actiond.json`; returns the problems rendered as lines.
func problems(_ text: String, dropIns: [ConfigurationSource] = []) -> [String] {
  do {
    _ = try ConfigurationLoader.load(main: ConfigurationSource(name: "actiond.json", text: text), dropIns: dropIns)
    return []
  } catch {
    return error.problems.map(\.description)
  }
}

func load(_ text: String, dropIns: [ConfigurationSource] = []) throws -> Configuration {
  try ConfigurationLoader.load(main: ConfigurationSource(name: "actiond.json", text: text), dropIns: dropIns)
}

/// A minimal valid toggle definition, in JSON5, for building test files.
let timerControl = """
  { kind: "org.example.timer", type: "toggle", displayName: "Timer", intent: { type: "state" } }
  """

@Suite struct ConfigLoaderTests {
  @Test func embeddedDefaultValidates() throws {
    let config = try ConfigurationLoader.load(main: nil)
    #expect(config.buttons.count == 1)
    let button = try #require(config.buttons.first)
    #expect(button.name == "action")
    #expect(button.keyCode == 148)  // KEY_PROG1
    #expect(button.keyName == "KEY_PROG1")
    #expect(button.match == DeviceMatch(tags: ["actiond"]))
    #expect(button.holdThreshold == .milliseconds(600))
    #expect(button.debounce == .zero)
    #expect(button.grab == false)
    let timer = try #require(config.control(kind: DefaultConfiguration.workTimerKind))
    #expect(timer.type == .toggle)
    #expect(timer.displayName == "Work Timer")
    #expect(timer.valueText == OnOff(on: "Running", off: "Stopped"))
    #expect(timer.actionHint == OnOff(on: "Stop", off: "Start"))
    #expect(timer.intent == .state)
    #expect(timer.value == .store(initial: false))
    #expect(timer.source == ConfigurationLoader.embeddedDefaultName)
    #expect(config.assignments["action"]?[.hold]?.instance.id == DefaultConfiguration.workTimerKind)
    #expect(ControlPresentation.hint(for: timer, missing: [], value: .off) == "Hold to Start")
    #expect(ControlPresentation.hint(for: timer, missing: [], value: .on) == "Hold to Stop")
    #expect(ControlPresentation.valueText(for: timer, value: .on) == "Running")
    #expect(config.socket == SocketSettings())
    #expect(config.stateDirectory == "/var/lib/actiond")
    #expect(config.controlsDirectory == "/etc/actiond/controls.d")
  }

  @Test func emptyObjectGivesDefaults() throws {
    let config = try load("{}")
    #expect(config == Configuration())
    #expect(config.socket.maxClients == 64)
    #expect(config.socket.mode == 0o660)
    #expect(config.logLevel == .info)
  }

  @Test func acceptsJSON5() throws {
    let config = try load(
      """
      // comment
      {
        /* block */
        buttons: [{ name: 'foot', key: 'BTN_0', holdThresholdMs: 0x3e8, }],
        controls: [\(timerControl),],
        assignments: { foot: "org.example.timer", },
      }
      """)
    #expect(config.buttons[0].holdThreshold == .milliseconds(1000))
    #expect(config.buttons[0].keyCode == 0x100)
    #expect(config.assignments["foot"]?[.hold]?.instance.kind == "org.example.timer")
  }

  @Test func syntaxErrorNamesFileLineAndColumn() {
    #expect(
      problems("{\n  buttons: [\n    { name: \"a\" key: 1 }\n  ]\n}") == [
        "actiond.json:3: expected ',' or '}' in object, got 'k' (column 17)"
      ])
  }

  @Test func renderedLikeTheBriefExample() {
    let text = """
      {
        controls: [
          \(timerControl),
          { kind: "org.example.b", type: "button", displayName: "B", intent: { type: "provider" } },
          {
            kind: "org.example.c",
            type: "button",
            displayName: "C",
            intent: {
              type: "exec",
              argv: [],
            },
          },
        ],
      }
      """
    #expect(problems(text) == ["actiond.json:11: controls[2].intent.argv: must not be empty"])
  }

  @Test func reportsEveryProblemAtOnceInLineOrder() {
    let text = """
      {
        socket: { mode: 660, maxClients: 0, path: "relative.sock" },
        stateDirectory: "var/lib",
        logLevel: "verbose",
        buttons: [
          { name: "action", key: "KEY_PROG9", holdThresholdMs: 50 },
          { name: "action", key: "KEY_PROG1", debounceMs: 201 },
          { key: 3.5, grap: true },
        ],
        controls: [
          { kind: "timer", type: "switch", displayName: "", intent: { type: "exec", argv: "ls -l" } },
        ],
        assignments: { acton: "org.example.nothing" },
        extra: 1,
      }
      """
    #expect(
      problems(text) == [
        #"actiond.json:2: socket.mode: must be an octal string such as "0660" (a JSON number would be read as decimal)"#,
        "actiond.json:2: socket.maxClients: must be between 1 and 1024, got 0",
        #"actiond.json:2: socket.path: must be an absolute path (starting with /), got "relative.sock""#,
        #"actiond.json:3: stateDirectory: must be an absolute path (starting with /), got "var/lib""#,
        #"actiond.json:4: logLevel: must be one of debug, info, notice, warning, error, got "verbose""#,
        #"actiond.json:6: buttons[0].key: unknown key name "KEY_PROG9" (did you mean KEY_PROG1?)"#,
        "actiond.json:6: buttons[0].holdThresholdMs: must be between 100 and 10000 ms, got 50",
        "actiond.json:7: buttons[1].name: duplicate button name action (also buttons[0], line 6)",
        "actiond.json:7: buttons[1].debounceMs: must be between 0 and 200 ms, got 201",
        #"actiond.json:8: buttons[2].name: missing (a name such as "action")"#,
        "actiond.json:8: buttons[2].key: must be an integer, got a fraction",
        "actiond.json:8: buttons[2].grap: unknown key (did you mean grab?)",
        #"actiond.json:11: controls[0].kind: must be a reverse-DNS identifier such as "org.example.timer" (dot-separated labels of letters, digits, - and _), got "timer""#,
        #"actiond.json:11: controls[0].type: must be one of button, toggle, got "switch""#,
        "actiond.json:11: controls[0].displayName: must not be empty",
        "actiond.json:11: controls[0].intent.argv: must be an array of strings (no shell is involved), got string",
        #"actiond.json:13: assignments.acton: no button is named "acton" (did you mean action?); buttons: action"#,
        #"actiond.json:13: assignments.acton: no control has kind "org.example.nothing""#,
        "actiond.json:14: extra: unknown key",
      ])
  }

  @Test func duplicateKindsAcrossFilesNameBothFiles() {
    let dropIn = ConfigurationSource(name: "controls.d/timer.json", text: "\n\n" + timerControl)
    let main = "{\n  controls: [\n    \(timerControl)\n  ]\n}"
    #expect(
      problems(main, dropIns: [dropIn]) == [
        "controls.d/timer.json:3: kind: duplicate kind org.example.timer: already defined in actiond.json:3"
      ])
  }

  @Test func dropInsHoldOneDefinitionOrAnArray() throws {
    let one = ConfigurationSource(name: "a.json", text: timerControl)
    let many = ConfigurationSource(
      name: "b.json",
      text: """
        [
          { kind: "org.example.b1", type: "button", displayName: "B1", intent: { type: "provider" } },
          { kind: "org.example.b2", type: "button", displayName: "B2", intent: { type: "provider" } },
        ]
        """)
    let config = try load("{}", dropIns: [one, many])
    #expect(config.controls.map(\.kind) == ["org.example.timer", "org.example.b1", "org.example.b2"])
    #expect(config.controls.map(\.source) == ["a.json", "b.json", "b.json"])

    let bad = ConfigurationSource(name: "c.json", text: "[{ kind: \"x.y\", type: \"button\" }, 7]")
    #expect(
      problems("{}", dropIns: [bad, ConfigurationSource(name: "d.json", text: "\"no\"")]) == [
        #"c.json:1: [0].displayName: missing (the name lists and hints show)"#,
        #"c.json:1: [0].intent: missing (what a hold does: {type: "exec"|"write"|"state"|"provider"})"#,
        "c.json:1: [1]: must be a control definition object, got number",
        "d.json:1: must be a control definition object or an array of them, got string",
      ])
  }

  @Test func problemsInMainAndDropInsAreAllReported() {
    let broken = ConfigurationSource(name: "x.json", text: "{ kind: ")
    let other = ConfigurationSource(name: "y.json", text: "{ kind: \"a.b\", type: \"toggle\" }")
    let result = problems("{ logLevel: 3 }", dropIns: [broken, other])
    #expect(result.count == 4)
    #expect(result[0].hasPrefix("actiond.json:1: logLevel: must be one of"))
    #expect(result[1].hasPrefix("x.json:1: expected a value, got end of input"))
    #expect(result[2].hasPrefix("y.json:1: displayName: missing"))
  }

  @Test func embeddedDefaultIsUsedWithDropIns() throws {
    let config = try ConfigurationLoader.load(
      main: nil, dropIns: [ConfigurationSource(name: "t.json", text: timerControl)])
    #expect(config.controls.map(\.kind) == [DefaultConfiguration.workTimerKind, "org.example.timer"])
  }

  @Test func controlsDirectoryIsReadBeforeLoading() {
    #expect(ConfigurationLoader.controlsDirectory(in: nil) == "/etc/actiond/controls.d")
    let s = ConfigurationSource(name: "a", text: "{ controlsDirectory: '/srv/controls' }")
    #expect(ConfigurationLoader.controlsDirectory(in: s) == "/srv/controls")
    let bad = ConfigurationSource(name: "a", text: "{ controlsDirectory: ")
    #expect(ConfigurationLoader.controlsDirectory(in: bad) == "/etc/actiond/controls.d")
  }

  @Test func duplicateMembersAreErrors() {
    #expect(
      problems("{\n logLevel: 'info',\n logLevel: 'debug' }") == [
        "actiond.json:3: logLevel: given more than once"
      ])
  }

  @Test func topLevelMustBeAnObject() {
    #expect(problems("[]") == ["actiond.json:1: must be an object (the configuration), got array"])
  }
}

@Suite struct ConfigMutationTests {
  /// Damaged files (truncated, bytes replaced, lines dropped or doubled) never crash the
  /// loader, and every problem it reports points into the file.
  @Test func damagedFilesAreReportedNotCrashed() {
    var rng = SplitMix64(seed: 0xAC71_04D)
    let original = Array(DefaultConfiguration.text.utf8)
    let alphabet = Array("{}[]:,\"'/*\n 0123456789abcxyzKEY_-.$".utf8)
    var rejected = 0
    for round in 0..<2000 {
      var bytes = original
      switch round % 4 {
      case 0:
        bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &rng)))
      case 1:
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
          bytes[Int.random(in: 0..<bytes.count, using: &rng)] = alphabet.randomElement(using: &rng)!
        }
      case 2:
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        lines.remove(at: Int.random(in: 0..<lines.count, using: &rng))
        bytes = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
      default:
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let i = Int.random(in: 0..<lines.count, using: &rng)
        lines.insert(lines[i], at: i)
        bytes = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
      }
      let text = String(decoding: bytes, as: UTF8.self)
      let lineCount = text.split(separator: "\n", omittingEmptySubsequences: false).count
      do {
        _ = try ConfigurationLoader.load(main: ConfigurationSource(name: "m.json", text: text))
      } catch {
        rejected += 1
        #expect(!error.problems.isEmpty)
        for p in error.problems {
          #expect(p.file == "m.json")
          #expect((1...lineCount).contains(p.line ?? 0), "\(p) in:\n\(text)")
          #expect(!p.message.isEmpty)
        }
      }
    }
    // The mutations must actually exercise the error paths.
    #expect(rejected > 1000)
  }
}
