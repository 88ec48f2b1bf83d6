// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

@Suite struct LineFramerTests {
  private func drain(_ f: inout LineFramer) -> [LineFramer.Output] {
    var out: [LineFramer.Output] = []
    while let o = f.next() { out.append(o) }
    return out
  }

  private func lines(_ outputs: [LineFramer.Output]) -> [String] {
    outputs.compactMap {
      if case .line(let l) = $0 { return String(decoding: l, as: UTF8.self) }
      return nil
    }
  }

  @Test func oneByteAtATime() {
    let text = "{\"a\":1}\r\n\n{\"b\":\"é\"}\nlast"
    var f = LineFramer()
    var outputs: [LineFramer.Output] = []
    for byte in text.utf8 {
      f.append(contentsOf: [byte])
      outputs += drain(&f)
    }
    #expect(lines(outputs) == ["{\"a\":1}", "{\"b\":\"é\"}"])
    #expect(f.bufferedCount == 4)  // "last" waits for its newline
    f.append(contentsOf: Array("\n".utf8))
    #expect(lines(drain(&f)) == ["last"])
    #expect(f.bufferedCount == 0)
  }

  @Test func manyMessagesPerRead() {
    var text = ""
    for i in 0..<1000 { text += "{\"id\":\(i),\"request\":\"ping\"}\n" }
    var f = LineFramer()
    f.append(contentsOf: Array(text.utf8))
    let got = lines(drain(&f))
    #expect(got.count == 1000)
    #expect(got.first == "{\"id\":0,\"request\":\"ping\"}")
    #expect(got.last == "{\"id\":999,\"request\":\"ping\"}")
  }

  @Test func chunkBoundariesAnywhere() {
    let text = "alpha\nbeta\r\ngamma\n"
    for split in 0...text.utf8.count {
      var f = LineFramer()
      let bytes = Array(text.utf8)
      f.append(contentsOf: bytes[..<split])
      var outs = drain(&f)
      f.append(contentsOf: bytes[split...])
      outs += drain(&f)
      #expect(lines(outs) == ["alpha", "beta", "gamma"], "split at \(split)")
    }
  }

  @Test func lineAtTheLimitPassesOneOverFails() {
    var f = LineFramer(maxLineLength: 8)
    f.append(contentsOf: Array("12345678\n".utf8))
    #expect(lines(drain(&f)) == ["12345678"])
    f.append(contentsOf: Array("123456789\nok\n".utf8))
    #expect(drain(&f) == [.tooLong])
    #expect(f.failed)
    f.append(contentsOf: Array("more\n".utf8))
    #expect(f.next() == nil)
  }

  /// protocol.md: a `\r` before the `\n` is ignored, so a line at the limit may carry one.
  @Test func aCarriageReturnDoesNotCountTowardTheLimit() {
    for text in ["12345678\r\nok\n", "12345678\nok\r\n"] {
      var whole = LineFramer(maxLineLength: 8)
      whole.append(contentsOf: Array(text.utf8))
      #expect(lines(drain(&whole)) == ["12345678", "ok"], "\(text.debugDescription)")
      var byByte = LineFramer(maxLineLength: 8)
      var outputs: [LineFramer.Output] = []
      for byte in text.utf8 {
        byByte.append(contentsOf: [byte])
        outputs += drain(&byByte)
      }
      #expect(lines(outputs) == ["12345678", "ok"], "one byte at a time: \(text.debugDescription)")
    }
    for text in ["123456789\r\n", "12345678x", "12345678\rx"] {
      var f = LineFramer(maxLineLength: 8)
      f.append(contentsOf: Array(text.utf8))
      #expect(drain(&f) == [.tooLong], "\(text.debugDescription)")
    }
    var full = LineFramer()
    full.append(contentsOf: [UInt8](repeating: UInt8(ascii: "x"), count: ProtocolVersion.maxLineLength))
    full.append(contentsOf: Array("\r\n".utf8))
    #expect(drain(&full).count == 1 && !full.failed)
  }

  @Test func overlongLineDetectedBeforeItsNewline() {
    var f = LineFramer(maxLineLength: 64 * 1024)
    let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
    var result: [LineFramer.Output] = []
    var fed = 0
    while result.isEmpty && fed < 1 << 20 {
      f.append(contentsOf: chunk)
      fed += chunk.count
      result = drain(&f)
    }
    #expect(result == [.tooLong])
    #expect(fed == 64 * 1024 + 4096)  // reported on the first read past the limit
    #expect(f.bufferedCount == 0)
  }
}

