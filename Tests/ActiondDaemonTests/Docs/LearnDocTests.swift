// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import FoundationEssentials
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// What docs/keyboard-key.md, the README, actiond(8) and 70-actiond.rules say about
/// `actiond learn` and uaccess is what the code prints and accepts: the report and the
/// JSON examples are rendered again from the documented device and compared, the snippet
/// they show is loaded as configuration, every option, JSON member and exit status
/// documented exists (and every one that exists is documented).
@Suite struct LearnDocTests {
  /// The repository's top directory.
  private static let top = repositoryPath()

  private func read(_ relative: String) throws -> String {
    try String(contentsOfFile: Self.top + "/" + relative, encoding: .utf8)
  }

  /// The keyboard the guide's examples show.
  static let documentedKeyboard = InputDeviceInfo(
    syspath: "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/0003:046D:C31C.0001/input/input3/event3",
    devnode: "/dev/input/event3", name: "Logitech USB Keyboard", phys: "usb-0000:00:14.0-2/input0", bustype: 0x03,
    vendor: 0x046d, product: 0xc31c,
    links: [
      "/dev/input/by-id/usb-Logitech_USB_Keyboard-event-kbd",
      "/dev/input/by-path/pci-0000:00:14.0-usb-0:2:1.0-event-kbd",
    ])
  static let learned = LearnedButton(device: documentedKeyboard, keyCode: 70)

  private func lines(_ text: String) -> [String] {
    text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  }

  /// The fenced block after `<!-- learn-example: KIND -->`.
  private func example(_ kind: String, in text: String) throws -> String {
    let all = lines(text)
    let marker = try #require(all.firstIndex(of: "<!-- learn-example: \(kind) -->"), "no \(kind) example")
    let start = try #require(all[marker...].firstIndex { $0.hasPrefix("```") }) + 1
    let end = try #require(all[start...].firstIndex { $0.hasPrefix("```") })
    return all[start..<end].joined(separator: "\n")
  }

  /// Rows of the markdown table whose header starts with `| header |`: first cells.
  private func tableFirstCells(_ header: String, in text: String) throws -> [String] {
    let all = lines(text)
    let start = try #require(all.firstIndex { $0.hasPrefix("| \(header) |") }, "no table \(header)")
    let rows = all[(start + 2)...].prefix { $0.hasPrefix("|") }
    return rows.map { row in trimmed(row.split(separator: "|", omittingEmptySubsequences: false)[1]) }
  }

  private func trimmed(_ text: Substring) -> String {
    String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
  }

  private func unquoted(_ text: String) -> String { text.filter { $0 != "`" } }

  /// The commands `actiond learn ...` in the code blocks, cut at the first shell word.
  private func learnCommands(in text: String) -> [[String]] {
    var inBlock = false
    var commands: [[String]] = []
    for line in lines(text) {
      if line.hasPrefix("```") {
        inBlock.toggle()
        continue
      }
      guard inBlock, let range = line.firstRange(of: "actiond learn") else { continue }
      // Up to a shell word, or the closing backquote of an inline command in a message.
      var command: [String] = []
      for word in line[range.upperBound...].split(separator: " ").map(String.init) {
        if word.hasPrefix(">") || word == "#" || word == "|" || word == "&&" { break }
        if word.hasSuffix("`") {
          command.append(String(word.dropLast()))
          break
        }
        command.append(word)
      }
      commands.append(command)
    }
    return commands
  }

  @Test func theGuideStartsWithLearn() throws {
    let guide = try read("docs/keyboard-key.md")
    let firstSection = try #require(lines(guide).first { $0.hasPrefix("## ") })
    #expect(firstSection == "## 1. Learn the key")
    let firstBlock = try #require(guide.firstRange(of: "```sh\n"))
    #expect(guide[firstBlock.upperBound...].hasPrefix("sudo actiond learn"))
  }

  @Test func theReportAndTheJSONAreWhatLearnPrints() throws {
    let guide = try read("docs/keyboard-key.md")
    #expect(try example("report", in: guide) == Self.learned.text)
    #expect(try example("json", in: guide) == JSONEncoding.compact(Self.learned.json))
    // The snippet it shows is configuration, and takes the documented keyboard.
    let snippet = try #require(lines(Self.learned.text).first { $0.hasPrefix("  { name:") })
    let config = try ConfigurationLoader.load(
      main: ConfigurationSource(name: "keyboard-key.md", text: "{ buttons: [\(snippet)] }"))
    #expect(config.buttons.first?.keyName == "KEY_SCROLLLOCK")
    #expect(config.buttons.first?.match.matches(Self.documentedKeyboard) == true)
  }

