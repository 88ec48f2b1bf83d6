// SPDX-License-Identifier: Apache-2.0
// Child-process fixtures for the tests (ActiondLinuxTests, ActiondDaemonTests) and make bench. Not installed.
//
//   actiond-test-helper write-state DIR FIRST
//     Saves snapshots FIRST, FIRST+1, ... to DIR/state.json forever, printing each number
//     on stdout after its save returned. SIGTERM is ignored so only SIGKILL stops it
//     (the crash-safety test kills it at random points).
//
//   actiond-test-helper drain-output
//     Runs, through a ProcessRunner, a command that writes 110 MB (10 million short lines
//     on stdout, then one 10 MB line on stderr) under small output limits, and prints
//     "FORWARDED DISCARDED_LINES DISCARDED_BYTES GROWTH_KB OUTCOME": GROWTH_KB is this
//     process's peak RSS during the run over its RSS before it. In a process of its own
//     so that no other test's memory counts.
//
//   actiond-test-helper serve-fifo CONFIG FIFO
//     The daemon with its first button read from a FIFO of input_event records
//     (ServeFIFO.swift), for make bench's host command-start figures.
import ActiondCore
import ActiondLinux
import Glibc

@main
struct TestHelper {
  static func main() {
    let arguments = CommandLine.arguments
    if arguments.count == 2, arguments[1] == "drain-output" { drainOutput() }
    if arguments.count == 4, arguments[1] == "serve-fifo" { ServeFIFO.run(config: arguments[2], fifo: arguments[3]) }
    guard arguments.count == 4, arguments[1] == "write-state", let first = Int64(arguments[3]) else {
      fail("usage: actiond-test-helper write-state DIR FIRST | drain-output | serve-fifo CONFIG FIFO")
    }
    _ = signal(SIGTERM, SIG_IGN)
    let store = StateStore(directory: arguments[2])
    var n = first
    while true {
      do { try store.save(snapshot(n)) } catch { fail("save \(n): \(error)") }
      do { try Syscall.writeAll(STDOUT_FILENO, Array("\(n)\n".utf8)) } catch { fail("stdout: \(error)") }
      n += 1
    }
  }

  static func drainOutput() -> Never {
    do {
      let loop = try EventLoop()
      let runner = ProcessRunner(loop: loop)
      func runOne(_ request: ProcessRequest) throws -> ProcessResult {
        var result: ProcessResult?
        runner.run(request, output: { _ in }) { result = $0 }
        while result == nil { try loop.runOnce(until: loop.now() + .seconds(30)) }
        return result!
      }
      // Warm up (first spawn, first reads) before the baseline is taken.
      _ = try runOne(ProcessRequest(argv: ["/bin/echo", "warm"]))
      let before = statusKilobytes("VmRSS:")
      let result = try runOne(
        ProcessRequest(
          argv: ["/bin/sh", "-c", "yes 123456789 | head -c 100000000; head -c 10000000 /dev/zero >&2"],
          environment: ["PATH": "/usr/bin:/bin"], timeout: .seconds(300),
          outputLimits: ProcessOutputLimits(maxLineBytes: 4096, maxLines: 100, maxBytes: 64 * 1024)))
      let peak = statusKilobytes("VmHWM:")
      let line =
        "\(result.forwardedLines) \(result.discardedLines) \(result.discardedBytes) \(peak - before) "
        + "\(result.outcome == .exited(0) ? "ok" : "failed")\n"
      try Syscall.writeAll(STDOUT_FILENO, Array(line.utf8))
      exit(0)
    } catch {
      fail("drain-output: \(error)")
    }
  }

  /// A kB figure of /proc/self/status (`VmRSS:`, `VmHWM:`).
  static func statusKilobytes(_ field: String) -> Int {
    let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return 0 }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 8192)
    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard n > 0 else { return 0 }
    for line in String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n") where line.hasPrefix(field) {
      return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
    }
    return 0
  }

  /// Snapshot number `n`: its size varies (padding) so files grow and shrink between saves.
  /// Copied in StateStoreTests: through ActiondTesting this helper would link swift-testing.
  static func snapshot(_ n: Int64) -> StateSnapshot {
    StateSnapshot(
      assignments: [
        "action": [
          .hold: .init(
            kind: "org.example.counter",
            configuration: ["n": .integer(n), "padding": .string(String(repeating: "x", count: Int(n % 7) * 1500))])
        ]
      ],
      values: ["org.example.timer": n % 2 == 0, "n-\(n % 5)": true])
  }

  static func fail(_ message: String) -> Never {
    try? Syscall.writeAll(STDERR_FILENO, Array("actiond-test-helper: \(message)\n".utf8))
    exit(2)
  }
}
