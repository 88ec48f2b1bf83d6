// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import CActiondShim
import Glibc
import Testing

/// A request handler with canned answers that records what it saw. `perform` is held
/// (answered by the test) so asynchronous replies and vanishing clients can be tested.
public final class FakeHandler: RequestHandler {
  /// The one control this handler knows.
  public static let timer = ControlSnapshot(
    kind: "org.example.timer", displayName: "Work Timer", type: .toggle, value: false, valueText: "Stopped",
    symbol: "timer", tint: "orange", hint: "Hold to Start")
  /// The one button this handler knows, with ``timer`` assigned.
  public static let button = ButtonStatus(
    name: "action", key: "KEY_PROG1", devices: ["/dev/input/event3"], holdThreshold: .milliseconds(600), control: timer)

  /// Every request, in order, with its client.
  public var requests: [(Request, ClientInfo)] = []
  /// The responders of the `perform`s not answered yet.
  public var heldPerforms: [Responder] = []
  /// The clients that went away, in order.
  public var disconnected: [ClientInfo] = []
  /// Which client provides each kind.
  public var providers: [String: ClientID] = [:]
  /// When set, `perform` is answered at once with this state instead of being held.
  public var performResult: ControlSnapshot?
  /// Requests answered by dropping the responder (a handler bug the server must survive).
  public var dropRequests: Set<RequestName> = []

  public init() {}

  public func snapshot() -> [ButtonStatus] { [Self.button] }

  public func handle(_ request: Request, from client: ClientInfo, reply: Responder) {
    requests.append((request, client))
    if dropRequests.contains(request.name) { return }
    switch request.body {
    case .status(let b):
      if let b, b != "action" { return reply.fail(ProtocolError(.unknownButton, "no button named \"\(b)\"")) }
      reply.succeed(.buttons([Self.button]))
    case .list: reply.succeed(.controls([Self.timer]))
    case .get(let kind):
      guard kind == Self.timer.kind else {
        return reply.fail(ProtocolError(.unknownKind, "no control of kind \"\(kind)\""))
      }
      reply.succeed(.controls([Self.timer]))
    case .perform:
      if let performResult { reply.succeed(.control(performResult)) } else { heldPerforms.append(reply) }
    case .press: reply.succeed(.button(Self.button))
    case .set(_, let value, _):
      var c = Self.timer
      c.value = value
      c.valueText = value ? "Running" : "Stopped"
      reply.succeed(.control(c))
    case .assign(let button, _, _, _, _):
      reply.succeed(
        .button(
          ButtonStatus(
            name: button, key: "KEY_PROG1", devices: [], holdThreshold: .milliseconds(600), control: Self.timer)))
    case .reload: reply.succeed(.controls([Self.timer]))
    case .devices:
      reply.succeed(
        .devices([DeviceSnapshot(devnode: "/dev/input/event3", name: "gpio-keys", buttons: ["action"], grabbed: false)])
      )
    case .register(let kinds):
      for k in kinds { providers[k] = client.id }
      reply.succeed(.registered(kinds: kinds))
    case .ping, .version, .subscribe, .unsubscribe:
      Issue.record("the server answers \(request.name) itself")
    }
  }

  public func clientDisconnected(_ client: ClientInfo) {
    disconnected.append(client)
    providers = providers.filter { $0.value != client.id }
  }
}

/// A server on a fresh socket path with a fake handler, driven from the test's thread.
public final class ServerHarness {
  public let directory: TemporaryDirectory
  public let loop: EventLoop
  public let handler = FakeHandler()
  public let server: ControlServer
  /// The socket's path.
  public var path: String { server.path }

  public init(_ configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
    directory = try TemporaryDirectory("actiond-socket")
    chmod(directory.path, 0o755)  // other uids must reach the socket
    loop = try EventLoop()
    var config = ServerConfiguration()
    config.path = directory.file("actiond.sock")
    config.socketActivation = false
    configure(&config)
    server = try ControlServer(configuration: config, loop: loop, handler: handler)
    try server.start()
  }

  /// Runs the loop (and reads the clients) until `condition` holds; fails instead of
  /// hanging. The bound is generous (a loaded CI machine starts processes slowly) and
  /// is no timing assertion: it only matters when the condition never comes true.
  public func pump(_ clients: [TestClient] = [], limit: Int = 20_000, until condition: () -> Bool) throws {
    var iterations = 0
    while !condition() {
      iterations += 1
      if iterations > limit {
        Issue.record("condition not reached after \(limit) loop iterations")
        return
      }
      try loop.runOnce(until: loop.now() + .milliseconds(5))
      for c in clients { c.readAvailable() }
    }
  }

  /// Connects a client and runs the loop until its `hello` (or its end).
  public func connect() throws -> TestClient {
    let c = try TestClient(path: path)
    try pump([c]) { !c.messages.isEmpty || c.eof }
    return c
  }
}

/// A raw, non-blocking protocol client: writes lines, collects what the daemon sends.
public final class TestClient {
  public let fd: Int32
  private var framer = LineFramer(maxLineLength: 64 << 20)
  /// Every line read, in order.
  public private(set) var lines: [String] = []
  /// Every line read, decoded.
  public private(set) var messages: [ServerMessage] = []
  /// Whether the daemon closed the connection.
  public private(set) var eof = false

