import ActiondCore
import ActiondLinux
import Glibc
import Testing

/// Runs `request` on a fresh loop until it completes; collects output. `prepared`: the
/// way a hold runs it, armed in a slot first (the child waits a moment before its exec).
private func runToCompletion(
  _ request: ProcessRequest, prepared: Bool = false
) throws -> (ProcessResult, [ProcessOutputLine]) {
  let loop = try EventLoop()
  let runner = ProcessRunner(loop: loop)
  var lines: [ProcessOutputLine] = []
  var result: ProcessResult?
  var completions = 0
  if prepared {
    runner.arm(request, slot: "button")
    try loop.runOnce(until: loop.now() + .milliseconds(20))
  }
  runner.run(request, slot: prepared ? "button" : nil, output: { lines.append($0) }) {
    result = $0
    completions += 1
  }
  #expect(result == nil, "completion never runs inside run()")
  var iterations = 0
  while result == nil && iterations < 100_000 {
    iterations += 1
    try loop.runOnce(until: loop.now() + .seconds(30))
  }
  #expect(completions == 1)
  #expect(runner.runningCount == 0)
  #expect(loop.pendingTimerCount == 0, "timeout and grace timers are cancelled")
  #expect(runner.armedSlots.isEmpty)
  let finished = try #require(result)
  if prepared, case .spawnFailed = finished.outcome {
    // Whether the prepared child or a fresh spawn reported it, the failure is the same.
  } else {
    #expect(runner.preparedRunCount == (prepared ? 1 : 0), "the prepared child is the one that ran")
  }
  try spin(loop) { runner.preparedChildCount == 0 }
  #expect(runner.preparedChildCount == 0)
  return (finished, lines)
}

/// Turns `loop` until `done` or ten seconds.
private func spin(_ loop: EventLoop, until done: () -> Bool) throws {
  let end = loop.now() + .seconds(10)
  while !done() && loop.now() < end { try loop.runOnce(until: loop.now() + .milliseconds(10)) }
}

private let shellPath = ["PATH": "/usr/bin:/bin"]

private func texts(_ lines: [ProcessOutputLine], _ stream: ProcessOutputStream) -> [String] {
  lines.filter { $0.stream == stream }.map(\.text)
}

/// Whether `pid` is gone or a zombie (dead, waiting for whoever inherited it to reap it).
private func isDead(_ pid: Int32) -> Bool {
  guard let stat = readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return true }
  let state = stat[stat.index(close, offsetBy: 2)]
  return state == "Z" || state == "X"
}

private func residentKilobytes() -> Int {
  let status = readFile("/proc/self/status") ?? ""
  for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
    return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
  }
  return 0
}

@Suite struct ProcessRunnerTests {
  @Test(arguments: [false, true]) func successWithBothStreams(prepared: Bool) throws {
    let dir = try TemporaryDirectory()
    let script = try dir.write(
      "ok.sh", "#!/bin/sh\necho out one\necho err one >&2\nprintf 'no newline'\nexit 0\n", mode: 0o755)
    let (result, lines) = try runToCompletion(
      ProcessRequest(argv: [script], environment: shellPath), prepared: prepared)
    #expect(result.outcome == .exited(0))
    #expect(result.outcome.succeeded)
    #expect(texts(lines, .stdout) == ["out one", "no newline"])
    #expect(texts(lines, .stderr) == ["err one"])
    #expect(result.forwardedLines == 3)
    #expect(result.duration > .zero)
  }

  @Test(arguments: [false, true]) func nonZeroExitAndSignals(prepared: Bool) throws {
    let (exited, _) = try runToCompletion(ProcessRequest(argv: ["/bin/sh", "-c", "exit 3"]), prepared: prepared)
    #expect(exited.outcome == .exited(3))
    #expect(!exited.outcome.succeeded)
    let (signaled, _) = try runToCompletion(
      ProcessRequest(argv: ["/bin/sh", "-c", "kill -USR1 $$"]), prepared: prepared)
    #expect(signaled.outcome == .signaled(SIGUSR1))
  }

