// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

/// Interprets a parsed ``Scenario``: configures itself from the header lines (an
/// unknown directive or option is an error), runs the steps on a virtual timeline
/// and returns the output lines to compare with the expected ones.
protocol ScenarioDriver {
  /// Runs `scenario` and returns its output lines (words separated by one space).
  /// - Throws: ``ScenarioError`` for a header or step the driver does not understand.
  static func run(_ scenario: Scenario) throws(ScenarioError) -> [String]
}

/// Loads scenario files shipped as test resources and checks them with a driver.
enum ScenarioRunner {
  /// The scenario files (`*.scenario`) in `Scenarios/<directory>`, sorted by name.
  static func files(in directory: String) -> [String] {
    guard let url = directoryURL(directory),
      let names = try? FileManager.default.contentsOfDirectory(atPath: url.path)
    else { return [] }
    return names.filter { $0.hasSuffix(".scenario") }.sorted()
  }

  static func directoryURL(_ directory: String) -> URL? {
    Bundle.module.resourceURL?.appendingPathComponent("Scenarios").appendingPathComponent(directory)
  }

  /// Parses `Scenarios/<directory>/<file>`, runs it with `driver` and records a test
  /// issue with a readable diff when the output differs from the expected lines.
  static func check<D: ScenarioDriver>(
    _ file: String, in directory: String, with driver: D.Type, sourceLocation: Testing.SourceLocation = #_sourceLocation
  ) {
    let display = "Scenarios/\(directory)/\(file)"
    do {
      guard let url = directoryURL(directory)?.appendingPathComponent(file) else {
        throw ScenarioError(file: display, line: nil, "the test bundle has no Scenarios directory")
      }
      let text: String
      do { text = try String(contentsOf: url, encoding: .utf8) } catch {
        throw ScenarioError(file: display, line: nil, "cannot read: \(error)")
      }
      let scenario = try ScenarioParser.parse(text, name: display)
      let actual = try D.run(scenario)
      let expected = scenario.expected.map(\.description)
      if actual != expected {
        Issue.record(
          Comment(rawValue: "\(display): output differs (- expected, + actual)\n" + diff(expected, actual)),
          sourceLocation: sourceLocation)
      }
    } catch let error as ScenarioError {
      Issue.record(Comment(rawValue: error.description), sourceLocation: sourceLocation)
    } catch {
      Issue.record(Comment(rawValue: "\(display): \(error)"), sourceLocation: sourceLocation)
    }
  }

  /// A line diff (longest common subsequence): ` ` both, `-` expected only, `+` actual only.
  static func diff(_ expected: [String], _ actual: [String]) -> String {
    let n = expected.count
    let m = actual.count
    var lcs = Array(repeating: Array(repeating: 0, count: m + 1), count: n + 1)
    for i in stride(from: n - 1, through: 0, by: -1) {
      for j in stride(from: m - 1, through: 0, by: -1) {
        lcs[i][j] = expected[i] == actual[j] ? lcs[i + 1][j + 1] + 1 : max(lcs[i + 1][j], lcs[i][j + 1])
      }
    }
    var lines: [String] = []
    var i = 0
    var j = 0
    while i < n || j < m {
      if i < n, j < m, expected[i] == actual[j] {
        lines.append("  \(expected[i])")
        i += 1
        j += 1
      } else if i < n, j == m || lcs[i + 1][j] >= lcs[i][j + 1] {
        lines.append("- \(expected[i])")
        i += 1
      } else {
        lines.append("+ \(actual[j])")
        j += 1
      }
    }
    return lines.joined(separator: "\n")
  }
}
