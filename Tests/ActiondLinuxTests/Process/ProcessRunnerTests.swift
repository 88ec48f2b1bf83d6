// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondLinux

/// Runs `request` on a fresh loop until it completes; collects output.
private func runToCompletion(_ request: ProcessRequest) throws -> (ProcessResult, [ProcessOutputLine]) {
  let loop = try EventLoop()
  return try runToCompletion(request, on: ProcessRunner(loop: loop), loop)
}

/// Runs `request` on `runner` until it completes; its result and output.
private func runToCompletion(
  _ request: ProcessRequest, on runner: ProcessRunner, _ loop: EventLoop
) throws -> (ProcessResult, [ProcessOutputLine]) {
  var lines: [ProcessOutputLine] = []
  var result: ProcessResult?
  var completions = 0
  runner.run(request, output: { lines.append($0) }) {
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
  return (try #require(result), lines)
}

/// An open fd as the kernel names it: its number and inode. Tests run in parallel, so
/// a number alone may be reused by another test at once; the pair names one pipe.
private struct OpenFile: Equatable {
  var fd: Int32
  var inode: UInt
  init(_ fd: Int32) {
    var info = stat()
    self.fd = fd
    inode = fstat(fd, &info) == 0 ? UInt(info.st_ino) : 0
  }
  /// Whether `fd` still refers to this file.
  var isOpen: Bool {
    var info = stat()
    return fstat(fd, &info) == 0 && UInt(info.st_ino) == inode
  }
  /// How /proc names it in a process that has it: `pipe:[inode]`.
  var procName: String { "pipe:[\(inode)]" }
}

/// Turns `loop` until `done` or thirty seconds.
private func spin(_ loop: EventLoop, until done: () -> Bool) throws {
  let end = loop.now() + .seconds(30)
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

@Suite struct ProcessRunnerTests {
  @Test func successWithBothStreams() throws {
    let dir = try TemporaryDirectory()
    let script = try dir.write(
      "ok.sh", "#!/bin/sh\necho out one\necho err one >&2\nprintf 'no newline'\nexit 0\n", mode: 0o755)
    let (result, lines) = try runToCompletion(
      ProcessRequest(argv: [script], environment: shellPath))
    #expect(result.outcome == .exited(0))
    #expect(result.outcome.succeeded)
    #expect(texts(lines, .stdout) == ["out one", "no newline"])
    #expect(texts(lines, .stderr) == ["err one"])
    #expect(result.forwardedLines == 3)
    #expect(result.duration > .zero)
  }

  @Test func nonZeroExitAndSignals() throws {
    let (exited, _) = try runToCompletion(ProcessRequest(argv: ["/bin/sh", "-c", "exit 3"]))
    #expect(exited.outcome == .exited(3))
    #expect(!exited.outcome.succeeded)
    let (signaled, _) = try runToCompletion(
      ProcessRequest(argv: ["/bin/sh", "-c", "kill -USR1 $$"]))
    #expect(signaled.outcome == .signaled(SIGUSR1))
  }

  @Test func argvIsNeverShellParsedAndTheEnvironmentIsExactlyTheGivenOne() throws {
    let (result, lines) = try runToCompletion(
      ProcessRequest(argv: ["printf", "%s\\n", "a b", "$HOME", "*;"], environment: ["PATH": "/usr/bin:/bin"]))
    #expect(result.outcome == .exited(0))
    #expect(texts(lines, .stdout) == ["a b", "$HOME", "*;"])
    let (envResult, envLines) = try runToCompletion(
      ProcessRequest(
        argv: ["/usr/bin/env"],
        environment: ["ACTIOND_KIND": "org.example.timer", "ACTIOND_VALUE": "1", "ACTIOND_PARAM_LED": "a=b c"]))
    #expect(envResult.outcome == .exited(0))
    #expect(
      texts(envLines, .stdout) == ["ACTIOND_KIND=org.example.timer", "ACTIOND_PARAM_LED=a=b c", "ACTIOND_VALUE=1"])
  }

  @Test func stdinIsDevNullAndNoDaemonFdLeaks() throws {
    // An fd of the daemon without close-on-exec (as systemd's LISTEN_FDS sockets are):
    // it must not reach the command either.
    let leaky = open("/dev/null", O_RDONLY)
    try #require(leaky >= 3)
    defer { close(leaky) }
    let (result, lines) = try runToCompletion(
      ProcessRequest(
        argv: ["/bin/sh", "-c", "cat; readlink /proc/self/fd/0; ls /proc/self/fd"], environment: shellPath))
    #expect(result.outcome == .exited(0))
    let out = texts(lines, .stdout)
    #expect(out.first == "/dev/null")
    // 0, 1, 2 and the fd `ls` itself opens to read the directory; nothing inherited.
    let fds = out.dropFirst().compactMap { Int($0) }
    #expect(fds.count == 4, "open in the command: \(fds)")
    #expect(Array(fds.prefix(3)) == [0, 1, 2])
  }

  @Test func theCommandLeadsItsOwnProcessGroupWithNoSignalBlockedOrIgnored() throws {
    // What the daemon has (its signalfd signals blocked, SIGPIPE ignored) must not reach
    // the command: both survive an exec unless the spawn resets them.
    var block = sigset_t()
    var previous = sigset_t()
    sigemptyset(&block)
    sigaddset(&block, SIGUSR2)
    pthread_sigmask(SIG_BLOCK, &block, &previous)
    let oldPipe = signal(SIGPIPE, SIG_IGN)
    defer {
      pthread_sigmask(SIG_SETMASK, &previous, nil)
      signal(SIGPIPE, oldPipe)
    }
    let (result, lines) = try runToCompletion(
      ProcessRequest(argv: ["/bin/grep", "-E", "^(Pid|NSpgid|SigBlk|SigIgn):", "/proc/self/status"]))
    #expect(result.outcome == .exited(0))
    var fields: [String: String] = [:]
    for line in texts(lines, .stdout) {
      guard let colon = line.firstIndex(of: ":") else { continue }
      fields[String(line[..<colon])] = String(line[line.index(after: colon)...].drop { $0 == "\t" || $0 == " " })
    }
    #expect(fields["Pid"] != nil && fields["Pid"] == fields["NSpgid"], "own process group: \(fields)")
    #expect(fields["SigBlk"] == "0000000000000000")
    #expect(fields["SigIgn"] == "0000000000000000")
  }

  @Test func workingDirectory() throws {
    let dir = try TemporaryDirectory()
    let (result, lines) = try runToCompletion(
      ProcessRequest(argv: ["/bin/pwd"], workingDirectory: dir.path))
    #expect(result.outcome == .exited(0))
    #expect(texts(lines, .stdout) == [dir.path])
    let (missing, _) = try runToCompletion(
      ProcessRequest(argv: ["/bin/pwd"], workingDirectory: dir.file("absent")))
    guard case .spawnFailed(let failure) = missing.outcome else {
      Issue.record("expected spawnFailed, got \(missing.outcome)")
      return
    }
    #expect(failure.step == "chdir \(dir.file("absent"))")
    #expect(failure.errnoName == "ENOENT")
  }

  @Test func nonexistentAndNonExecutablePrograms() throws {
    let dir = try TemporaryDirectory()
    let (absolute, _) = try runToCompletion(ProcessRequest(argv: [dir.file("nope")]))
    #expect(
      absolute.outcome
        == .spawnFailed(
          SpawnFailure(step: "execve \(dir.file("nope"))", errnoName: "ENOENT", message: "No such file or directory")))
    let (searched, _) = try runToCompletion(
      ProcessRequest(argv: ["actiond-no-such-program"], environment: ["PATH": dir.path + ":/usr/bin"]))
    guard case .spawnFailed(let failure) = searched.outcome else {
      Issue.record("expected spawnFailed, got \(searched.outcome)")
      return
    }
    #expect(failure.errnoName == "ENOENT")
    let plain = try dir.write("plain.txt", "not a program\n", mode: 0o644)
    let (denied, _) = try runToCompletion(ProcessRequest(argv: [plain]))
    guard case .spawnFailed(let deniedFailure) = denied.outcome else {
      Issue.record("expected spawnFailed, got \(denied.outcome)")
      return
    }
    #expect(deniedFailure.errnoName == "EACCES")
    // Searched in the command's PATH: a plain file there is skipped, EACCES if nothing else.
    let (searchedDenied, _) = try runToCompletion(
      ProcessRequest(argv: ["plain.txt"], environment: ["PATH": dir.path]))
    #expect(
      searchedDenied.outcome
        == .spawnFailed(SpawnFailure(step: "execve plain.txt", errnoName: "EACCES", message: "Permission denied")))
    let (empty, _) = try runToCompletion(ProcessRequest(argv: []))
    #expect(empty.outcome == .spawnFailed(SpawnFailure(step: "argv", errnoName: "", message: "no program given")))
  }

  @Test func programsAreLookedUpInTheCommandsPathNotTheDaemons() throws {
    let dir = try TemporaryDirectory()
    _ = try dir.write("actiond-test-hello", "#!/bin/sh\necho hello from \"$0\"\n", mode: 0o755)
    let (result, lines) = try runToCompletion(
      ProcessRequest(argv: ["actiond-test-hello"], environment: ["PATH": "/nonexistent::" + dir.path]))
    #expect(result.outcome == .exited(0))
    #expect(texts(lines, .stdout) == ["hello from \(dir.file("actiond-test-hello"))"])
  }

  @Test func usersAreResolvedByNameOrNumber() throws {
    guard case .failure(let unknown) = UserResolution.resolve("actiond-no-such-user") else {
      Issue.record("an unknown user resolved")
      return
    }
    #expect(unknown.description == "user actiond-no-such-user: no such user")
    let root = try UserResolution.resolve("root").get()
    #expect(root.uid == 0 && root.gid == 0 && root.groups.contains(0))
    // A number need not have a passwd entry: its own group, nothing else.
    let bare = try UserResolution.resolve("4242424").get()
    #expect(bare == ProcessUser(reference: "4242424", uid: 4_242_424, gid: 4_242_424, groups: []))
  }

  @Test(.enabled(if: geteuid() == 0, "switching users needs root"))
  func runsAsAnUnprivilegedUser() throws {
    let nobody = try UserResolution.resolve("nobody").get()
    let (result, lines) = try runToCompletion(
      ProcessRequest(
        argv: ["sh", "-c", "id -u; id -g; id -G"], environment: shellPath, workingDirectory: "/", user: nobody))
    #expect(result.outcome == .exited(0))
    #expect(texts(lines, .stdout).prefix(2) == ["\(nobody.uid)", "\(nobody.gid)"])
    let groups = (texts(lines, .stdout).last ?? "0").split(separator: " ").compactMap { UInt32($0) }
    #expect(Set(groups) == Set(nobody.groups), "exactly its groups; root's are dropped")
    // Real ids too, in its own process group, with setpriv exec'ed away (same pid).
    let (ids, idLines) = try runToCompletion(
      ProcessRequest(argv: ["/bin/grep", "-E", "^(Name|Pid|NSpgid|Uid|Gid):", "/proc/self/status"], user: nobody))
    #expect(ids.outcome == .exited(0))
    let status = texts(idLines, .stdout).joined(separator: "\n")
    #expect(status.contains("Name:\tgrep"))
    #expect(status.contains("Uid:\t\(nobody.uid)\t\(nobody.uid)\t\(nobody.uid)\t\(nobody.uid)"))
    #expect(status.contains("Gid:\t\(nobody.gid)\t\(nobody.gid)\t\(nobody.gid)\t\(nobody.gid)"))
    // A uid without a passwd entry.
    let (bare, bareLines) = try runToCompletion(
      ProcessRequest(
        argv: ["sh", "-c", "id -u; id -G"], environment: shellPath,
        user: try UserResolution.resolve("4242424").get()))
    #expect(bare.outcome == .exited(0))
    #expect(texts(bareLines, .stdout) == ["4242424", "4242424"])
  }

  @Test func aUserThatIsTheDaemonsOwnRunsTheCommandDirectly() throws {
    // Nothing to change, so no setpriv (which a daemon that is not root could not use).
    let me = ProcessUser(reference: "me", uid: geteuid(), gid: getegid(), groups: [])
    let (result, lines) = try runToCompletion(
      ProcessRequest(argv: ["/bin/grep", "-E", "^(Name|Uid):", "/proc/self/status"], user: me))
    #expect(result.outcome == .exited(0))
    #expect(texts(lines, .stdout).first == "Name:\tgrep")
    #expect(texts(lines, .stdout).last?.hasPrefix("Uid:\t\(geteuid())\t") == true)
  }

  @Test(.enabled(if: geteuid() != 0, "only a daemon that is not root refuses another user"))
  func aDaemonThatIsNotRootRefusesAnotherUserWithTheReason() throws {
    let (result, _) = try runToCompletion(
      ProcessRequest(argv: ["/bin/true"], user: ProcessUser(reference: "root", uid: 0, gid: 0, groups: [0])))
    guard case .spawnFailed(let failure) = result.outcome else {
      Issue.record("expected spawnFailed, got \(result.outcome)")
      return
    }
    #expect(failure.step == "user root")
    #expect(failure.errnoName == "EPERM")
  }

  @Test func terminationKillsTheWholeProcessGroupIncludingAGrandchild() throws {
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
    let loop = try EventLoop()
    let runner = ProcessRunner(loop: loop)
    var lines: [ProcessOutputLine] = []
    var result: ProcessResult?
    runner.run(
      ProcessRequest(
        argv: [script], environment: shellPath, timeout: .seconds(600), killGracePeriod: .milliseconds(300)),
      output: { lines.append($0) }, completion: { result = $0 })
    // Terminated (as a timeout does it) only once the grandchild exists and the parent has
    // said `started`, however long the machine takes: the two run concurrently, so either
    // may come first.
    try spin(loop) { readFile(pidFile) != nil && !lines.isEmpty }
    let grandchild = try #require(readFile(pidFile).flatMap { Int32($0.split(separator: "\n").first ?? "") })
    runner.terminateAll()
    try spin(loop) { result != nil }
    // Ended by actiond, not by its timeout (600 s away): reported as what it was.
    #expect(result?.outcome == .stopped)
    #expect(texts(lines, .stdout) == ["started"])
    // SIGKILL was sent before the result; wait (with a deadline) for the kernel to finish it.
    var clock = timespec()
    clock_gettime(CLOCK_MONOTONIC, &clock)
    let end = clock.tv_sec + 30
    while !isDead(grandchild) && clock.tv_sec < end {
      usleep(10_000)
      clock_gettime(CLOCK_MONOTONIC, &clock)
    }
    #expect(isDead(grandchild), "grandchild \(grandchild) survived the timeout")
  }

  @Test func aGroupThatDiesOnSigtermIsNotKeptWaitingForTheGracePeriod() throws {
    // The result must come when the group dies of its SIGTERM, not when the grace period
    // ends. The bound is the grace period itself, so the test says nothing about how fast
    // the machine is: a runner that waited for the grace fails it after 20 seconds.
    let grace = TimeSpan.seconds(20)
    let (result, _) = try runToCompletion(
      ProcessRequest(argv: ["/bin/sleep", "1000"], timeout: .milliseconds(100), killGracePeriod: grace))
    #expect(result.outcome == .timedOut)
    #expect(result.duration >= .milliseconds(100), "not before its timeout")
    #expect(result.duration < .milliseconds(100) + grace, "completed before the grace period ended")
  }

  @Test func hugeOutputIsDrainedAndBounded() throws {
    // In a helper process of its own: its memory is not shared with other tests running
    // in parallel, so its growth is the runner's alone.
    let helper = try builtExecutablePath("actiond-test-helper")
    let (result, lines) = try runToCompletion(
      ProcessRequest(argv: [helper, "drain-output"], timeout: .seconds(600)))
    #expect(result.outcome == .exited(0))
    let fields = (texts(lines, .stdout).first ?? "").split(separator: " ").map(String.init)
    try #require(fields.count == 5, "helper said \(lines)")
    #expect(fields[4] == "ok", "the command was never blocked on a full pipe")
    #expect(fields[0] == "100")
    #expect(fields[1] == "\(10_000_000 - 100 + 1)")
    #expect(fields[2] == "\(9_999_900 * 9 + 10_000_000)")
    // Buffering the output would add ~110 MB; the runner keeps one 64 KiB read buffer and
    // at most one cut line per stream.
    let growth = Int(fields[3]) ?? .max
    #expect(growth < 16 * 1024, "peak RSS grew by \(growth) kB")
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

  @Test func aPreparedRequestRunsOnItsReadiedPipesWithTheSameGuarantees() throws {
    let loop = try EventLoop()
    let runner = ProcessRunner(loop: loop)
    let request = ProcessRequest(
      argv: ["/bin/sh", "-c", "readlink /proc/self/fd/1; readlink /proc/self/fd/2 >&2; cat; ls /proc/self/fd"],
      environment: shellPath)
    runner.prepare(request)
    let readied = runner.preparedDescriptors.map(OpenFile.init)
    try #require(readied.count == 4)
    #expect(readied.allSatisfy { $0.isOpen })
    let (result, lines) = try runToCompletion(request, on: runner, loop)
    #expect(result.outcome == .exited(0))
    let out = texts(lines, .stdout)
    #expect(out.first == readied[1].procName, "stdout is the readied pipe")
    #expect(texts(lines, .stderr) == [readied[3].procName], "stderr is the readied pipe")
    // stdin /dev/null (cat ends at once), and 0, 1, 2 and ls's own fd: nothing else.
    #expect(out.dropFirst().compactMap { Int($0) }.count == 4, "open in the command: \(out)")
    #expect(runner.preparedDescriptors.isEmpty, "taken by the run")
    #expect(!readied.contains { $0.isOpen }, "every readied fd is closed once the run is over")
  }

  @Test func anotherRequestRunsAsUsualAndLeavesThePreparedOneReady() throws {
    let loop = try EventLoop()
    let runner = ProcessRunner(loop: loop)
    let hold = ProcessRequest(argv: ["/bin/readlink", "/proc/self/fd/1"], environment: ["ACTIOND_VALUE": "1"])
    runner.prepare(hold)
    let readied = runner.preparedDescriptors.map(OpenFile.init)
    try #require(readied.count == 4)
    // The same command for the other value: not the prepared request.
    var other = hold
    other.environment["ACTIOND_VALUE"] = "0"
    let (first, firstLines) = try runToCompletion(other, on: runner, loop)
    #expect(first.outcome == .exited(0))
    #expect(texts(firstLines, .stdout).count == 1)
    #expect(texts(firstLines, .stdout) != [readied[1].procName])
    #expect(readied.allSatisfy { $0.isOpen }, "still readied")
    let (second, secondLines) = try runToCompletion(hold, on: runner, loop)
    #expect(second.outcome == .exited(0))
    #expect(texts(secondLines, .stdout) == [readied[1].procName])
    #expect(!readied.contains { $0.isOpen })
  }

  @Test func aNewPreparationReplacesTheOldAndDiscardingClosesEverything() throws {
    let loop = try EventLoop()
    let runner = ProcessRunner(loop: loop)
    runner.prepare(ProcessRequest(argv: ["/bin/true"]))
    let first = runner.preparedDescriptors.map(OpenFile.init)
    runner.prepare(ProcessRequest(argv: ["/bin/false"]))
    let second = runner.preparedDescriptors.map(OpenFile.init)
    #expect(first.count == 4 && second.count == 4)
    #expect(!first.contains { $0.isOpen }, "the replaced preparation is released")
    #expect(second.allSatisfy { $0.isOpen })
    runner.discardPrepared()
    #expect(runner.preparedDescriptors.isEmpty)
    #expect(!second.contains { $0.isOpen })
    runner.discardPrepared()  // nothing prepared: nothing happens
  }

  @Test func aPreparedRequestFailsAsAnUnpreparedOneWouldAndLeaksNothing() throws {
    let loop = try EventLoop()
    let runner = ProcessRunner(loop: loop)
    let dir = try TemporaryDirectory()
    // Not preparable (no such program in its PATH): nothing is kept, and the run reports
    // the failure itself.
    let unknown = ProcessRequest(argv: ["actiond-no-such-program"], environment: ["PATH": dir.path])
    runner.prepare(unknown)
    #expect(runner.preparedDescriptors.isEmpty)
    let (notFound, _) = try runToCompletion(unknown, on: runner, loop)
    #expect(
      notFound.outcome
        == .spawnFailed(
          SpawnFailure(
            step: "execve actiond-no-such-program", errnoName: "ENOENT", message: "No such file or directory")
        ))
    // Preparable, but the exec fails.
    let missing = ProcessRequest(argv: [dir.file("nope")])
    runner.prepare(missing)
    let missingReadied = runner.preparedDescriptors.map(OpenFile.init)
    #expect(missingReadied.count == 4)
    let (absent, _) = try runToCompletion(missing, on: runner, loop)
    #expect(
      absent.outcome
        == .spawnFailed(
          SpawnFailure(step: "execve \(dir.file("nope"))", errnoName: "ENOENT", message: "No such file or directory")))
    #expect(!missingReadied.contains { $0.isOpen })
    // Preparable, but the spawn fails (the directory is entered in the child).
    let elsewhere = ProcessRequest(argv: ["/bin/pwd"], workingDirectory: dir.file("absent"))
    runner.prepare(elsewhere)
    let readied = runner.preparedDescriptors.map(OpenFile.init)
    #expect(readied.count == 4)
    let (failed, _) = try runToCompletion(elsewhere, on: runner, loop)
    #expect(
      failed.outcome
        == .spawnFailed(
          SpawnFailure(
            step: "chdir \(dir.file("absent"))", errnoName: "ENOENT", message: "No such file or directory")))
    #expect(!readied.contains { $0.isOpen })
    #expect(runner.runningCount == 0)
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
    #expect(outcomes == [.stopped, .stopped])
  }

  /// A stop is not a timeout: a run that timed out before the stop stays `timedOut`, one the
  /// stop ended is `stopped`, and one killed at the end of a bounded stop is `stopped` too.
  @Test func aStopIsReportedAsStoppedAndATimeoutAsTimedOut() throws {
    let loop = try EventLoop()
    let runner = ProcessRunner(loop: loop)
    var outcomes: [String: ProcessOutcome] = [:]
    // `trap '' TERM`: only the SIGKILL of the grace period (600 s) or of killAll ends it.
    let stubborn = ["/bin/sh", "-c", "trap '' TERM; while :; do sleep 1; done"]
    runner.run(ProcessRequest(argv: ["/bin/sleep", "1000"], timeout: .milliseconds(100)), output: { _ in }) {
      outcomes["timeout"] = $0.outcome
    }
    try spin(loop) { outcomes["timeout"] != nil }
    runner.run(ProcessRequest(argv: ["/bin/sleep", "1000"], timeout: .seconds(600)), output: { _ in }) {
      outcomes["stop"] = $0.outcome
    }
    runner.run(
      ProcessRequest(argv: stubborn, timeout: .seconds(600), killGracePeriod: .seconds(600)), output: { _ in }
    ) { outcomes["kill"] = $0.outcome }
    runner.terminateAll()
    try spin(loop) { outcomes["stop"] != nil }
    runner.killAll()
    try spin(loop) { outcomes["kill"] != nil }
    #expect(outcomes == ["timeout": .timedOut, "stop": .stopped, "kill": .stopped])
  }
}
