// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon

/// Issue 30: a stop (SIGTERM) while a momentary toggle is held on leaves it off. The real
/// daemon (`actiond-test-helper serve-fifo`: the daemon with its button read from a FIFO),
/// real signals and real child processes: the on command still running is stopped and
/// reported `stopped` (not a timeout), the off runs and is waited for, the daemon exits 0.
@Suite struct DaemonMomentaryStopTests {
  /// A daemon holding a push-to-talk key: its one control's command is `script` (run by
  /// /bin/sh with ACTIOND_VALUE 1 for on, 0 for off), its button read from a FIFO.
  final class PushToTalk {
    let directory: TemporaryDirectory
    let daemon: ChildProcess
    private var writerFD: Int32 = -1

    init(script: String) throws {
      let helper = try builtExecutablePath("actiond-test-helper")
      directory = try TemporaryDirectory("actiond-ptt-stop")
      let fifo = directory.file("buttons.fifo")
      guard mkfifo(fifo, 0o600) == 0, mkdir(directory.file("controls.d"), 0o755) == 0 else { throw Errno.current }
      try directory.write("mic", "#!/bin/sh\ncd '\(directory.path)'\n" + script + "\n", mode: 0o755)
      try directory.write(
        "config.json",
        """
        {
          logLevel: "info",
          socket: { path: "\(directory.file("sock"))" },
          stateDirectory: "\(directory.file("state"))",
          controlsDirectory: "\(directory.file("controls.d"))",
          buttons: [ { name: "ptt", key: "KEY_PROG1", match: { name: "actiond-bench-fifo" }, holdThresholdMs: 100 } ],
          controls: [ { kind: "org.test.mic", type: "toggle", displayName: "Microphone",
                        intent: { type: "exec", argv: ["\(directory.file("mic"))"], timeoutMs: 5000 },
                        value: { type: "store", initial: false } } ],
          assignments: { ptt: { kind: "org.test.mic", momentary: true } },
        }
        """)
      daemon = try ChildProcess(
        [helper, "serve-fifo", directory.file("config.json"), fifo], environment: ["SERVE_FIFO_CONFIG_LOG_LEVEL": "1"])
      try waitFor("the socket") { access(directory.file("sock"), F_OK) == 0 }
      // The helper holds the FIFO open for reading and writing: this open never blocks.
      writerFD = try Syscall.open(fifo, O_WRONLY | O_CLOEXEC)
    }

    deinit {
      if writerFD >= 0 { Syscall.close(writerFD) }
      if daemon.exitStatus == nil {
        kill(daemon.pid, SIGKILL)
        _ = try? waitFor("the daemon to be killed") { daemon.poll() }
      }
    }

    var log: String {
      _ = daemon.poll()
      return daemon.errorOutput
    }

    /// Waits (polling, with a deadline that says nothing about the machine's speed) until
    /// `condition` holds.
    func waitFor(_ what: String, until condition: () -> Bool) throws {
      let deadline = Syscall.monotonicNanoseconds() + 60_000_000_000
      while !condition() {
        guard Syscall.monotonicNanoseconds() < deadline else {
          throw DaemonHarnessError(description: "timed out waiting for \(what):\n\(log)")
        }
        usleep(20_000)
      }
    }

    /// The key goes down now (and stays down).
    func keyDown() throws {
      let now = Syscall.monotonicNanoseconds() / 1000 * 1000
      try Syscall.writeAll(writerFD, ServeFIFOTests.record(type: 1, code: 148, value: 1, at: now))
      try Syscall.writeAll(writerFD, ServeFIFOTests.record(type: 0, code: 0, value: 0, at: now))
    }

    func file(_ name: String) -> String? { readFile(directory.file(name)) }

    /// Sends `signal` and waits for the daemon's exit status.
    func exitStatus(after signal: Int32) throws -> Int32? {
      kill(daemon.pid, signal)
      try waitFor("the daemon to exit") { daemon.poll() }
      return daemon.exitStatus
    }
  }

  /// The observed failure: SIGTERM while the on command (`sleep 30`) runs killed it, called
  /// it a timeout, and refused the off ("actiond is stopping"): the microphone stayed live.
  @Test func aStopWhileTheOnCommandRunsStopsItThenRunsTheOffAndExits() throws {
    let ptt = try PushToTalk(
      script: """
        if [ "$ACTIOND_VALUE" = 1 ]; then echo $$ >on.tmp; mv on.tmp on.pid; exec sleep 30; fi
        echo "off after $(cat on.pid)" >off.tmp; mv off.tmp off.done
        """)
    try ptt.keyDown()
    try ptt.waitFor("the on command to run") { ptt.file("on.pid") != nil }
    let on = try #require(ptt.file("on.pid").flatMap { pid_t($0.dropLast()) })
    let status = try ptt.exitStatus(after: SIGTERM)
    #expect(status == 0, "\(ptt.log)")
    // The off ran, after the on, before the daemon exited.
    #expect(ptt.file("off.done") == "off after \(on)\n", "\(ptt.log)")
    #expect(liveMembers(ofGroup: on).isEmpty, "the on command outlived the daemon")
    let log = ptt.log
    // Reported as what happened: stopped by actiond, not a timeout; within the bound.
    #expect(log.contains("the command was stopped by actiond"), "\(log)")
    #expect(!log.contains("timed out"), "\(log)")
    #expect(!log.contains("actiond is stopping\"") && !log.contains("not started"), "\(log)")
    #expect(log.contains("org.test.mic goes off: actiond is stopping"), "\(log)")
    #expect(!log.contains("bound of"), "the stop had to kill what was left: \(log)")
  }

  /// A second SIGTERM while the stop waits for an off stops waiting: the off's group is
  /// killed and the daemon exits at once (docs/operations.md).
  @Test func aSecondSigtermStopsWaitingForTheOff() throws {
    let ptt = try PushToTalk(
      script: """
        if [ "$ACTIOND_VALUE" = 1 ]; then echo on >on.done; exit 0; fi
        echo $$ >off.tmp; mv off.tmp off.pid; exec sleep 30
        """)
    try ptt.keyDown()
    try ptt.waitFor("the on command to run") { ptt.file("on.done") != nil }
    kill(ptt.daemon.pid, SIGTERM)
    try ptt.waitFor("the off command to run") { ptt.file("off.pid") != nil }
    let off = try #require(ptt.file("off.pid").flatMap { pid_t($0.dropLast()) })
    let status = try ptt.exitStatus(after: SIGTERM)
    #expect(status == 0, "\(ptt.log)")
    #expect(liveMembers(ofGroup: off).isEmpty, "the off command outlived the daemon")
    #expect(ptt.log.contains("SIGTERM again: not waiting any longer"), "\(ptt.log)")
  }
}
