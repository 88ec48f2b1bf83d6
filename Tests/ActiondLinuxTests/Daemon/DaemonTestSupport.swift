// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// A failure of the harness itself (the daemon never got there), with the daemon's log.
struct DaemonHarnessError: Error, CustomStringConvertible {
  var description: String
}

/// The built `actiond` binary running as a real process on a temporary main file, drop-in
/// directory, state directory and socket, with one button `action` that no device serves
/// (every path is reached through the socket). Its environment is exactly `environment`.
///
/// Waiting is always for something specific (a log line, a reply, an event, an exit) with
/// a generous bound that only matters when it never comes: nothing here sleeps to test
/// timing.
final class DaemonHarness {
  let directory: TemporaryDirectory
  let configPath: String
  let socketPath: String
  let stateDirectory: String
  let controlsDirectory: String
  var environment: [String: String] = [:]
  /// Runs the daemon through this (e.g. `setpriv` to another uid).
  var commandPrefix: [String] = []
  private(set) var process: ChildProcess?
  /// Clients whose lines are read while waiting for anything.
  private var clients: [TestClient] = []
  /// Further descriptors to wake up for (a notify socket).
  var extraDescriptors: [Int32] = []
  private var nextID: Int64 = 1

  /// `controls` and `assignments` are JSON5 text for the main file's members.
  init(controls: String = "[]", assignments: String = "{}") throws {
    directory = try TemporaryDirectory("actiond-daemon")
    configPath = directory.file("actiond.json")
    socketPath = directory.file("actiond.sock")
    stateDirectory = directory.file("state")
    controlsDirectory = directory.file("controls.d")
    guard mkdir(controlsDirectory, 0o755) == 0 else { throw Errno.current }
    try writeConfiguration(controls: controls, assignments: assignments)
  }

  /// (Re)writes the main file.
  func writeConfiguration(controls: String, assignments: String = "{}") throws {
    try directory.write(
      "actiond.json",
      """
      {
        socket: { path: "\(socketPath)" },
        stateDirectory: "\(stateDirectory)",
        controlsDirectory: "\(controlsDirectory)",
        // No such device exists: the button waits quietly; the socket drives everything.
        buttons: [ { name: "action", key: "KEY_PROG1", match: { devnode: "/dev/input/actiond-test-none" } } ],
        controls: \(controls),
        assignments: \(assignments),
      }
      """)
  }

  /// Writes an executable `/bin/sh` script into the temporary directory; returns its path.
  @discardableResult
  func script(_ name: String, _ body: String) throws -> String {
    try directory.write(name, "#!/bin/sh\nset -u\n" + body + "\n", mode: 0o755)
  }

  /// Starts `actiond --config FILE --log-level debug ARGS` and, unless told otherwise,
  /// waits until it logged that it runs.
  func start(_ arguments: [String] = [], waitUntilRunning: Bool = true) throws {
    process = try ChildProcess(
      commandPrefix + [try builtExecutablePath("actiond"), "--config", configPath, "--log-level", "debug"] + arguments,
      environment: environment)
    if waitUntilRunning { try waitForLog("event=started") }
  }

  /// Everything the current daemon process wrote to stderr so far.
  var log: String {
    _ = process?.poll()
    return process?.errorOutput ?? ""
  }

  var pid: pid_t { process?.pid ?? 0 }

  /// Waits until `condition` holds, reading the daemon's output and every client's lines
  /// meanwhile; wakes up for input (poll(2)) rather than on a clock.
  func wait(
    _ what: @autoclosure () -> String, timeout: TimeSpan = .seconds(60), until condition: () throws -> Bool
  ) throws {
    let deadline = Syscall.monotonicNanoseconds() + timeout.nanoseconds
    while true {
      _ = process?.poll()
      for c in clients { c.readAvailable() }
      if try condition() { return }
      guard Syscall.monotonicNanoseconds() < deadline else {
        throw DaemonHarnessError(description: "timed out waiting for \(what())\n--- daemon log ---\n\(log)")
      }
      let descriptors =
        (process?.openDescriptors ?? []) + clients.filter { !$0.eof }.map(\.fd) + extraDescriptors
      var fds = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      // The bound only caps one wait for a condition that no descriptor announces
      // (a process ending with its pipes already closed, a file written by a script).
      _ = Glibc.poll(&fds, nfds_t(fds.count), 100)
    }
  }

  /// Waits for a log line containing `text` (after `count - 1` earlier ones).
  func waitForLog(_ text: String, count: Int = 1) throws {
    try wait("\(count)× \"\(text)\" in the log") { occurrences(of: text, in: log) >= count }
  }

