// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon

/// `actiond-test-helper serve-fifo`, the daemon that make bench's host command-start figures
/// measure: a hold written to its FIFO as input_event records runs the command once, with
/// the press's identity, as a hold on an evdev device does. Should the fixture mis-parse a
/// record or lose the button, those figures would measure nothing.
@Suite struct ServeFIFOTests {
  /// One input_event record as the kernel lays it out on 64-bit Linux.
  static func record(type: UInt16, code: UInt16, value: Int32, at nanoseconds: Int64) -> [UInt8] {
    var bytes: [UInt8] = []
    withUnsafeBytes(of: (nanoseconds / 1_000_000_000).littleEndian) { bytes += $0 }
    withUnsafeBytes(of: (nanoseconds % 1_000_000_000 / 1000).littleEndian) { bytes += $0 }
    withUnsafeBytes(of: type.littleEndian) { bytes += $0 }
    withUnsafeBytes(of: code.littleEndian) { bytes += $0 }
    withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    return bytes
  }

  @Test func aHoldWrittenToTheFIFORunsItsCommandOnceWithThePressTime() throws {
    let helper = try builtExecutablePath("actiond-test-helper")
    let directory = try TemporaryDirectory("actiond-fifo")
    let fifo = directory.file("buttons.fifo")
    #expect(mkfifo(fifo, 0o600) == 0)
    #expect(mkdir(directory.file("controls.d"), 0o755) == 0)
    let ran = directory.file("ran")
    try directory.write(
      "config.json",
      """
      {
        socket: { path: "\(directory.file("sock"))" },
        stateDirectory: "\(directory.file("state"))",
        controlsDirectory: "\(directory.file("controls.d"))",
        buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "actiond-bench-fifo" }, holdThresholdMs: 100 } ],
        controls: [ { kind: "org.example.run", type: "button", displayName: "Run",
                      intent: { type: "exec", argv: ["/bin/sh", "-c", "echo $ACTIOND_BUTTON $ACTIOND_PRESS_TIME >>\(ran)"] } } ],
        assignments: { action: { kind: "org.example.run" } },
      }
      """)
    let daemon = try ChildProcess([helper, "serve-fifo", directory.file("config.json"), fifo])
    func waitFor(_ what: String, _ condition: () -> Bool) throws {
      let deadline = Syscall.monotonicNanoseconds() + 60_000_000_000
      while !condition() {
        if daemon.poll() { throw DaemonHarnessError(description: "serve-fifo exited: \(daemon.errorOutput)") }
        guard Syscall.monotonicNanoseconds() < deadline else {
          throw DaemonHarnessError(description: "timed out waiting for \(what): \(daemon.errorOutput)")
        }
        usleep(20_000)
      }
    }
    try waitFor("the socket") { access(directory.file("sock"), F_OK) == 0 }
    // The helper holds the FIFO open for reading and writing: this open never blocks.
    let writer = try Syscall.open(fifo, O_WRONLY | O_CLOEXEC)
    defer { Syscall.close(writer) }
    let down = Syscall.monotonicNanoseconds() / 1000 * 1000
    // An event of another key first: only the button's key counts.
    try Syscall.writeAll(writer, Self.record(type: 1, code: 30, value: 1, at: down - 1_000_000))
    try Syscall.writeAll(writer, Self.record(type: 1, code: 148, value: 1, at: down))
    try Syscall.writeAll(writer, Self.record(type: 0, code: 0, value: 0, at: down))
    // The command runs at the hold deadline, with the key still down. The shell creates
    // the file before echo writes it: wait for the line, or the stop may come between.
    try waitFor("the hold's command") { readFile(ran)?.hasSuffix("\n") ?? false }
    try Syscall.writeAll(writer, Self.record(type: 1, code: 148, value: 0, at: Syscall.monotonicNanoseconds()))
    try Syscall.writeAll(writer, Self.record(type: 0, code: 0, value: 0, at: Syscall.monotonicNanoseconds()))
    kill(daemon.pid, SIGTERM)
    try waitFor("serve-fifo to stop") { daemon.poll() }
    #expect(daemon.exitStatus == 0, "\(daemon.errorOutput)")
    #expect(readFile(ran) == "action \(down / 1000)\n")
    #expect(!daemon.errorOutput.contains("anomaly"), "\(daemon.errorOutput)")
  }
}
