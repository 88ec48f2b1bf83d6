// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Testing

@Suite struct OutputLineSplitterTests {
  private func split(
    _ chunks: [String], limits: ProcessOutputLimits
  ) -> ([ProcessOutputLine], OutputLineSplitter.Budget) {
    var splitter = OutputLineSplitter(stream: .stdout)
    var budget = OutputLineSplitter.Budget(limits: limits)
    var lines: [ProcessOutputLine] = []
    for chunk in chunks {
      Array(chunk.utf8).withUnsafeBytes { splitter.feed($0, budget: &budget) { lines.append($0) } }
    }
    splitter.finish(budget: &budget) { lines.append($0) }
    return (lines, budget)
  }

  @Test func linesAcrossChunksOneByteAtATime() {
    let text = "alpha\r\nbeta\n\ngamma"
    let (lines, _) = split(text.map { String($0) }, limits: ProcessOutputLimits())
    #expect(lines.map(\.text) == ["alpha", "beta", "", "gamma"])
    let (whole, _) = split([text], limits: ProcessOutputLimits())
    #expect(whole == lines)
  }

  @Test func longLinesAreCutOnceAndTheRestSkipped() {
    let (lines, budget) = split(["abcdefgh", "ij\nkl\n"], limits: ProcessOutputLimits(maxLineBytes: 4))
    #expect(lines.map(\.text) == ["abcd", "kl"])
    #expect(lines.map(\.truncated) == [true, false])
    #expect(budget.discardedBytes == 6)
    let (exact, _) = split(["abcd\n"], limits: ProcessOutputLimits(maxLineBytes: 4))
    #expect(exact == [ProcessOutputLine(stream: .stdout, text: "abcd")])
  }

  @Test func theBudgetCapsLinesAndBytes() {
    let (lines, budget) = split(["1\n2\n3\n4\n"], limits: ProcessOutputLimits(maxLines: 2))
    #expect(lines.map(\.text) == ["1", "2"])
    #expect(budget.discardedLines == 2)
    // "c" would still fit, but once a line is refused the rest is too: no holes.
    let (byBytes, byteBudget) = split(["aaa\nbbb\nc\nlast"], limits: ProcessOutputLimits(maxBytes: 4))
    #expect(byBytes.map(\.text) == ["aaa"])
    #expect(byteBudget.discardedLines == 3)
    #expect(byteBudget.discardedBytes == 8)
    #expect(byteBudget.exhausted)
  }

  @Test func invalidUTF8IsReplacedNotFatal() {
    var splitter = OutputLineSplitter(stream: .stderr)
    var budget = OutputLineSplitter.Budget(limits: ProcessOutputLimits())
    var lines: [ProcessOutputLine] = []
    ([0x61, 0xFF, 0x0A] as [UInt8]).withUnsafeBytes { splitter.feed($0, budget: &budget) { lines.append($0) } }
    #expect(lines == [ProcessOutputLine(stream: .stderr, text: "a\u{FFFD}")])
  }
}

@Suite struct RecordingProcessRunnerTests {
  @Test func recordsAndCompletesOnDemand() {
    let runner = RecordingProcessRunner()
    var outcomes: [ProcessOutcome] = []
    var lines: [String] = []
    runner.run(ProcessRequest(argv: ["/bin/a"]), output: { lines.append($0.text) }) { outcomes.append($0.outcome) }
    runner.run(ProcessRequest(argv: ["/bin/b"]), output: { _ in }) { outcomes.append($0.outcome) }
    #expect(runner.requests.map(\.argv) == [["/bin/a"], ["/bin/b"]])
    #expect(runner.pending == [0, 1])
    runner.emit(ProcessOutputLine(stream: .stdout, text: "hi"), run: 0)
    runner.complete(1, with: .timedOut)
    runner.complete(with: .exited(0))
    #expect(lines == ["hi"])
    #expect(outcomes == [.timedOut, .exited(0)])
    #expect(runner.pending.isEmpty)
  }

  /// A stop's calls: terminating leaves the runs to the test; killing ends them all.
  @Test func stopCallsAreRecordedAndKillEndsEveryRun() {
    let runner = RecordingProcessRunner()
    var outcomes: [ProcessOutcome] = []
    runner.run(ProcessRequest(argv: ["/bin/a"]), output: { _ in }) { outcomes.append($0.outcome) }
    runner.run(ProcessRequest(argv: ["/bin/b"]), output: { _ in }) { outcomes.append($0.outcome) }
    runner.terminateAll()
    #expect(runner.terminateAllCount == 1)
    #expect(runner.runningCount == 2)
    runner.killAll()
    #expect(outcomes == [.stopped, .stopped])
    #expect(runner.runningCount == 0)
  }
}