  /// Connects a raw protocol client and waits for its `hello`.
  func connect() throws -> TestClient {
    let c = try TestClient(path: socketPath)
    clients.append(c)
    try wait("hello") { !c.messages.isEmpty || c.eof }
    guard case .hello? = c.messages.first else {
      throw DaemonHarnessError(description: "no hello: \(c.lines)")
    }
    return c
  }

  /// Forgets `client` (closing it is up to the caller, by dropping it).
  func forget(_ client: TestClient) {
    clients.removeAll { $0 === client }
  }

  /// Sends a request with a fresh id; `members` are the JSON members besides the id.
  func send(_ client: TestClient, _ members: String) -> RequestID {
    let id = nextID
    nextID += 1
    client.send("{\"id\":\(id),\(members)}")
    return .integer(id)
  }

  /// Waits for the answer (reply or error) to `id`.
  func answer(_ client: TestClient, _ id: RequestID, timeout: TimeSpan = .seconds(60)) throws -> ServerMessage {
    var found: ServerMessage?
    try wait("the answer to request \(id)", timeout: timeout) {
      found = client.answer(id)
      return found != nil
    }
    return found!
  }

  /// Sends a request and waits for its answer.
  @discardableResult
  func request(_ client: TestClient, _ members: String) throws -> ServerMessage {
    try answer(client, send(client, members))
  }

  /// Subscribes `client` to every event.
  func subscribe(_ client: TestClient) throws {
    let answer = try request(client, #""request":"subscribe""#)
    guard case .reply = answer else { throw DaemonHarnessError(description: "subscribe failed: \(answer)") }
  }

  /// Waits for an event on `client` that `match` accepts (among those after `skip`).
  @discardableResult
  func waitForEvent(
    _ client: TestClient, _ what: String, after skip: Int = 0, _ match: (Event) -> Bool
  ) throws -> Event {
    var found: Event?
    try wait("event \(what)") {
      found = client.events.dropFirst(skip).first(where: match)
      return found != nil
    }
    return found!
  }

  /// Makes a FIFO a fixture script can block on (`cat GATE > /dev/null`) until `release(gate:)`.
  func gate(_ name: String) throws -> String {
    let path = directory.file(name)
    guard mkfifo(path, 0o600) == 0 else { throw Errno.current }
    return path
  }

  /// Lets the script blocked on `gate` go on: opens the FIFO's writing end once the script
  /// has its reading end open, and closes it (the script reads end of file).
  func release(gate: String) throws {
    try wait("a script to wait on \(gate)") {
      let fd = open(gate, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
      guard fd >= 0 else { return false }
      close(fd)
      return true
    }
  }

  func signal(_ signo: Int32) {
    if let process { kill(process.pid, signo) }
  }

  /// SIGTERM, then waits for the exit; returns the exit status (128+N for signal N).
  @discardableResult
  func stop() throws -> Int32 {
    guard let process else { return -1 }
    kill(process.pid, SIGTERM)
    return try waitForExit()
  }

  /// Waits until the daemon exited and its output ended.
  func waitForExit() throws -> Int32 {
    guard let process else { return -1 }
    try wait("the daemon to exit") { process.poll() }
    return process.exitStatus ?? -1
  }

  /// The daemon's resident set size in KiB (VmRSS of /proc/PID/status).
  func residentKiB() throws -> Int {
    guard let status = readFile("/proc/\(pid)/status"),
      let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
      let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
    else { throw DaemonHarnessError(description: "no VmRSS for pid \(pid)") }
    return kib
  }
}

func occurrences(of needle: String, in haystack: String) -> Int {
  haystack.split(separator: "\n").filter { $0.contains(needle) }.count
}

extension ServerMessage {
  /// The control of a `set`/`perform` reply.
  var control: ControlSnapshot? {
    if case .reply(let r) = self, case .control(let c) = r.result { return c }
    return nil
  }

  /// The controls of a `list`/`get`/`reload` reply.
  var controls: [ControlSnapshot]? {
    if case .reply(let r) = self, case .controls(let c) = r.result { return c }
    return nil
  }

  /// The buttons of a `status` reply.
  var buttons: [ButtonStatus]? {
    if case .reply(let r) = self, case .buttons(let b) = r.result { return b }
    return nil
  }

  /// The error of an error answer.
  var failure: ProtocolError? {
    if case .error(_, let e) = self { return e }
    return nil
  }
}

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
  guard let dir = opendir("/proc") else { return [] }
  defer { closedir(dir) }
  var members: [pid_t] = []
  while let entry = readdir(dir) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    guard let pid = pid_t(name), let stat = readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else {
      continue
    }
    // After "(comm)": state, ppid, pgrp, ...
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 2, fields[0] != "Z", fields[0] != "X", pid_t(fields[2]) == group else { continue }
    members.append(pid)
  }
  return members
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
