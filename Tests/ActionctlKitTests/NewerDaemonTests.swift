// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import CActiondShim
import Glibc
import Testing

@testable import ActionctlKit
@testable import ActiondLinux

/// A daemon of a newer protocol revision, as the versioning rule allows one
/// (protocol.md, Versioning): a real Unix socket server in the test that speaks the
/// protocol from written lines, adds members this build does not know to every object
/// of every message, and sends events this build does not know, before every reply and
/// between the events a `watch` reads.
final class NewerDaemon {
  let directory: TemporaryDirectory
  let path: String
  private let listener: Listener
  private var connections: [(fd: Int32, framer: LineFramer)] = []
  /// Every request line received, parsed.
  private(set) var requests: [JSONValue] = []
  /// The lines a subscriber gets after the `subscribe` reply (then the daemon says it
  /// stops and closes, as actiond does).
  var events: [String] = []

  /// An event no version of actionctl knows, with a payload of every JSON type.
  static let unknownEvent =
    #"{"type":"event","event":"squeezed","button":"action","pressure":{"newtons":3.5,"samples":[1,2,{"x":null}]},"fresh":true}"#

  init() throws {
    directory = try TemporaryDirectory("actiond-newer")
    path = directory.file("actiond.sock")
    listener = try Listener.bind(path: path, mode: 0o600, group: nil)
  }

  deinit {
    for c in connections { Syscall.close(c.fd) }
    listener.close()
  }

  /// `message` as a newer daemon writes it.
  static func line(_ message: ServerMessage) -> String {
    JSONEncoding.compact(NewerDaemonJSON.withNewMembers(message.json))
  }

  static let hello = Hello(
    client: ClientAccess(uid: 0, gid: 0, pid: 1, control: true), buttons: [FakeHandler.button])

  /// The reply a newer daemon gives to `request` (the fake handler's canned answers).
  static func result(for name: RequestName, _ request: JSONValue) -> ReplyResult {
    switch name {
    case .status: return .buttons([FakeHandler.button])
    case .list, .get, .reload: return .controls([FakeHandler.timer])
    case .set, .perform: return .control(FakeHandler.timer)
    case .assign, .press: return .button(FakeHandler.button)
    case .devices:
      return .devices([
        DeviceSnapshot(
          devnode: "/dev/input/event3", name: "gpio-keys", id: "0001:0001", buttons: ["action"], grabbed: false)
      ])
    case .subscribe: return .subscribed((try? SubscriptionFilter(json: request)) ?? .all)
    case .register: return .registered(kinds: [])
    case .version: return .version(protocolVersion: 1, daemonVersion: "9.9.9")
    case .ping, .unsubscribe: return .empty
    }
  }

  /// Accepts, greets, reads requests and answers them, until `condition` holds.
  func pump(limit: Int = 20_000, until condition: () -> Bool) {
    var iterations = 0
    while !condition() {
      iterations += 1
      if iterations > limit {
        Issue.record("condition not reached after \(limit) turns")
        return
      }
      turn()
    }
  }

