// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// `KEY=VALUE` lines (as `env` prints them) as a dictionary.
func environmentDump(_ text: String) -> [String: String] {
  var out: [String: String] = [:]
  for line in text.split(separator: "\n") {
    guard let eq = line.firstIndex(of: "=") else { continue }
    out[String(line[..<eq])] = String(line[line.index(after: eq)...])
  }
  return out
}

/// Whether process `pid` is gone (or only a zombie nobody reaped yet: it runs nothing).
func processIsGone(_ pid: pid_t) -> Bool {
  guard let stat = readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return true }
  let state = stat[stat.index(after: close)...].split(separator: " ").first
  return state == "Z" || state == "X"
}

/// The processes of process group `group` that still run (zombies do not count).
func liveMembers(ofGroup group: pid_t) -> [pid_t] {
  listDirectory("/proc").compactMap { name -> pid_t? in
    guard let pid = pid_t(name), let stat = readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else {
      return nil
    }
    // After "(comm)": state, ppid, pgrp, ...
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 2, fields[0] != "Z", fields[0] != "X", pid_t(fields[2]) == group else { return nil }
    return pid
  }
}

/// The daemon in this process, on recording fakes: a ``RecordingInputSource`` for the
/// devices and a ``RecordingProcessRunner`` for the commands, with the real loop, socket,
/// store and engine. What the built binary does through a real device is the VM tier's;
/// this checks the wiring between input, engine, effects and status without one.
/// (DaemonWiringTests and DaemonFeedbackTests.)
final class WiredDaemon {
  let directory: TemporaryDirectory
  let input = RecordingInputSource()
  let runner = RecordingProcessRunner()
  let log = RecordingLogSink()
  let daemon: Daemon
  let device = InputDeviceInfo(
    syspath: "/sys/devices/virtual/input/input9", devnode: "/dev/input/event9", name: "test keys")

  /// `assignment`: the button's assignment; `feedback`: its feedback outputs (none when
  /// nil); `lights`: where feedback goes (the real lights when nil).
  init(
    assignment: String = #""org.example.lamp""#, feedback: String? = nil, lights: (any FeedbackLightFactory)? = nil
  ) throws {
    directory = try TemporaryDirectory("actiond-wiring")
    let config = try WiredDaemon.writeConfiguration(directory, assignment: assignment, feedback: feedback)
    daemon = try Daemon(
      settings: Daemon.Settings(configPath: config, logLevel: .debug, environment: [:]), input: input,
      runner: runner, logSink: log, feedbackLights: lights)
    try daemon.start()
  }

  /// Writes the configuration file (one button, `button`, on ``device``, a store-backed
  /// exec toggle "org.example.lamp"); its path. Called again, it is what a reload reads.
  @discardableResult
  static func writeConfiguration(
    _ directory: TemporaryDirectory, assignment: String = #""org.example.lamp""#, feedback: String? = nil,
    button: String = "action"
  ) throws -> String {
    try directory.write(
      "actiond.json",
      """
      {
        socket: { path: "\(directory.file("actiond.sock"))" },
        stateDirectory: "\(directory.file("state"))",
        buttons: [ { name: "\(button)", key: "KEY_PROG1", holdThresholdMs: 600, match: { devnode: "/dev/input/event9" }\(
          feedback.map { ", feedback: \($0)" } ?? "") } ],
        controls: [
          { kind: "org.example.lamp", type: "toggle", displayName: "Lamp",
            valueText: { on: "Lit", off: "Dark" },
            intent: { type: "exec", argv: ["/usr/bin/lamp"] }, value: { type: "store", initial: false } },
        ],
        assignments: { "\(button)": \(assignment) },
      }
      """)
  }

  /// Binds the button to ``device`` as the input manager would report it, at `time`.
  func plugIn(at time: MonotonicInstant) {
    input.buttonDevices["action"] = device
    let bound = BoundInputDevice(info: device, buttons: ["action"], grabbed: false)
    input.boundDevices = [bound]
    input.emit(.appeared(button: "action", device: device, isDown: false, at: time))
    input.emit(.deviceBound(bound, readOnly: false))
  }

  /// Turns the loop until `condition` holds; the bound only matters when it never does.
  func turn(until what: String, _ condition: () -> Bool) throws {
    let deadline = daemon.loop.now() + .seconds(30)
    while !condition() {
      guard daemon.loop.now() < deadline else {
        throw DaemonHarnessError(
          description: "timed out waiting for \(what); log:\n"
            + log.records.map { "\($0.event ?? "-") \($0.message)" }.joined(separator: "\n"))
      }
      try daemon.loop.runOnce(until: daemon.loop.now() + .milliseconds(100))
    }
  }

  /// Connects a client to the daemon's socket and turns the loop until its `hello`.
  func connect() throws -> TestClient {
    let client = try TestClient(path: directory.file("actiond.sock"))
    try turn(until: "hello") {
      client.readAvailable()
      return !client.messages.isEmpty
    }
    return client
  }

  /// Sends `members` with id `id` and turns the loop until the answer.
  func request(_ client: TestClient, id: Int64, _ members: String) throws -> ServerMessage {
    client.send("{\"id\":\(id),\(members)}")
    var answer: ServerMessage?
    try turn(until: "the answer to request \(id)") {
      client.readAvailable()
      answer = client.answer(.integer(id))
      return answer != nil
    }
    return answer!
  }

  /// One more turn of the loop for whatever is due now.
  func turnOnce() throws { try daemon.loop.runOnce(until: daemon.loop.now()) }
}
