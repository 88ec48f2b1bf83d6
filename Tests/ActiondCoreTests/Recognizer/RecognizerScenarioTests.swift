// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

@Suite struct RecognizerScenarioTests {
  static let files = ScenarioRunner.files(in: "recognizer")

  @Test(arguments: files)
  func scenario(_ file: String) {
    ScenarioRunner.check(file, in: "recognizer", with: RecognizerScenarioDriver.self)
  }

  /// Guards against the resource directory silently going missing (then the
  /// parameterised test above would run zero cases and pass).
  @Test func scenarioFilesArePresent() {
    #expect(Self.files.count >= 25, "found \(Self.files)")
  }
}

/// The scenario format itself: bad files are rejected with their line number, and
/// mismatches produce a readable diff.
@Suite struct ScenarioFormatTests {
  func run(_ text: String) throws(ScenarioError) -> [String] {
    try RecognizerScenarioDriver.run(try ScenarioParser.parse(text, name: "t.scenario"))
  }

  func expectError(
    _ text: String, line: Int?, containing fragment: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
  ) {
    do {
      let output = try run(text)
      Issue.record("expected an error, got \(output)", sourceLocation: sourceLocation)
    } catch {
      #expect(error.line == line, "\(error)", sourceLocation: sourceLocation)
      #expect(error.description.contains(fragment), "\(error)", sourceLocation: sourceLocation)
      #expect(error.description.hasPrefix("t.scenario:"), sourceLocation: sourceLocation)
    }
  }

  @Test func runsAMinimalScenario() throws {
    let output = try run(
      """
      button a key=148 threshold=100ms
      +0ms a down
      +150ms a up
      ---
      """)
    #expect(output == ["@0ms pressed a", "@100ms held a", "@150ms released-after-hold a held=150ms"])
  }

  @Test func rejectsUnknownHeaderLinesAndOptions() {
    expectError("button a key=KEY_PROG1\nrepeat 5\n---\n", line: 2, containing: "unknown header line 'repeat'")
    expectError("button a key=KEY_PROG1 hold=5ms\n---\n", line: 1, containing: "unknown button option 'hold'")
    expectError("button a key=KEY_NOPE\n---\n", line: 1, containing: "unknown key 'KEY_NOPE'")
    expectError("button a\n---\n", line: 1, containing: "needs key=KEY")
    expectError("button a key=1 key=2\n---\n", line: 1, containing: "duplicate option 'key'")
    expectError("button a key=1\nbutton a key=2\n---\n", line: 2, containing: "defined twice")
    expectError("timer-latency 5ms\n---\n", line: nil, containing: "no 'button'")
  }

  @Test func rejectsBadSteps() {
    expectError("button a key=1\n+0ms b down\n---\n", line: 2, containing: "unknown button 'b'")
    expectError("button a key=1\n+0ms a sideways\n---\n", line: 2, containing: "not down, up or repeat")
    expectError("button a key=1\n+0ms a down bogus=1\n---\n", line: 2, containing: "unknown key event option")
    expectError("button a key=1\n+0ms resync a maybe\n---\n", line: 2, containing: "usage: resync")
    expectError("button a key=1\n+0ms device-lost\n---\n", line: 2, containing: "usage: device-lost NAME")
    expectError("button a key=1\n@10ms a down\n@5ms a up\n---\n", line: 3, containing: "time goes back")
    expectError("button a key=1\n+5 a down\n---\n", line: 2, containing: "not a time span")
    expectError("button a key=1\n+-5ms a down\n---\n", line: 2, containing: "not a time span")
    expectError("button a key=1\n+0ms a down\nbutton b key=2\n---\n", line: 3, containing: "header lines come before")
    expectError("button a key=1\n+0ms a down\n", line: nil, containing: "no '---'")
    expectError("button a key=1\n---\n---\n", line: 3, containing: "a second '---'")
  }

  @Test func parsesSpansAndComments() throws {
    let scenario = try ScenarioParser.parse(
      "# c\nbutton a key=1  # trailing\n@2s a down\n+1500us a up\nadvance 5ns\n---\n@0ms  x   y\n", name: "t")
    #expect(scenario.header.map(\.description) == ["button a key=1"])
    #expect(scenario.steps.map(\.time) == [.seconds(2), .nanoseconds(2_001_500_000), .nanoseconds(2_001_500_005)])
    #expect(scenario.expected.map(\.description) == ["@0ms x y"])
    #expect(scenario.expected.map(\.number) == [7])
  }

  @Test func diffShowsMissingAndExtraLines() {
    let diff = ScenarioRunner.diff(["a", "b", "c"], ["a", "x", "c", "d"])
    #expect(diff == "  a\n- b\n+ x\n  c\n+ d")
  }
}

extension TimeSpan {
  fileprivate static func nanoseconds(_ ns: Int64) -> TimeSpan { TimeSpan(nanoseconds: ns) }
}
