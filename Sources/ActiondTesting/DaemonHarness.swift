// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import Glibc

/// A failure of the harness itself (the daemon never got there), with the daemon's log.
public struct DaemonHarnessError: Error, CustomStringConvertible {
  public var description: String
  public init(description: String) { self.description = description }
}

/// The built `actiond` binary running as a real process on a temporary main file, drop-in
/// directory, state directory and socket, with one button `action` that no device serves
/// (every path is reached through the socket). Its environment is exactly `environment`.
///
/// Waiting is always for something specific (a log line, a reply, an event, an exit) with
/// a generous bound that only matters when it never comes: nothing here sleeps to test
/// timing.
public final class DaemonHarness {
  public let directory: TemporaryDirectory
  public let configPath: String
  public let socketPath: String
  public let stateDirectory: String
  public let controlsDirectory: String
  public var environment: [String: String] = [:]
  /// Runs the daemon through this (e.g. `setpriv` to another uid).
  public var commandPrefix: [String] = []
  public private(set) var process: ChildProcess?
  /// Clients whose lines are read while waiting for anything.
  private var clients: [TestClient] = []
  /// Further descriptors to wake up for (a notify socket).
  public var extraDescriptors: [Int32] = []
  private var nextID: Int64 = 1

  /// `controls` and `assignments` are JSON5 text for the main file's members.
  public init(controls: String = "[]", assignments: String = "{}") throws {
    directory = try TemporaryDirectory("actiond-daemon")
    configPath = directory.file("actiond.json")
    socketPath = directory.file("actiond.sock")
    stateDirectory = directory.file("state")
    controlsDirectory = directory.file("controls.d")
    guard mkdir(controlsDirectory, 0o755) == 0 else { throw Errno.current }
    try writeConfiguration(controls: controls, assignments: assignments)
  }

  /// (Re)writes the main file.
  public func writeConfiguration(controls: String, assignments: String = "{}") throws {
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
  public func script(_ name: String, _ body: String) throws -> String {
    try directory.write(name, "#!/bin/sh\nset -u\n" + body + "\n", mode: 0o755)
  }

  /// Starts `actiond --config FILE --log-level debug ARGS` and, unless told otherwise,
  /// waits until it logged that it runs.
  public func start(_ arguments: [String] = [], waitUntilRunning: Bool = true) throws {
    process = try ChildProcess(
      commandPrefix + [try builtExecutablePath("actiond"), "--config", configPath, "--log-level", "debug"] + arguments,
      environment: environment)
    if waitUntilRunning { try waitForLog("event=started") }
  }

  /// Everything the current daemon process wrote to stderr so far.
  public var log: String {
    _ = process?.poll()
    return process?.errorOutput ?? ""
  }

  /// The current daemon process's id (0 before the start).
  public var pid: pid_t { process?.pid ?? 0 }

  /// Waits until `condition` holds, reading the daemon's output and every client's lines
  /// meanwhile; wakes up for input (poll(2)) rather than on a clock.
  public func wait(
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
  public func waitForLog(_ text: String, count: Int = 1) throws {
    try wait("\(count)× \"\(text)\" in the log") { occurrences(of: text, in: log) >= count }
  }

  /// Connects a raw protocol client and waits for its `hello`.
  public func connect() throws -> TestClient {
    let c = try TestClient(path: socketPath)
    clients.append(c)
    try wait("hello") { !c.messages.isEmpty || c.eof }
    guard case .hello? = c.messages.first else {
      throw DaemonHarnessError(description: "no hello: \(c.lines)")
    }
    return c
  }

  /// Forgets `client` (closing it is up to the caller, by dropping it).
  public func forget(_ client: TestClient) {
    clients.removeAll { $0 === client }
  }

  /// Sends a request with a fresh id; `members` are the JSON members besides the id.
  public func send(_ client: TestClient, _ members: String) -> RequestID {
    let id = nextID
    nextID += 1
    client.send("{\"id\":\(id),\(members)}")
    return .integer(id)
  }

  /// Waits for the answer (reply or error) to `id`.
  public func answer(_ client: TestClient, _ id: RequestID, timeout: TimeSpan = .seconds(60)) throws -> ServerMessage {
    var found: ServerMessage?
    try wait("the answer to request \(id)", timeout: timeout) {
      found = client.answer(id)
      return found != nil
    }
    return found!
  }

  /// Sends a request and waits for its answer.
  @discardableResult
  public func request(_ client: TestClient, _ members: String) throws -> ServerMessage {
    try answer(client, send(client, members))
  }

  /// Subscribes `client` to every event.
  public func subscribe(_ client: TestClient) throws {
    let answer = try request(client, #""request":"subscribe""#)
    guard case .reply = answer else { throw DaemonHarnessError(description: "subscribe failed: \(answer)") }
  }

  /// Waits for an event on `client` that `match` accepts (among those after `skip`).
  @discardableResult
  public func waitForEvent(
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
  public func gate(_ name: String) throws -> String {
    let path = directory.file(name)
    guard mkfifo(path, 0o600) == 0 else { throw Errno.current }
    return path
  }

  /// Lets the script blocked on `gate` go on: opens the FIFO's writing end once the script
  /// has its reading end open, and closes it (the script reads end of file).
  public func release(gate: String) throws {
    try wait("a script to wait on \(gate)") {
      let fd = open(gate, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
      guard fd >= 0 else { return false }
      close(fd)
      return true
    }
  }

  /// Sends `signo` to the daemon.
  public func signal(_ signo: Int32) {
    if let process { kill(process.pid, signo) }
  }

  /// SIGTERM, then waits for the exit; returns the exit status (128+N for signal N).
  @discardableResult
  public func stop() throws -> Int32 {
    guard let process else { return -1 }
    kill(process.pid, SIGTERM)
    return try waitForExit()
  }

  /// Waits until the daemon exited and its output ended.
  public func waitForExit() throws -> Int32 {
    guard let process else { return -1 }
    try wait("the daemon to exit") { process.poll() }
    return process.exitStatus ?? -1
  }

  /// The daemon's resident set size in KiB (VmRSS of /proc/PID/status).
  public func residentKiB() throws -> Int {
    guard let status = readFile("/proc/\(pid)/status"),
      let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
      let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
    else { throw DaemonHarnessError(description: "no VmRSS for pid \(pid)") }
    return kib
  }
}

/// How many lines of `haystack` contain `needle`.
public func occurrences(of needle: String, in haystack: String) -> Int {
  haystack.split(separator: "\n").filter { $0.contains(needle) }.count
}

extension ServerMessage {
  /// The control of a `set`/`perform` reply.
  public var control: ControlSnapshot? {
    if case .reply(let r) = self, case .control(let c) = r.result { return c }
    return nil
  }

  /// The controls of a `list`/`get`/`reload` reply.
  public var controls: [ControlSnapshot]? {
    if case .reply(let r) = self, case .controls(let c) = r.result { return c }
    return nil
  }

  /// The buttons of a `status` reply.
  public var buttons: [ButtonStatus]? {
    if case .reply(let r) = self, case .buttons(let b) = r.result { return b }
    return nil
  }

  /// The error of an error answer.
  public var failure: ProtocolError? {
    if case .error(_, let e) = self { return e }
    return nil
  }
}