  @Test(arguments: [false, true]) func argvIsNeverShellParsedAndTheEnvironmentIsExactlyTheGivenOne(
    prepared: Bool
  ) throws {
    let (result, lines) = try runToCompletion(
      ProcessRequest(argv: ["printf", "%s\\n", "a b", "$HOME", "*;"], environment: ["PATH": "/usr/bin:/bin"]),
      prepared: prepared)
    #expect(result.outcome == .exited(0))
    #expect(texts(lines, .stdout) == ["a b", "$HOME", "*;"])
    let (envResult, envLines) = try runToCompletion(
      ProcessRequest(
        argv: ["/usr/bin/env"],
        environment: ["ACTIOND_KIND": "org.example.timer", "ACTIOND_VALUE": "1", "ACTIOND_PARAM_LED": "a=b c"]),
      prepared: prepared)
    #expect(envResult.outcome == .exited(0))
    #expect(
      texts(envLines, .stdout) == ["ACTIOND_KIND=org.example.timer", "ACTIOND_PARAM_LED=a=b c", "ACTIOND_VALUE=1"])
  }

  @Test(arguments: [false, true]) func stdinIsDevNullAndNoDaemonFdLeaks(prepared: Bool) throws {
    let (result, lines) = try runToCompletion(
      ProcessRequest(argv: ["/bin/sh", "-c", "cat; ls /proc/self/fd"], environment: shellPath), prepared: prepared)
    #expect(result.outcome == .exited(0))
    // 0, 1, 2 and the fd `ls` itself opens to read the directory; nothing inherited.
    let fds = texts(lines, .stdout).compactMap { Int($0) }
    #expect(fds.count == 4)
    #expect(Array(fds.prefix(3)) == [0, 1, 2])
  }

  @Test(arguments: [false, true]) func workingDirectory(prepared: Bool) throws {
    let dir = try TemporaryDirectory()
    let (result, lines) = try runToCompletion(
      ProcessRequest(argv: ["/bin/pwd"], workingDirectory: dir.path), prepared: prepared)
    #expect(result.outcome == .exited(0))
    #expect(texts(lines, .stdout) == [dir.path])
    let (missing, _) = try runToCompletion(
      ProcessRequest(argv: ["/bin/pwd"], workingDirectory: dir.file("absent")), prepared: prepared)
    guard case .spawnFailed(let failure) = missing.outcome else {
      Issue.record("expected spawnFailed, got \(missing.outcome)")
      return
    }
    #expect(failure.step == "chdir \(dir.file("absent"))")
    #expect(failure.errnoName == "ENOENT")
  }

  @Test(arguments: [false, true]) func nonexistentAndNonExecutablePrograms(prepared: Bool) throws {
    let dir = try TemporaryDirectory()
    let (absolute, _) = try runToCompletion(ProcessRequest(argv: [dir.file("nope")]), prepared: prepared)
    #expect(
      absolute.outcome
        == .spawnFailed(
          SpawnFailure(step: "execve \(dir.file("nope"))", errnoName: "ENOENT", message: "No such file or directory")))
    let (searched, _) = try runToCompletion(
      ProcessRequest(argv: ["actiond-no-such-program"], environment: ["PATH": dir.path + ":/usr/bin"]),
      prepared: prepared)
    guard case .spawnFailed(let failure) = searched.outcome else {
      Issue.record("expected spawnFailed, got \(searched.outcome)")
      return
    }
    #expect(failure.errnoName == "ENOENT")
    let plain = try dir.write("plain.txt", "not a program\n", mode: 0o644)
    let (denied, _) = try runToCompletion(ProcessRequest(argv: [plain]), prepared: prepared)
    guard case .spawnFailed(let deniedFailure) = denied.outcome else {
      Issue.record("expected spawnFailed, got \(denied.outcome)")
      return
    }
    #expect(deniedFailure.errnoName == "EACCES")
    let (empty, _) = try runToCompletion(ProcessRequest(argv: []), prepared: prepared)
    #expect(empty.outcome == .spawnFailed(SpawnFailure(step: "argv", errnoName: "", message: "no program given")))
    let (unknownUser, _) = try runToCompletion(
      ProcessRequest(argv: ["/bin/true"], user: "actiond-no-such-user"), prepared: prepared)
    guard case .spawnFailed(let userFailure) = unknownUser.outcome else {
      Issue.record("expected spawnFailed, got \(unknownUser.outcome)")
      return
    }
    #expect(userFailure.description == "user actiond-no-such-user: no such user")
  }

  @Test(.enabled(if: getuid() == 0, "switching users needs root"), arguments: [false, true])
  func runsAsAnUnprivilegedUser(prepared: Bool) throws {
    let (result, lines) = try runToCompletion(
      ProcessRequest(argv: ["/usr/bin/id", "-u"], workingDirectory: "/", user: "nobody"), prepared: prepared)
    #expect(result.outcome == .exited(0))
    #expect(texts(lines, .stdout) == ["65534"])
    let (groups, groupLines) = try runToCompletion(
      ProcessRequest(argv: ["/usr/bin/id", "-G"], user: "nobody"), prepared: prepared)
    #expect(groups.outcome == .exited(0))
    #expect(!(texts(groupLines, .stdout).first ?? "0").split(separator: " ").contains("0"), "root's groups are dropped")
    let (numeric, numericLines) = try runToCompletion(
      ProcessRequest(argv: ["/usr/bin/id", "-u"], user: "65534"), prepared: prepared)
    #expect(numeric.outcome == .exited(0))
    #expect(texts(numericLines, .stdout) == ["65534"])
  }

  @Test(arguments: [false, true]) func timeoutKillsTheWholeProcessGroupIncludingAGrandchild(prepared: Bool) throws {
    let dir = try TemporaryDirectory()
    let pidFile = dir.file("grandchild.pid")
    // The grandchild ignores SIGTERM and would outlive its parent: only the group SIGKILL
    // after the grace period ends it. The parent dies on SIGTERM.
    let script = try dir.write(
      "tree.sh",
      """
      #!/bin/sh
      sh -c 'trap "" TERM; echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 1000' - "\(pidFile)" &
      echo started
      sleep 1000
      """, mode: 0o755)
    let (result, lines) = try runToCompletion(
      ProcessRequest(
        argv: [script], environment: shellPath, timeout: .seconds(2), killGracePeriod: .milliseconds(300)),
      prepared: prepared)
    #expect(result.outcome == .timedOut)
    #expect(texts(lines, .stdout) == ["started"])
    #expect(result.duration >= .seconds(2))
    let grandchild = try #require(readFile(pidFile).flatMap { Int32($0.split(separator: "\n").first ?? "") })
    // SIGKILL was sent before the result; give the kernel a moment to finish the kill.
    var dead = isDead(grandchild)
    for _ in 0..<500 where !dead {
      usleep(10_000)
      dead = isDead(grandchild)
    }
    #expect(dead, "grandchild \(grandchild) survived the timeout")
  }

  @Test func aGroupThatDiesOnSigtermIsNotKeptWaitingForTheGracePeriod() throws {
    let (result, _) = try runToCompletion(
      ProcessRequest(argv: ["/bin/sleep", "1000"], timeout: .milliseconds(100), killGracePeriod: .seconds(600)))
    #expect(result.outcome == .timedOut)
    #expect(result.duration < .seconds(600), "completed without the 10-minute grace")
  }

  @Test func hugeOutputIsDrainedAndBounded() throws {
    let before = residentKilobytes()
    let limits = ProcessOutputLimits(maxLineBytes: 4096, maxLines: 100, maxBytes: 64 * 1024)
    // 100 MB: 10 million short lines on stdout, then one 10 MB line without newline on stderr.
    let (result, lines) = try runToCompletion(
      ProcessRequest(
        argv: ["/bin/sh", "-c", "yes 123456789 | head -c 100000000; head -c 10000000 /dev/zero >&2"],
        environment: shellPath, timeout: .seconds(120), outputLimits: limits))
    let after = residentKilobytes()
    #expect(result.outcome == .exited(0), "the command was never blocked on a full pipe")
    #expect(lines.count == 100)
    #expect(result.forwardedLines == 100)
    #expect(result.discardedLines == 10_000_000 - 100 + 1)
    #expect(result.discardedBytes == 9_999_900 * 9 + 10_000_000)
    #expect(lines.allSatisfy { $0.text == "123456789" })
    // A sanity bound, not a measurement: buffering the output would add ~110 MB.
    #expect(after - before < 40 * 1024, "RSS grew from \(before) kB to \(after) kB")
  }

  @Test func longLinesAreCutAndMarked() throws {
    let (result, lines) = try runToCompletion(
      ProcessRequest(
        argv: ["/bin/sh", "-c", "head -c 10000 /dev/zero | tr '\\0' x; echo; echo short"], environment: shellPath,
        outputLimits: ProcessOutputLimits(maxLineBytes: 100)))
    #expect(result.outcome == .exited(0))
    #expect(lines.map(\.text) == [String(repeating: "x", count: 100), "short"])
    #expect(lines.map(\.truncated) == [true, false])
    #expect(result.discardedBytes == 9900)
  }

  @Test func severalRunsAtOnceOnOneLoop() throws {
    let loop = try EventLoop()
    let runner = ProcessRunner(loop: loop)
    var results: [Int: ProcessOutcome] = [:]
    for code in 0..<5 {
      runner.run(ProcessRequest(argv: ["/bin/sh", "-c", "exit \(code)"]), output: { _ in }) {
        results[code] = $0.outcome
      }
    }
    #expect(runner.runningCount == 5)
    for _ in 0..<10_000 where results.count < 5 { try loop.runOnce(until: loop.now() + .seconds(30)) }
    #expect(results == [0: .exited(0), 1: .exited(1), 2: .exited(2), 3: .exited(3), 4: .exited(4)])
  }

  @Test func terminateAllEndsEveryRun() throws {
    let loop = try EventLoop()
    let runner = ProcessRunner(loop: loop)
    var outcomes: [ProcessOutcome] = []
    for _ in 0..<2 {
      runner.run(ProcessRequest(argv: ["/bin/sleep", "1000"], timeout: .seconds(600)), output: { _ in }) {
        outcomes.append($0.outcome)
      }
    }
    runner.terminateAll()
    for _ in 0..<10_000 where outcomes.count < 2 { try loop.runOnce(until: loop.now() + .seconds(30)) }
    #expect(outcomes == [.timedOut, .timedOut])
  }

  // MARK: Prepared children (`arm`)

  @Test func aPreparedChildRunsNothingUntilRunAndNothingWhenDisarmed() throws {
    let dir = try TemporaryDirectory()
    let marker = dir.file("ran")
    let loop = try EventLoop()
    let runner = ProcessRunner(loop: loop)
    let request = ProcessRequest(argv: ["/bin/sh", "-c", "echo x > \"$1\"", "-", marker], environment: shellPath)
    runner.arm(request, slot: "action")
    #expect(runner.armedSlots == ["action"])
    try loop.runOnce(until: loop.now() + .milliseconds(200))
    #expect(readFile(marker) == nil, "nothing of the command happens before run")
    runner.disarm(slot: "action")
    #expect(runner.armedSlots.isEmpty)
    try spin(loop) { runner.preparedChildCount == 0 }
    #expect(runner.preparedChildCount == 0, "the discarded child exited and was reaped")
    #expect(readFile(marker) == nil)
    #expect(runner.runningCount == 0)
  }

  @Test func aDifferentRequestInTheSlotDiscardsThePreparedOne() throws {
    let dir = try TemporaryDirectory()
    let loop = try EventLoop()
    let runner = ProcessRunner(loop: loop)
    func writer(_ name: String) -> ProcessRequest {
      ProcessRequest(
        argv: ["/bin/sh", "-c", "echo x > \"$1\"", "-", dir.file(name)], environment: ["ACTIOND_VALUE": name])
    }
    runner.arm(writer("first"), slot: "action")
    // Re-arming replaces; the replaced child never runs.
    runner.arm(writer("second"), slot: "action")
    try loop.runOnce(until: loop.now() + .milliseconds(20))
    var outcome: ProcessOutcome?
    runner.run(writer("third"), slot: "action", output: { _ in }) { outcome = $0.outcome }
    try spin(loop) { outcome != nil && runner.preparedChildCount == 0 }
    #expect(outcome == .exited(0))
    #expect(runner.preparedRunCount == 0)
    #expect(runner.preparedChildCount == 0)
    #expect(readFile(dir.file("third")) == "x\n")
    #expect(readFile(dir.file("first")) == nil)
    #expect(readFile(dir.file("second")) == nil)
  }

  @Test func aPreparedChildThatFailedItsPreparationIsForgottenAndTheRunReportsWhy() throws {
    let dir = try TemporaryDirectory()
    let loop = try EventLoop()
    let runner = ProcessRunner(loop: loop)
    let request = ProcessRequest(argv: ["/bin/true"], workingDirectory: dir.file("absent"))
    runner.arm(request, slot: "action")
    // The child fails its chdir and exits while waiting: the slot empties by itself.
    try spin(loop) { runner.preparedChildCount == 0 }
    #expect(runner.armedSlots.isEmpty)
    var outcome: ProcessOutcome?
    runner.run(request, slot: "action", output: { _ in }) { outcome = $0.outcome }
    try spin(loop) { outcome != nil }
    guard case .spawnFailed(let failure)? = outcome else {
      Issue.record("expected spawnFailed, got \(String(describing: outcome))")
      return
    }
    #expect(failure.step == "chdir \(dir.file("absent"))")
    #expect(failure.errnoName == "ENOENT")
  }

  @Test func aPreparedRunTimesFromItsRunAndTerminateAllDiscardsPreparedChildren() throws {
    let loop = try EventLoop()
    let runner = ProcessRunner(loop: loop)
    let quick = ProcessRequest(argv: ["/bin/sleep", "0.1"], timeout: .milliseconds(400))
    runner.arm(quick, slot: "a")
    runner.arm(ProcessRequest(argv: ["/bin/true"]), slot: "b")
    // Longer than the timeout: the time a prepared child waits does not count.
    try loop.runOnce(until: loop.now() + .milliseconds(500))
    var outcome: ProcessOutcome?
    runner.run(quick, slot: "a", output: { _ in }) { outcome = $0.outcome }
    #expect(runner.preparedRunCount == 1)
    try spin(loop) { outcome != nil }
    #expect(outcome == .exited(0))
    #expect(runner.armedSlots == ["b"])
    runner.terminateAll()
    #expect(runner.armedSlots.isEmpty)
    try spin(loop) { runner.preparedChildCount == 0 }
    #expect(runner.preparedChildCount == 0)
  }
}