  private func turn() {
    let fd = actiond_accept4(listener.fd, nil, nil, actiond_SOCK_NONBLOCK | actiond_SOCK_CLOEXEC)
    if fd >= 0 {
      connections.append((fd, LineFramer(maxLineLength: 1 << 20)))
      send(fd, Self.line(.hello(Self.hello)))
    }
    var open: [(fd: Int32, framer: LineFramer)] = []
    for var c in connections {
      var buffer = [UInt8](repeating: 0, count: 65536)
      let n = buffer.withUnsafeMutableBytes { recv(c.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
      if n == 0 || (n < 0 && errno != EAGAIN) {
        Syscall.close(c.fd)
        continue
      }
      var keep = true
      if n > 0 {
        c.framer.append(contentsOf: buffer[0..<n])
        while case .line(let bytes)? = c.framer.next() {
          keep = answer(c.fd, String(decoding: bytes, as: UTF8.self)) && keep
        }
      }
      if keep { open.append(c) } else { Syscall.close(c.fd) }
    }
    connections = open
    var p = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
    _ = poll(&p, 1, 2)
  }

  /// Answers one request; false when the connection is done (a subscriber got its events).
  private func answer(_ fd: Int32, _ text: String) -> Bool {
    guard let request = try? JSONParser.parse(text).root, let n = request["request"]?.stringValue,
      let name = RequestName(rawValue: n)
    else {
      Issue.record("the newer daemon got an unreadable request: \(text)")
      return false
    }
    requests.append(request)
    let id = request["id"]?.integerValue.map { RequestID.integer($0) }
    // Before every reply, an event nobody subscribed to that no actionctl knows.
    send(fd, Self.unknownEvent)
    send(fd, Self.line(.reply(Reply(id: id, request: name, result: Self.result(for: name, request)))))
    guard name == .subscribe else { return true }
    for line in events { send(fd, line) }
    send(fd, Self.line(.error(id: nil, ProtocolError(.shuttingDown, "actiond is stopping"))))
    return false
  }

  private func send(_ fd: Int32, _ line: String) {
    let bytes = Array((line + "\n").utf8)
    let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    #expect(n == bytes.count, "send to actionctl: \(Errno.current)")
  }
}

/// protocol.md, Versioning: clients ignore members and events they do not know. The
/// built `actionctl`, every command and every form of `watch`, against ``NewerDaemon``.
@Suite struct ActionctlNewerDaemonTests {
  private func run(_ d: NewerDaemon, _ args: [String], environment: [String: String] = [:]) throws -> ChildProcess {
    let child = try ChildProcess([try actionctlPath(), "--socket", d.path] + args, environment: environment)
    d.pump { child.poll() }
    return child
  }

  private static let hello = NewerDaemon.hello

  /// Every command that reads a reply prints what it prints against this daemon, and
  /// exits 0: the new members are left out, the unknown event before the reply skipped.
  @Test(arguments: [
    (["status"], RequestName.status), (["list"], .list), (["get", "org.example.timer"], .get),
    (["devices"], .devices), (["version"], .version), (["perform"], .perform), (["perform", "action"], .perform),
    (["perform", "--kind", "org.example.timer"], .perform), (["press"], .press), (["reload"], .reload),
    (["set", "org.example.timer", "on"], .set), (["assign", "action", "org.example.timer"], .assign),
  ])
  func everyCommandReadsANewerDaemonsReplies(arguments: [String], request: RequestName) throws {
    let d = try NewerDaemon()
    let child = try run(d, arguments)
    #expect(child.exitStatus == 0, "\(arguments): \(child.errorOutput)")
    #expect(child.errorOutput == "", "\(arguments)")
    let result = NewerDaemon.result(for: request, [:])
    let expected = Render.reply(Reply(id: .integer(1), request: request, result: result), hello: Self.hello)
    #expect(child.output == expected + "\n", "\(arguments)")
    #expect(d.requests.last?["request"]?.stringValue == request.rawValue)

    // --json: the reply line as the daemon sent it, its new members too.
    let json = try run(d, ["--json"] + arguments)
    #expect(json.exitStatus == 0, "\(arguments): \(json.errorOutput)")
    let line = String(json.output.dropLast())
    #expect(line.contains(#""newAtDepth0""#) && line.contains(#""type":"reply""#), "\(arguments): \(line)")
    #expect(json.output.split(separator: "\n").count == 1, "the unknown event before the reply is not printed")
  }

  /// The events a newer daemon sends: the known ones with new members at every depth
  /// (hints of a gesture this build does not know, a feedback output of a new kind),
  /// and unknown events between them.
  static let events: [(line: String, known: Event?)] = {
    var running = FakeHandler.timer
    running.value = true
    running.valueText = "Running"
    let hints = [GestureHint(gesture: .hold, kind: "org.example.timer", hint: "Hold to Start")]
    let pressed = Event.pressed(
      button: "action", kind: "org.example.timer", hint: "Hold to Start", hints: hints, time: .zero,
      threshold: .milliseconds(600))
    // The pressed event also lists the hint of a gesture that does not exist yet.
    var pressedLine = NewerDaemonJSON.withNewMembers(ServerMessage.event(pressed).json)
    if case .object(var o) = pressedLine, case .array(var h)? = o["hints"] {
      h.append(["gesture": "triplePress", "kind": "org.example.x", "hint": "Press three times to X", "new": 1])
      o["hints"] = .array(h)
      pressedLine = .object(o)
    }
    let known: [Event] = [
      .held(button: "action", kind: "org.example.timer", time: MonotonicInstant(nanoseconds: 600_000_000)),
      .performing(kind: "org.example.timer", button: "action", source: .button, gesture: .hold, value: true),
      .performed(button: "action", source: .button, gesture: .hold, control: running),
      .state(control: running, buttons: ["action"]),
      .deviceRemoved(
        DeviceSnapshot(devnode: "/dev/input/event3", name: "gpio-keys", buttons: ["action"], grabbed: false),
        reason: "removed"),
    ]
    var out: [(String, Event?)] = [(NewerDaemon.unknownEvent, nil), (JSONEncoding.compact(pressedLine), pressed)]
    for (i, e) in known.enumerated() {
      out.append((NewerDaemon.line(.event(e)), e))
      out.append((#"{"type":"event","event":"new-event-\#(i)","button":"action"}"#, nil))
    }
    return out
  }()

  /// `watch` (off a terminal: a line per event) prints the known events as it always
  /// did, skips the others and goes on to the end, which it reports as documented: the
  /// daemon's `shutting-down` on stderr and exit status 4.
  @Test func watchSkipsUnknownEventsAndReadsKnownOnesWithNewMembers() throws {
    let d = try NewerDaemon()
    d.events = Self.events.map(\.line)
    let watch = try run(d, ["watch", "--button", "action"])
    let expected = Self.events.compactMap(\.known).map { Render.event($0) + "\n" }.joined()
    #expect(watch.output == expected)
    #expect(watch.errorOutput == "actionctl: actiond is stopping (shutting-down)\n")
    #expect(watch.exitStatus == 4)
    // The subscription it asked for came through (read strictly, as the daemon would).
    let subscribe = try #require(d.requests.last)
    #expect(
      ClientMessage.decode(subscribe)
        == .success(
          .request(
            Request(
              id: .integer(1),
              .subscribe(
                SubscriptionFilter(buttons: ["action"]))))))
  }

  /// `--json watch` passes every event line on byte for byte, the unknown ones too, after
  /// the subscribe reply (and not the unknown event that came before that reply).
  @Test func jsonWatchPassesEveryEventLineOnVerbatim() throws {
    let d = try NewerDaemon()
    d.events = Self.events.map(\.line)
    let watch = try run(d, ["--json", "watch"])
    let lines = watch.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines.count == Self.events.count + 2, "the subscribe reply, every event, the final newline")
    #expect(lines.first?.contains(#""request":"subscribe""#) == true)
    #expect(Array(lines.dropFirst().dropLast()) == Self.events.map(\.line))
    #expect(watch.errorOutput == "actionctl: actiond is stopping (shutting-down)\n")
    #expect(watch.exitStatus == 4)
  }

  /// `watch --notify` notifies the known events (the hint, the result) and nothing for
  /// the unknown ones, and ends as documented.
  @Test func watchNotifyIgnoresUnknownEvents() throws {
    let d = try NewerDaemon()
    d.events = Self.events.map(\.line)
    let log = d.directory.file("notify-send.log")
    try d.directory.write(
      "notify-send",
      """
      #!/bin/sh
      printf '%s\\n' "$*" >> "\(log)"
      echo 7
      """, mode: 0o755)
    let watch = try run(d, ["watch", "--notify"], environment: ["PATH": d.directory.path + ":/usr/bin:/bin"])
    #expect(watch.exitStatus == 4, "\(watch.errorOutput)")
    #expect(watch.errorOutput == "actionctl: actiond is stopping (shutting-down)\n")
    #expect(watch.output == "")
    let calls = (readFile(log) ?? "").split(separator: "\n").map(String.init)
    #expect(calls.first?.hasSuffix("-- Work Timer Hold to Start") == true, "\(calls)")
    #expect(calls.last?.hasSuffix("-- Work Timer Running") == true, "\(calls)")
    #expect(!calls.contains { $0.contains("squeezed") || $0.contains("new-event") || $0.contains("Three") })
  }
}
