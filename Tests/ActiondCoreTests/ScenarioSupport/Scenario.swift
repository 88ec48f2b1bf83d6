// SPDX-License-Identifier: Apache-2.0
import ActiondCore

// Golden scenario files, after keyd's `t/*.t`: header lines configure the thing
// under test, step lines feed it inputs on a virtual timeline, `---` separates the
// expected output lines. Parsing knows nothing about what is driven: a
// `ScenarioDriver` interprets the header and step words and produces output lines,
// so the same format serves the recognizer and, later, the whole engine.
//
//   # comment (anywhere; blank lines are ignored)
//   button action key=KEY_PROG1 threshold=600ms   <- header line (before any step)
//   +0ms action down                              <- step at 0ms (relative to the previous step)
//   +450ms action up                              <- step at 450ms
//   @1000ms action down                           <- step at an absolute offset
//   advance 700ms                                 <- move time forward, nothing else
//   ---
//   @0ms pressed action                           <- expected output, `@` = absolute offset
//
// Times: an integer with a unit, `ms`, `us`, `ns` or `s`. Step times never go back.

/// A parsed scenario file.
struct Scenario: Sendable {
  /// One line of words, with its line number for error messages.
  struct Line: Sendable, CustomStringConvertible {
    var words: [String]
    var number: Int
    var description: String { words.joined(separator: " ") }

    /// Words that are not `key=value`.
    var positional: [String] { words.filter { !$0.contains("=") } }

    /// The `key=value` words, in order. Duplicate keys are an error.
    func options(in file: String) throws(ScenarioError) -> [(key: String, value: String)] {
      var seen: Set<String> = []
      var result: [(key: String, value: String)] = []
      for word in words {
        guard let eq = word.firstIndex(of: "=") else { continue }
        let key = String(word[..<eq])
        if !seen.insert(key).inserted { throw ScenarioError(file: file, line: number, "duplicate option '\(key)'") }
        result.append((key, String(word[word.index(after: eq)...])))
      }
      return result
    }
  }

  /// One step of the timeline.
  struct Step: Sendable {
    enum Kind: Sendable {
      /// An input for the driver to interpret (the words after the time).
      case input(Line)
      /// `advance SPAN`: only time passes (timers fire).
      case advance(line: Int)
    }
    /// Offset from the scenario's start.
    var time: TimeSpan
    var kind: Kind
  }

  /// The file name, for messages.
  var name: String
  var header: [Line]
  var steps: [Step]
  /// The expected output lines, whitespace-normalised, with their line numbers.
  var expected: [Line]
}

/// A problem in a scenario file (or in driving it), with the file and line.
struct ScenarioError: Error, CustomStringConvertible {
  var file: String
  var line: Int?
  var message: String

  init(file: String, line: Int?, _ message: String) {
    self.file = file
    self.line = line
    self.message = message
  }

  var description: String { line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)" }
}

enum ScenarioParser {
  static func parse(_ text: String, name: String) throws(ScenarioError) -> Scenario {
    var scenario = Scenario(name: name, header: [], steps: [], expected: [])
    var inExpected = false
    var now = TimeSpan.zero
    for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let number = index + 1
      let content = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
      let words = content.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
      guard let first = words.first else { continue }
      if first == "---" {
        guard words.count == 1 else { throw ScenarioError(file: name, line: number, "'---' stands alone") }
        guard !inExpected else { throw ScenarioError(file: name, line: number, "a second '---'") }
        inExpected = true
        continue
      }
      if inExpected {
        scenario.expected.append(Scenario.Line(words: words, number: number))
        continue
      }
      if first == "advance" {
        guard words.count == 2 else { throw ScenarioError(file: name, line: number, "usage: advance SPAN") }
        now = now + (try parseSpan(words[1], file: name, line: number))
        scenario.steps.append(Scenario.Step(time: now, kind: .advance(line: number)))
      } else if first.hasPrefix("+") || first.hasPrefix("@") {
        let span = try parseSpan(String(first.dropFirst()), file: name, line: number)
        let time = first.hasPrefix("+") ? now + span : span
        guard time >= now else {
          throw ScenarioError(file: name, line: number, "time goes back: \(first) is before \(now)")
        }
        guard words.count > 1 else {
          throw ScenarioError(file: name, line: number, "a step needs an input after \(first)")
        }
        now = time
        let line = Scenario.Line(words: Array(words.dropFirst()), number: number)
        scenario.steps.append(Scenario.Step(time: time, kind: .input(line)))
      } else {
        guard scenario.steps.isEmpty else {
          throw ScenarioError(
            file: name, line: number,
            "'\(first)': header lines come before the first step (steps start with +TIME, @TIME or 'advance')")
        }
        scenario.header.append(Scenario.Line(words: words, number: number))
      }
    }
    guard inExpected else { throw ScenarioError(file: name, line: nil, "no '---' line before the expected output") }
    return scenario
  }

  /// `600ms`, `250us`, `5ns`, `2s`: a non-negative integer and a unit.
  static func parseSpan(_ text: String, file: String, line: Int) throws(ScenarioError) -> TimeSpan {
    let units: [(suffix: String, nanoseconds: Int64)] = [
      ("ms", 1_000_000), ("us", 1_000), ("ns", 1), ("s", 1_000_000_000),
    ]
    for unit in units where text.hasSuffix(unit.suffix) {
      let digits = text.dropLast(unit.suffix.count)
      guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
        let value = Int64(digits), value <= Int64.max / unit.nanoseconds
      else { break }
      return TimeSpan(nanoseconds: value * unit.nanoseconds)
    }
    throw ScenarioError(file: file, line: line, "'\(text)' is not a time span (e.g. 600ms, 250us, 2s)")
  }
}