  @Test func theRulesShownAreTheLearnedOnes() throws {
    let guide = try read("docs/keyboard-key.md")
    let all = lines(guide)
    #expect(all.contains(Self.learned.udevRule))
    var withUaccess = Self.learned
    withUaccess.uaccess = true
    #expect(all.contains(withUaccess.udevRule))
  }

  @Test func everyOptionExitStatusAndMemberIsDocumented() throws {
    let guide = try read("docs/keyboard-key.md")
    let options = try tableFirstCells("Option", in: guide).map(unquoted)
    let separators: Set<Character> = [" ", "\n", "[", "]", "|"]
    let words = LearnOptions.usage.split(whereSeparator: { separators.contains($0) })
    let usageOptions = Set(words.filter { $0.hasPrefix("--") && $0 != "--help" }.map(String.init))
    #expect(Set(options.map { String($0.split(separator: " ")[0]) }) == usageOptions)
    for option in options {
      let words = option.split(separator: " ").map(String.init)
      let argument = words.count > 1 ? [words[0], words[1] == "SECONDS" ? "3" : "pedal"] : words
      _ = try LearnOptions.parse(argument)
    }
    let statuses = try tableFirstCells("Exit status", in: guide).compactMap { Int32($0) }
    #expect(statuses == LearnOptions.ExitStatus.allCases.map(\.rawValue))

    let members = try tableFirstCells("Member", in: guide).flatMap {
      unquoted($0).split(separator: ",").map { trimmed($0) }
    }
    let json = try #require(Self.learned.json.objectValue)
    var actual: [String] = []
    for (key, value) in json {
      if let object = value.objectValue, key != "button" {
        actual += object.keys.map { "\(key).\($0)" }
      } else {
        actual.append(key)
      }
    }
    #expect(members.sorted() == actual.sorted())
  }

  @Test func everyLearnCommandShownParses() throws {
    var count = 0
    for file in ["docs/keyboard-key.md", "README.md", "docs/man/actiond.8.md"] {
      for command in learnCommands(in: try read(file)) {
        count += 1
        _ = try LearnOptions.parse(command)
      }
    }
    #expect(count >= 3)
    let man = try read("docs/man/actiond.8.md")
    for option in ["--json", "--configuration", "--timeout", "--name", "--uaccess"] {
      #expect(man.contains("**\(option)**"), "actiond(8) lacks \(option)")
    }
  }

  /// The README's five lines: learn, the rule, run, press, status.
  @Test func theReadmeShowsTheFlowInFiveLines() throws {
    let readme = try read("README.md")
    let section = try #require(readme.firstRange(of: "## Your own button, in five lines\n\n```sh\n"))
    let block = readme[section.upperBound...]
    let end = try #require(block.firstRange(of: "\n```"))
    let flow = lines(String(block[..<end.lowerBound]))
    #expect(flow.count == 5)
    #expect(flow[0].contains("actiond learn --uaccess --configuration >my.json"))
    #expect(flow[1].contains(LearnedButton.udevRuleFile))
    #expect(flow[2].hasPrefix(#"make run RUN_ARGS="--config my.json""#))
    #expect(flow[4].contains("actionctl --socket .build/run/actiond.sock status"))
  }

  /// The daemon's message in the guide's desktop section is what it logs for that machine.
  @Test func theDesktopMessageIsTheDaemons() throws {
    let guide = try read("docs/keyboard-key.md")
    let nodes = (0..<9).map { InputNodeAccess(path: "/dev/input/event\($0)", error: "EACCES", group: "input") }
    let advice = InputAccessReport(user: "alice", isRoot: false, nodes: nodes).waitingAdvice(
      tag: "actiond", learn: ".build/debug/actiond learn")
    let logged =
      "button action: no device with KEY_PROG1 matches (tag=actiond) yet, it binds when one appears; \(advice)"
    #expect(lines(guide).contains(logged))
  }

  /// The uaccess option is one line of the shipped rule, before 73-seat-late.rules.
  @Test func theShippedRuleHasTheUaccessOption() throws {
    let rules = lines(try read("udev-rules/70-actiond.rules")).filter { !$0.hasPrefix("#") && !$0.isEmpty }
    #expect(rules.contains(#"TAG=="actiond", ENV{ACTIOND_UACCESS}=="1", TAG+="uaccess""#))
    #expect("70-actiond.rules" < "73-seat-late.rules")
    #expect(LearnedButton.udevRuleFile.hasSuffix("/69-actiond-local.rules"))
  }
}
