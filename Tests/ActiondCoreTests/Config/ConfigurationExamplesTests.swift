// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import FoundationEssentials
import Testing

/// The shipped examples and the examples in docs/configuration.md are configuration
/// like any other: they must validate, and documented error output must be what the
/// loader really prints.
@Suite struct ConfigurationExamplesTests {
  /// The repository's top directory.
  private static let top = repositoryPath()

  private func read(_ relative: String) throws -> String {
    try String(contentsOfFile: Self.top + "/" + relative, encoding: .utf8)
  }

  /// examples/controls.d/*.json sorted by name, as the daemon reads drop-ins.
  private func exampleDropIns() throws -> [ConfigurationSource] {
    let dir = Self.top + "/examples/controls.d"
    guard FileManager.default.fileExists(atPath: dir) else { return [] }
    return try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".json") }.sorted().map {
      ConfigurationSource(name: "controls.d/\($0)", text: try read("examples/controls.d/\($0)"))
    }
  }

  /// examples/actiond.json is what `make install` puts in /etc: it must validate as is.
  @Test func installedExampleValidates() throws {
    let main = ConfigurationSource(name: "examples/actiond.json", text: try read("examples/actiond.json"))
    let config = try ConfigurationLoader.load(main: main)
    #expect(!config.buttons.isEmpty)
  }

  @Test func completeExampleValidates() throws {
    let main = ConfigurationSource(
      name: "examples/actiond-complete.json", text: try read("examples/actiond-complete.json"))
    let config = try ConfigurationLoader.load(main: main)
    #expect(config.buttons.count >= 3)
    #expect(config.assignments.count == config.buttons.count)
    #expect(config.controls.contains { $0.requiresConfiguration })
    #expect(config.assignments.values.contains { $0.values.contains { !$0.instance.isConfigured } })
  }

  /// The example drop-ins validate together (no duplicate kinds among them), on an empty
  /// main file so they are independent of examples/actiond.json.
  @Test func exampleDropInsValidate() throws {
    let dropIns = try exampleDropIns()
    let empty = ConfigurationSource(name: "actiond.json", text: "{}")
    let config = try ConfigurationLoader.load(main: empty, dropIns: dropIns)
    #expect(Set(config.controls.map(\.source)).count == dropIns.count)
  }

  /// A fenced block in the docs preceded by `<!-- example: KIND -->`.
  private struct Example {
    var kind: String
    var line: Int
    var text: String
    var expectedOutput: String?
  }

  /// Finds `<!-- example: main|drop-in|error|fragment -->` markers; the next fenced block
  /// is the example, and for `error` the fenced block after it is the expected output. A
  /// `fragment` is one or more top-level members (`socket: {...}`), checked in the complete
  /// example (examples/actiond-complete.json) in place of its own.
  private func docExamples() throws -> [Example] {
    let lines = try read("docs/configuration.md").split(separator: "\n", omittingEmptySubsequences: false).map(
      String.init)
    var examples: [Example] = []
    var i = 0
    func nextBlock() -> (Int, String)? {
      while i < lines.count, !lines[i].hasPrefix("```") { i += 1 }
      guard i < lines.count else { return nil }
      let start = i + 1
      i += 1
      while i < lines.count, !lines[i].hasPrefix("```") { i += 1 }
      defer { i += 1 }
      return (start, lines[start..<min(i, lines.count)].joined(separator: "\n"))
    }
    while i < lines.count {
      let line = lines[i]
      i += 1
      guard line.hasPrefix("<!-- example: "), line.hasSuffix(" -->") else { continue }
      let kind = String(line.dropFirst("<!-- example: ".count).dropLast(" -->".count))
      guard let (start, text) = nextBlock() else { break }
      var example = Example(kind: kind, line: start, text: text)
      if kind == "error" { example.expectedOutput = nextBlock()?.1 }
      examples.append(example)
    }
    return examples
  }

  @Test func documentationExamplesAreTrue() throws {
    let examples = try docExamples()
    #expect(examples.filter { $0.kind == "main" }.count >= 2)
    #expect(examples.contains { $0.kind == "drop-in" })
    #expect(examples.contains { $0.kind == "error" })
    for example in examples {
      let source = ConfigurationSource(name: "actiond.json", text: example.text)
      switch example.kind {
      case "main":
        #expect(throws: Never.self, "docs/configuration.md:\(example.line)") {
          try ConfigurationLoader.load(main: source)
        }
      case "drop-in":
        let dropIn = ConfigurationSource(name: "controls.d/example.json", text: example.text)
        #expect(throws: Never.self, "docs/configuration.md:\(example.line)") {
          try ConfigurationLoader.load(main: nil, dropIns: [dropIn])
        }
      case "fragment":
        // Only problems inside the fragment's own members count: replacing `buttons`
        // leaves the complete example's other assignments pointing at missing buttons.
        let (source, keys) = try completeExample(with: example.text)
        do {
          _ = try ConfigurationLoader.load(main: source)
        } catch {
          let own = error.problems.filter { p in
            guard let path = p.path?.description else { return true }
            return keys.contains { path == $0 || path.hasPrefix($0 + ".") || path.hasPrefix($0 + "[") }
          }
          #expect(own.isEmpty, "docs/configuration.md:\(example.line): \(own.map(\.description))")
        }
      case "error":
        do {
          _ = try ConfigurationLoader.load(main: source)
          Issue.record("docs/configuration.md:\(example.line): the error example validates")
        } catch {
          #expect(error.description == example.expectedOutput, "docs/configuration.md:\(example.line)")
        }
      default:
        Issue.record("docs/configuration.md:\(example.line): unknown example kind \(example.kind)")
      }
    }
  }

  /// examples/actiond-complete.json with the top-level members of `fragment` in place of
  /// its own, as a configuration source.
  private func completeExample(with fragment: String) throws -> (ConfigurationSource, [String]) {
    let complete = try JSONParser.parse(try read("examples/actiond-complete.json"), options: .configuration).root
    let members = try JSONParser.parse("{\n" + fragment + "\n}", options: .configuration).root
    guard case .object(var root) = complete, case .object(let replacing) = members else {
      throw ExampleError("the complete example or the fragment is not an object")
    }
    for (key, value) in replacing { root[key] = value }
    return (ConfigurationSource(name: "actiond.json", text: JSONEncoding.pretty(.object(root))), replacing.keys)
  }

  private struct ExampleError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
  }

  /// Every JSON5 block of docs/configuration.md is one of the checked examples: none can
  /// drift unnoticed.
  @Test func everyConfigurationBlockIsChecked() throws {
    let lines = try read("docs/configuration.md").split(separator: "\n", omittingEmptySubsequences: false).map(
      String.init)
    var inBlock = false
    for (index, line) in lines.enumerated() where line.hasPrefix("```") {
      defer { inBlock.toggle() }
      guard !inBlock, line.hasPrefix("```json") else { continue }
      let marker = lines[..<index].last { !$0.isEmpty } ?? ""
      #expect(
        marker.hasPrefix("<!-- example: "),
        "docs/configuration.md:\(index + 1): a JSON5 block without an example marker")
    }
  }

  /// The embedded default is documented verbatim.
  @Test func documentedDefaultIsTheEmbeddedOne() throws {
    let docs = try read("docs/configuration.md")
    #expect(docs.contains(DefaultConfiguration.text))
  }

  /// The complete example in the docs is examples/actiond-complete.json, verbatim.
  @Test func documentedCompleteExampleIsTheFile() throws {
    let docs = try read("docs/configuration.md")
    let file = try read("examples/actiond-complete.json")
    #expect(docs.contains(String(file.dropLast(file.hasSuffix("\n") ? 1 : 0))))
  }

  /// The gesture hint table of "Hints and value texts": each row's example is what the
  /// engine renders for that gesture, with the controls of docs/configuration.md's own
  /// examples (a toggle Start/Stop, a toggle Talk/Mute, a toggle Mute/Unmute, a button).
  @Test func gestureHintTableIsWhatTheEngineRenders() throws {
    let docs = try read("docs/configuration.md")
    func toggle(_ kind: String, on: String, off: String) -> ControlDefinition {
      ControlDefinition(
        kind: kind, type: .toggle, displayName: kind, actionHint: OnOff(on: on, off: off), intent: .state,
        value: .store(initial: false))
    }
    let timer = toggle("timer", on: "Stop", off: "Start")
    let mic = toggle("mic", on: "Mute", off: "Talk")
    let mute = toggle("mute", on: "Unmute", off: "Mute")
    let reboot = ControlDefinition(
      kind: "reboot", type: .button, displayName: "Reboot", intent: .exec(ExecSpec(argv: ["/bin/true"])))
    let rendered: [String: String] = [
      "`hold`": ControlPresentation.hint(.hold, for: timer, missing: [], value: .off),
      "`hold`, momentary": ControlPresentation.hint(.momentaryHold, for: mic, missing: [], value: .on),
      "`doublePress`": ControlPresentation.hint(.doublePress, for: mute, missing: [], value: .off),
      "`longHold`": ControlPresentation.hint(.longHold(.milliseconds(3000)), for: reboot, missing: [], value: .unknown),
      "`longHold`, announced with `held`": ControlPresentation.hint(
        .keepHolding, for: reboot, missing: [], value: .unknown),
    ]
    var seen: Set<String> = []
    let section = try #require(docs.components(separatedBy: "## Hints and value texts").dropFirst().first)
      .components(separatedBy: "\n## ")[0]
    for row in section.components(separatedBy: "\n") where row.hasPrefix("| `") {
      let cells = row.split(separator: "|").map {
        String($0.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
      }
      guard cells.count == 3, let expected = rendered[cells[0]] else { continue }
      #expect("`\(expected)`" == cells[2], "row \(cells[0])")
      seen.insert(cells[0])
    }
    #expect(seen == Set(rendered.keys), "every gesture has its row")
  }
}