@Suite struct RequestDecodingTests {
  private func request(_ line: String) throws -> Request {
    switch ClientMessage.decode(line: line) {
    case .success(.request(let r)): return r
    case .success(let other): throw ProtocolError(.internal, "not a request: \(other)")
    case .failure(let f): throw f.error
    }
  }

  private func failure(_ line: String) -> ClientMessage.DecodingFailure? {
    if case .failure(let f) = ClientMessage.decode(line: line) { return f }
    return nil
  }

  @Test func decodesEveryRequest() throws {
    #expect(
      try request(#"{"type":"request","id":1,"request":"status"}"#) == Request(id: .integer(1), .status(button: nil)))
    #expect(
      try request(#"{"id":"a","request":"status","button":"action"}"#)
        == Request(id: .string("a"), .status(button: "action")))
    #expect(try request(#"{"request":"list"}"#) == Request(id: nil, .list))
    #expect(
      try request(#"{"id":2,"request":"get","kind":"org.example.timer"}"#).body == .get(kind: "org.example.timer"))
    #expect(
      try request(#"{"id":3,"request":"assign","button":"action","kind":"k","configuration":{"led":"a"}}"#).body
        == .assign(button: "action", kind: "k", configuration: ["led": "a"]))
    #expect(
      try request(#"{"request":"assign","button":"b","kind":"k"}"#).body
        == .assign(button: "b", kind: "k", configuration: [:]))
    #expect(
      try request(#"{"request":"set","kind":"k","value":true}"#).body
        == .set(kind: "k", value: true, configuration: nil))
    #expect(try request(#"{"request":"perform"}"#).body == .perform(.button(nil)))
    #expect(try request(#"{"request":"perform","button":"action"}"#).body == .perform(.button("action")))
    #expect(
      try request(#"{"request":"perform","kind":"k","configuration":{}}"#).body
        == .perform(.control(kind: "k", configuration: [:])))
    #expect(try request(#"{"request":"press","button":"action"}"#).body == .press(button: "action"))
    let hold = try request(#"{"request":"press","button":"action","holdMs":700}"#)
    #expect(hold.body == .press(button: "action", .hold(.milliseconds(700))))
    let double = try request(#"{"request":"press","button":"action","double":true}"#)
    #expect(double.body == .press(button: "action", .double))
    let notDouble = try request(#"{"request":"press","button":"action","double":false}"#)
    #expect(notDouble.body == .press(button: "action"))
    #expect(try request(#"{"request":"reload"}"#).body == .reload(kind: nil))
    #expect(try request(#"{"request":"reload","kind":"k"}"#).body == .reload(kind: "k"))
    #expect(try request(#"{"request":"subscribe"}"#).body == .subscribe(.all))
    #expect(
      try request(#"{"request":"subscribe","events":["pressed","device-added"],"buttons":["action"],"kinds":["k"]}"#)
        .body
        == .subscribe(SubscriptionFilter(events: [.pressed, .deviceAdded], buttons: ["action"], kinds: ["k"])))
    #expect(try request(#"{"request":"unsubscribe"}"#).body == .unsubscribe)
    #expect(try request(#"{"request":"devices"}"#).body == .devices)
    #expect(try request(#"{"request":"register","kinds":["a","b"]}"#).body == .register(kinds: ["a", "b"]))
    #expect(try request(#"{"request":"ping","id":null}"#) == Request(id: nil, .ping))
    #expect(try request(#"{"request":"version"}"#).body == .version)
  }

  @Test func everyRequestRoundTrips() throws {
    let bodies: [Request.Body] = [
      .status(button: nil), .status(button: "x"), .list, .get(kind: "k"),
      .assign(button: "b", kind: "k", configuration: ["p": 1]),
      .set(kind: "k", value: false, configuration: ["p": "v"]), .perform(.button(nil)), .perform(.button("b")),
      .perform(.control(kind: "k", configuration: nil)), .press(button: "b"),
      .press(button: "b", .hold(.milliseconds(700))), .press(button: "b", .double), .reload(kind: nil),
      .reload(kind: "k"),
      .subscribe(SubscriptionFilter(events: [.state], buttons: nil, kinds: ["k"])), .unsubscribe, .devices,
      .register(kinds: ["k"]), .ping, .version,
    ]
    #expect(Set(bodies.map { Request(id: nil, $0).name }) == Set(RequestName.allCases))
    for (i, body) in bodies.enumerated() {
      let r = Request(id: .integer(Int64(i)), body)
      #expect(try request(JSONEncoding.compact(r.json)) == r)
    }
  }

  @Test func mutatingRequests() {
    let mutating = RequestName.allCases.filter(\.isMutating).map(\.rawValue).sorted()
    #expect(mutating == ["assign", "perform", "press", "register", "reload", "set"])
  }

  @Test func badJSONHasNoID() {
    let f = failure(#"{"id":5,"request":"ping""#)
    #expect(f?.error.code == .badJSON)
    #expect(f?.id == nil)
    #expect(failure("{\"request\":\"ping\",}")?.error.code == .badJSON)  // strict: no trailing comma
    #expect(failure("\u{FF}")?.error.code == .badJSON)
  }

  @Test func preciseBadRequestMessages() {
    let cases: [(String, ProtocolErrorCode, String, RequestID?)] = [
      (#"[1]"#, .badRequest, "a message must be a JSON object, got array", nil),
      (#"{"id":1}"#, .badRequest, #"message is missing field "request""#, .integer(1)),
      (#"{"id":1,"request":5}"#, .badRequest, #"field "request" of message must be a string, got number"#, .integer(1)),
      (#"{"id":"x","request":"frobnicate"}"#, .unknownRequest, #"unknown request "frobnicate""#, .string("x")),
      (#"{"id":2,"request":"get"}"#, .badRequest, #"request "get" is missing field "kind""#, .integer(2)),
      (
        #"{"id":2,"request":"get","kind":7}"#, .badRequest,
        #"field "kind" of request "get" must be a string, got number"#, .integer(2)
      ),
      (
        #"{"id":2,"request":"get","kind":""}"#, .badRequest, #"field "kind" of request "get" must not be empty"#,
        .integer(2)
      ),
      (
        #"{"id":3,"request":"set","kind":"k","value":"on"}"#, .badRequest,
        #"field "value" of request "set" must be true or false, got string"#, .integer(3)
      ),
      (#"{"id":3,"request":"set","kind":"k"}"#, .badRequest, #"request "set" is missing field "value""#, .integer(3)),
      (
        #"{"id":4,"request":"ping","kind":"k"}"#, .badRequest, #"request "ping" has an unexpected field "kind""#,
        .integer(4)
      ),
      (
        #"{"id":5,"request":"perform","button":"b","kind":"k"}"#, .badRequest,
        #"request "perform" takes either "button" or "kind", not both"#, .integer(5)
      ),
      (
        #"{"id":5,"request":"perform","configuration":{}}"#, .badRequest,
        #"field "configuration" of request "perform" needs "kind""#, .integer(5)
      ),
      (
        #"{"id":6,"request":"assign","button":"b","kind":"k","configuration":[]}"#, .badRequest,
        #"field "configuration" of request "assign" must be an object, got array"#, .integer(6)
      ),
      (
        #"{"id":8,"request":"press","button":"b","holdMs":700,"double":true}"#, .badRequest,
        #"request "press" takes either "holdMs" or "double", not both"#, .integer(8)
      ),
      (
        #"{"id":8,"request":"press","button":"b","holdMs":-1}"#, .badRequest,
        #"field "holdMs" of request "press" must be 0...120000 (milliseconds), got -1"#, .integer(8)
      ),
      (
        #"{"id":8,"request":"press","button":"b","holdMs":120001}"#, .badRequest,
        #"field "holdMs" of request "press" must be 0...120000 (milliseconds), got 120001"#, .integer(8)
      ),
      (
        #"{"id":8,"request":"press","button":"b","holdMs":1.5}"#, .badRequest,
        #"field "holdMs" of request "press" must be an integer, got number"#, .integer(8)
      ),
      (
        #"{"id":7,"request":"register","kinds":[]}"#, .badRequest,
        #"field "kinds" of request "register" must not be empty"#, .integer(7)
      ),
      (
        #"{"id":7,"request":"register","kinds":["a",1]}"#, .badRequest,
        #"element 1 of field "kinds" of request "register" must be a string, got number"#, .integer(7)
      ),
      (
        #"{"id":8,"request":"subscribe","events":["pressed","nope"]}"#, .badRequest,
        "unknown event \"nope\" in field \"events\"", .integer(8)
      ),
      (#"{"id":[1],"request":"ping"}"#, .badRequest, #"field "id" must be an integer or a string, got array"#, nil),
      (#"{"id":1.5,"request":"ping"}"#, .badRequest, #"field "id" must be an integer or a string, got number"#, nil),
      (
        #"{"id":9,"type":"telegram","request":"ping"}"#, .badRequest,
        #"field "type" must be "request", "reply" or "error", got "telegram""#, .integer(9)
      ),
      (
        #"{"id":9,"request":"ping","request":"list"}"#, .badRequest, #"message has field "request" more than once"#,
        .integer(9)
      ),
      (
        #"{"type":"reply","id":3,"result":{}}"#, .badRequest,
        #"a provider reply needs the string "id" of the daemon's request"#, .integer(3)
      ),
      (#"{"type":"error","id":"p1"}"#, .badRequest, #"provider error is missing field "code""#, .string("p1")),
    ]
    for (line, code, message, id) in cases {
      let f = failure(line)
      #expect(f?.error.code == code, "\(line)")
      #expect(f?.error.message.hasPrefix(message) == true, "\(line): \(f?.error.message ?? "no error")")
      #expect(f?.id == id, "\(line)")
    }
    let longID = String(repeating: "i", count: 257)
    #expect(
      failure(#"{"id":"\#(longID)","request":"ping"}"#)?.error.message == #"field "id" must be at most 256 bytes long"#)
  }

  /// protocol.md: a wrong type, an empty or a duplicate member is `bad-request`, also
  /// `null` for an optional member, an empty button and duplicates inside `configuration`.
  @Test func strictnessAsDocumented() {
    let cases: [(String, String)] = [
      (
        #"{"id":1,"request":"status","button":null}"#,
        #"field "button" of request "status" must be a string, got null"#
      ),
      (#"{"id":1,"request":"status","button":""}"#, #"field "button" of request "status" must not be empty"#),
      (#"{"id":1,"request":"perform","button":""}"#, #"field "button" of request "perform" must not be empty"#),
      (#"{"id":1,"request":"perform","kind":null}"#, #"field "kind" of request "perform" must be a string, got null"#),
      (#"{"id":1,"request":"reload","kind":""}"#, #"field "kind" of request "reload" must not be empty"#),
      (#"{"id":1,"type":null,"request":"ping"}"#, #"field "type" of message must be a string, got null"#),
      (#"{"id":1,"request":""}"#, #"field "request" of message must not be empty"#),
      (#"{"id":1,"request":"subscribe","events":null}"#, #"field "events" of request "subscribe" must be an array"#),
      (
        #"{"id":1,"request":"perform","kind":"k","configuration":{"led":"a","led":"b"}}"#,
        #"field "configuration" of request "perform" has field "led" more than once"#
      ),
      (
        #"{"id":1,"request":"assign","button":"b","kind":"k","configuration":{"n":1,"n":1}}"#,
        #"field "configuration" of request "assign" has field "n" more than once"#
      ),
      (
        #"{"id":1,"request":"set","kind":"k","value":true,"configuration":null}"#,
        #"field "configuration" of request "set" must be an object, got null"#
      ),
    ]
    for (line, message) in cases {
      let f = failure(line)
      #expect(f?.error.code == .badRequest, "\(line)")
      #expect(f?.error.message.hasPrefix(message) == true, "\(line): \(f?.error.message ?? "no error")")
      #expect(f?.id == .integer(1), "\(line)")
    }
    // A request without an id may still say so with `null`.
    #expect(ClientMessage.decode(line: #"{"id":null,"request":"ping"}"#) == .success(.request(Request(id: nil, .ping))))
    // Numbers a double cannot hold are refused, not read as 0 or infinity.
    for number in ["1e-400", "-1e-400", "1e400", "0.1e-999"] {
      #expect(failure(#"{"id":1,"request":"set","kind":"k","value":\#(number)}"#)?.error.code == .badJSON, "\(number)")
    }
    #expect(failure(#"{"id":1,"request":"set","kind":"k","value":0e-400}"#)?.error.code == .badRequest)
    // Before, 1e-400 read as 0.0 and passed as the integer parameter value 0.
    #expect(
      failure(#"{"id":1,"request":"perform","kind":"k","configuration":{"n":1e-400}}"#)?.error.message
        == "line 1, column 61: number 1e-400 is too small (it would read as 0)")
  }

  @Test func providerReplies() {
    let ok = ClientMessage.decode(line: #"{"type":"reply","id":"p1","result":{"value":true}}"#)
    #expect(ok == .success(.providerReply(ProviderReply(id: "p1", outcome: .success(["value": true])))))
    if case .success(.providerReply(let r)) = ok { #expect(r.value == true) }
    let err = ClientMessage.decode(line: #"{"type":"error","id":"p2","code":"failed","message":"disk full"}"#)
    #expect(
      err == .success(.providerReply(ProviderReply(id: "p2", outcome: .failure(ProtocolError(.failed, "disk full"))))))
    let reply = ProviderReply(id: "p3", outcome: .failure(ProtocolError(.timeout, "slow")))
    #expect(ClientMessage.decode(reply.json) == .success(.providerReply(reply)))
  }
}

@Suite struct ServerMessageTests {
  static let timer = ControlSnapshot(
    kind: "org.example.timer", displayName: "Work Timer", type: .toggle, value: true, valueText: "Running",
    symbol: "timer", tint: "orange", hint: "Hold to Stop")
  static let button = ButtonStatus(
    name: "action", key: "KEY_PROG1", devices: ["/dev/input/event3"], holdThreshold: .milliseconds(600), control: timer)
  static let device = DeviceSnapshot(
    devnode: "/dev/input/event3", name: "gpio-keys", phys: "gpio-keys/input0",
    id: DeviceSnapshot.formatID(vendor: 1, product: 0xABC),
    buttons: ["action"], grabbed: false)

  @Test func controlSnapshotWireForm() throws {
    #expect(
      JSONEncoding.compact(Self.timer.json)
        == #"{"kind":"org.example.timer","displayName":"Work Timer","type":"toggle","configuration":{},"value":true,"valueText":"Running","symbol":"timer","tint":"orange","hint":"Hold to Stop","configured":true,"available":true,"performing":false}"#
    )
    var unknown = Self.timer
    unknown.value = nil
    unknown.available = false
    unknown.reason = "provider not connected"
    #expect(unknown.json["value"] == .null)
    #expect(try ControlSnapshot(json: unknown.json) == unknown)
    #expect(Self.device.id == "0001:0abc")
  }

  @Test func pressedCarriesDeadline() {
    let e = Event.pressed(
      button: "action", kind: "org.example.timer", hint: "Hold to Start",
      time: MonotonicInstant(nanoseconds: 5_000_000_000),
      threshold: .milliseconds(600))
    #expect(
      JSONEncoding.compact(e.json)
        == #"{"type":"event","event":"pressed","button":"action","kind":"org.example.timer","hint":"Hold to Start","hints":[],"time":5000000,"thresholdMs":600,"deadline":5600000}"#
    )
  }

  /// Every gesture's hint, in one line and per gesture; a kind filter matches any of them.
  @Test func pressedListsEveryGesturesHint() throws {
    let hints = [
      GestureHint(gesture: .hold, kind: "org.example.timer", hint: "Hold to Start"),
      GestureHint(gesture: .doublePress, kind: "org.example.mute", hint: "Press twice to Mute"),
    ]
    let e = Event.pressed(
      button: "action", kind: "org.example.timer", hint: "Hold to Start · Press twice to Mute", hints: hints,
      time: MonotonicInstant(nanoseconds: 5_000_000_000), threshold: .milliseconds(600))
    let line = JSONEncoding.compact(e.json)
    #expect(
      line
        == #"{"type":"event","event":"pressed","button":"action","kind":"org.example.timer","hint":"Hold to Start · Press twice to Mute","hints":[{"gesture":"hold","kind":"org.example.timer","hint":"Hold to Start"},{"gesture":"doublePress","kind":"org.example.mute","hint":"Press twice to Mute"}],"time":5000000,"thresholdMs":600,"deadline":5600000}"#
    )
    #expect(try Event(json: JSONParser.parse(line).root) == e)
    #expect(SubscriptionFilter(kinds: ["org.example.mute"]).matches(e))
    #expect(!SubscriptionFilter(kinds: ["org.example.other"]).matches(e))
    // The hint of a gesture this version does not know (a newer daemon's) is left out
    // (protocol.md, Versioning); a hint without a gesture is still unreadable.
    let newer = line.replacingOccurrences(of: #""gesture":"doublePress""#, with: #""gesture":"triplePress""#)
    var known = e
    if case .pressed(let b, let k, let h, _, let t, let th) = e {
      known = .pressed(button: b, kind: k, hint: h, hints: [hints[0]], time: t, threshold: th)
    }
    let readNewer = try Event(json: JSONParser.parse(newer).root)
    #expect(readNewer == known)
    let bad = line.replacingOccurrences(of: #""gesture":"doublePress","#, with: "")
    #expect(throws: ProtocolError.self) { try Event(json: JSONParser.parse(bad).root) }
  }

  @Test func releasedAfterHoldHasItsOwnNameAndTheReleaseMembers() throws {
    let e = Event.releasedAfterHold(
      button: "action", kind: "org.example.timer", time: MonotonicInstant(nanoseconds: 5_900_000_000),
      duration: .milliseconds(900))
    #expect(
      String(decoding: ServerMessage.event(e).line, as: UTF8.self)
        == #"{"type":"event","event":"released-after-hold","button":"action","kind":"org.example.timer","time":5900000,"durationMs":900,"longHeld":false}"#
        + "\n")
    #expect(EventName(rawValue: "released-after-hold") == .releasedAfterHold)
    #expect(SubscriptionFilter(events: [.releasedAfterHold]).matches(e))
    #expect(!SubscriptionFilter(events: [.released]).matches(e), "a client of short presses does not get it")
    let line = EventLogLine(e)
    #expect(line.level == .info)
    #expect(line.event == "released-after-hold")
    #expect(line.message == "button action released after its hold (900 ms)")
  }

  @Test func everyEventRoundTrips() throws {
    let t = MonotonicInstant(nanoseconds: 1_234_000)
    let events: [Event] = [
      .pressed(button: "action", kind: "k", hint: "Hold to Start", time: t, threshold: .milliseconds(600)),
      .pressed(button: "action", kind: nil, hint: nil, time: t, threshold: .milliseconds(600)),
      .released(button: "action", kind: "k", hint: "Hold to Start", time: t, duration: .milliseconds(120)),
      .held(button: "action", kind: "k", time: t),
      .held(
        button: "action", kind: nil, time: t,
        longHold: LongHoldNotice(kind: "r", hint: "Keep holding to Reboot", deadline: t + .seconds(3))),
      .longHeld(button: "action", kind: "r", time: t),
      .doublePressed(button: "action", kind: "m", time: t, gap: .milliseconds(120)),
      .releasedAfterDoublePress(button: "action", kind: "m", time: t, duration: .milliseconds(80)),
      .releasedAfterHold(button: "action", kind: "k", time: t, duration: .milliseconds(900)),
      .releasedAfterHold(button: "action", kind: "k", time: t, duration: .milliseconds(3900), longHeld: true),
      .releasedAfterHold(button: "action", kind: nil, time: t, duration: .milliseconds(700)),
      .performing(kind: "k", button: "action", source: .button, value: true),
      .performing(kind: "m", button: "action", source: .button, gesture: .doublePress, value: nil),
      .performed(button: "action", source: .button, gesture: .longHold, control: Self.timer),
      .failed(kind: "k", button: "action", source: .button, gesture: .hold, error: ProtocolError(.failed, "exit 1")),
      .busy(kind: "k", button: "action", source: .button, gesture: .doublePress),
      .performing(kind: "k", button: nil, source: .socket, value: nil),
      .performed(button: "action", source: .button, control: Self.timer),
      .failed(kind: "k", button: nil, source: .socket, error: ProtocolError(.timeout, "no answer within 5 s")),
      .busy(kind: "k", button: "action", source: .button),
      .cancelled(button: "action", kind: "k", reason: "device removed"),
      .state(control: Self.timer, buttons: ["action"]),
      .assigned(button: "action", control: Self.timer),
      .assigned(button: "action", control: nil),
      .deviceAdded(Self.device),
      .deviceRemoved(Self.device, reason: "unplugged"),
      .configReloaded(applied: false, problems: ["controls[0].kind: missing"]),
    ]
    #expect(Set(events.map(\.name)) == Set(EventName.allCases))
    for e in events {
      let line = String(decoding: ServerMessage.event(e).line, as: UTF8.self)
      #expect(line.hasSuffix("\n") && line.dropLast().allSatisfy { $0 != "\n" })
      #expect(try ServerMessage.decode(line: String(line.dropLast())) == .event(e), "\(line)")
    }
  }

  @Test func helloRepliesErrorsAndProviderRequestsRoundTrip() throws {
    let messages: [ServerMessage] = [
      .hello(Hello(client: ClientAccess(uid: 1000, gid: 1000, pid: 42, control: true), buttons: [Self.button])),
      .reply(Reply(id: .integer(1), request: .status, result: .buttons([Self.button]))),
      .reply(Reply(id: .string("x"), request: .list, result: .controls([Self.timer]))),
      .reply(Reply(id: nil, request: .perform, result: .control(Self.timer))),
      .reply(Reply(id: .integer(2), request: .press, result: .button(Self.button))),
      .reply(Reply(id: .integer(3), request: .devices, result: .devices([Self.device]))),
      .reply(Reply(id: .integer(4), request: .subscribe, result: .subscribed(SubscriptionFilter(events: [.state])))),
      .reply(Reply(id: .integer(5), request: .register, result: .registered(kinds: ["k"]))),
      .reply(Reply(id: .integer(6), request: .version, result: .version(protocolVersion: 1, daemonVersion: "0.1.0"))),
      .reply(Reply(id: .integer(7), request: .ping, result: .empty)),
      .error(id: .integer(8), ProtocolError(.notPermitted, "uid 65534 may not perform")),
      .error(id: nil, ProtocolError(.lagged, "outbound queue full")),
      .providerRequest(ProviderRequest(id: "p1", .perform(kind: "k", configuration: ["x": 1], value: true))),
      .providerRequest(ProviderRequest(id: "p2", .value(kind: "k", configuration: [:]))),
    ]
    for m in messages {
      let line = String(decoding: m.line.dropLast(), as: UTF8.self)
      #expect(try ServerMessage.decode(line: line) == m, "\(line)")
    }
    #expect(
      JSONEncoding.compact(ServerMessage.error(id: .integer(8), ProtocolError(.busy, "running")).json)
        == #"{"type":"error","id":8,"code":"busy","message":"running"}"#)
  }

  @Test func clientsIgnoreUnknownFieldsFromNewerDaemons() throws {
    let line = #"{"type":"event","event":"held","button":"b","time":10,"future":"field"}"#
    #expect(
      try ServerMessage.decode(line: line)
        == .event(.held(button: "b", kind: nil, time: MonotonicInstant(nanoseconds: 10_000))))
    // An event this version does not know is not an error: clients skip it.
    let exploded = #"{"type":"event","event":"exploded"}"#
    let readExploded = try ServerMessage.decode(line: exploded)
    let explodedJSON = try JSONParser.parse(exploded).root
    #expect(readExploded == .unknownEvent(name: "exploded", json: explodedJSON))
    #expect(throws: ProtocolError.self) { try ServerMessage.decode(line: #"{"type":"event","event":"held"}"#) }
  }

  @Test func subscriptionFilters() {
    let pressed = Event.pressed(button: "action", kind: "k", hint: nil, time: .zero, threshold: .milliseconds(1))
    let state = Event.state(control: Self.timer, buttons: [])
    let reloaded = Event.configReloaded(applied: true, problems: [])
    #expect(SubscriptionFilter.all.matches(pressed) && SubscriptionFilter.all.matches(reloaded))
    #expect(SubscriptionFilter(events: [.pressed]).matches(pressed))
    #expect(!SubscriptionFilter(events: [.released]).matches(pressed))
    #expect(SubscriptionFilter(buttons: ["action"]).matches(pressed))
    #expect(!SubscriptionFilter(buttons: ["other"]).matches(pressed))
    #expect(!SubscriptionFilter(buttons: ["action"]).matches(state))  // concerns no button
    #expect(!SubscriptionFilter(buttons: ["action"]).matches(reloaded))
    #expect(SubscriptionFilter(kinds: ["org.example.timer"]).matches(state))
    #expect(!SubscriptionFilter(kinds: ["k"]).matches(state))
    #expect(!SubscriptionFilter(kinds: ["k"]).matches(reloaded))
    #expect(SubscriptionFilter(events: [.pressed], buttons: ["action"], kinds: ["k"]).matches(pressed))
  }

  @Test func errorCodesAreStableAndUnique() {
    let raw = ProtocolErrorCode.all.map(\.rawValue)
    #expect(Set(raw).count == raw.count)
    #expect(raw.allSatisfy { $0.allSatisfy { $0 == "-" || ($0.isLowercase && $0.isLetter) } })
    #expect(ProtocolErrorCode("bad-json") == .badJSON)
  }
}