  public init(path: String) throws {
    fd = try UnixSocket.connect(to: path)
    try Syscall.setNonBlocking(fd)
  }

  deinit { Syscall.close(fd) }

  /// Sends `text` and a newline.
  public func send(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    #expect(n == bytes.count, "send: \(Errno.current)")
  }

  /// Sends `bytes` as they are; what `send(2)` returned.
  public func sendRaw(_ bytes: [UInt8]) -> Int {
    bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }

  /// Reads (without waiting) whatever the daemon sent, until it would block or it ended.
  public func readAvailable() {
    var buffer = [UInt8](repeating: 0, count: 65536)
    while !eof {
      let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
      if n == 0 || (n < 0 && errno == ECONNRESET) {
        eof = true
      } else if n < 0 {
        return
      } else {
        framer.append(contentsOf: buffer[0..<n])
        while case .line(let l)? = framer.next() {
          let text = String(decoding: l, as: UTF8.self)
          lines.append(text)
          do { messages.append(try ServerMessage.decode(line: text)) } catch {
            Issue.record("unreadable daemon line \(text): \(error)")
          }
        }
      }
    }
  }

  /// The reply or error carrying `id`.
  public func answer(_ id: RequestID) -> ServerMessage? {
    messages.first {
      switch $0 {
      case .reply(let r): return r.id == id
      case .error(let eid, _): return eid == id
      default: return false
      }
    }
  }

  /// The errors among the messages.
  public var errors: [ProtocolError] {
    messages.compactMap { if case .error(_, let e) = $0 { return e } else { return nil } }
  }
  /// The events among the messages.
  public var events: [Event] { messages.compactMap { if case .event(let e) = $0 { return e } else { return nil } } }
}

/// A child process with captured stdout and stderr (e.g. `actionctl` under another uid).
public final class ChildProcess {
  public let pid: pid_t
  private let outFD: Int32
  private let errFD: Int32
  public private(set) var stdout: [UInt8] = []
  public private(set) var stderr: [UInt8] = []
  /// The exit status once reaped: 128+N for signal N.
  public private(set) var exitStatus: Int32?
  private var outOpen = true
  private var errOpen = true

  /// Starts `argv[0]` (a path) with exactly `environment`, stdin from /dev/null.
  public init(_ argv: [String], environment: [String: String] = [:]) throws {
    let out = try Syscall.pipe(nonBlocking: true)
    let err = try Syscall.pipe(nonBlocking: true)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, out.write, 1)
    posix_spawn_file_actions_adddup2(&actions, err.write, 2)
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    let cArgs = argv.map { strdup($0) } + [nil]
    let cEnv = (environment.map { strdup("\($0.key)=\($0.value)") }) + [nil]
    defer {
      cArgs.forEach { free($0) }
      cEnv.forEach { free($0) }
    }
    var child: pid_t = 0
    let rc = posix_spawn(&child, argv[0], &actions, nil, cArgs, cEnv)
    Syscall.close(out.write)
    Syscall.close(err.write)
    guard rc == 0 else {
      Syscall.close(out.read)
      Syscall.close(err.read)
      throw Errno(rc)
    }
    pid = child
    outFD = out.read
    errFD = err.read
  }

  deinit {
    if exitStatus == nil {
      kill(pid, SIGKILL)
      var status: Int32 = 0
      waitpid(pid, &status, 0)
    }
    Syscall.close(outFD)
    Syscall.close(errFD)
  }

  /// Reads what is available and reaps the child; true once it exited and its output ended.
  public func poll() -> Bool {
    func drain(_ fd: Int32, _ into: inout [UInt8], _ open: inout Bool) {
      var buffer = [UInt8](repeating: 0, count: 65536)
      while open {
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n > 0 { into += buffer[0..<n] } else if n == 0 { open = false } else { return }
      }
    }
    drain(outFD, &stdout, &outOpen)
    drain(errFD, &stderr, &errOpen)
    if exitStatus == nil {
      var status: Int32 = 0
      if waitpid(pid, &status, WNOHANG) == pid {
        exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
      }
    }
    return exitStatus != nil && !outOpen && !errOpen
  }

  /// Standard output so far, as text.
  public var output: String { String(decoding: stdout, as: UTF8.self) }
  /// Standard error so far, as text.
  public var errorOutput: String { String(decoding: stderr, as: UTF8.self) }

  /// The output pipes still open, to wait on with poll(2) instead of sleeping.
  public var openDescriptors: [Int32] { (outOpen ? [outFD] : []) + (errOpen ? [errFD] : []) }
}

/// The `actionctl` binary built next to the test bundle.
public func actionctlPath() throws -> String { try builtExecutablePath("actionctl") }

/// An executable of this package (`actionctl`, `actiond`, `actiond-test-helper`) built next to
/// the test binary.
public func builtExecutablePath(_ name: String) throws -> String {
  var buffer = [CChar](repeating: 0, count: 4096)
  let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
  guard n > 0 else { throw Errno.current }
  let exe = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  // .../debug/actiondPackageTests.xctest (a file on Linux) → .../debug/actionctl
  var dir = exe
  while let slash = dir.lastIndex(of: "/") {
    dir = String(dir[..<slash])
    if access(dir + "/" + name, X_OK) == 0 { return dir + "/" + name }
  }
  throw DaemonHarnessError(description: "\(name) is not built next to the test binary \(exe)")
}
