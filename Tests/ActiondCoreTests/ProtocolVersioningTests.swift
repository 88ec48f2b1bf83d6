// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

/// protocol.md, Framing: duplicate members are `bad-request` in any object of a request,
/// at any depth, with the same answer wherever they are.
@Suite struct DuplicateMemberTests {
  /// Frames `line` fed one byte at a time, as the server's reader gets a slow client's
  /// bytes, and decodes the one line that comes out.
  private func decodeStreamed(_ line: String) -> Result<ClientMessage, ClientMessage.DecodingFailure>? {
    var framer = LineFramer()
    var decoded: [Result<ClientMessage, ClientMessage.DecodingFailure>] = []
    for byte in Array((line + "\n").utf8) {
      framer.append(contentsOf: [byte])
      while case .line(let bytes)? = framer.next() {
        decoded.append(bytes.withUnsafeBufferPointer { ClientMessage.decode(line: $0) })
      }
    }
    #expect(decoded.count == 1, "\(line)")
    return decoded.first
  }

  @Test(arguments: [
    // Depth 1: the request object itself.
    (
      #"{"id":1,"request":"assign","button":"a","button":"b","kind":"k"}"#,
      #"message has field "button" more than once"#
    ),
    // Depth 2: inside `configuration`.
    (
      #"{"id":1,"request":"assign","button":"a","kind":"k","configuration":{"led":"x","led":"y"}}"#,
      #"field "configuration" of request "assign" has field "led" more than once"#
    ),
    // Depth 3: an object inside `configuration` (before, the engine answered
    // invalid-configuration: a parameter value of the wrong type).
    (
      #"{"id":1,"request":"assign","button":"a","kind":"k","configuration":{"led":{"x":1,"x":2}}}"#,
      #"field "configuration.led" of request "assign" has field "x" more than once"#
    ),
    (
      #"{"id":1,"request":"perform","kind":"k","configuration":{"n":{"a":{"b":[{"c":1,"c":1}]}}}}"#,
      #"field "configuration.n.a.b[0]" of request "perform" has field "c" more than once"#
    ),
    (
      #"{"id":1,"request":"set","kind":"k","value":true,"configuration":{"n":[[{"deep":{"z":0,"z":0}}]]}}"#,
      #"field "configuration.n[0][0].deep" of request "set" has field "z" more than once"#
    ),
    // In an array of a request that takes strings: the duplicate is the answer, not the type.
    (
      #"{"id":1,"request":"register","kinds":[{"k":1,"k":2}]}"#,
      #"field "kinds[0]" of request "register" has field "k" more than once"#
    ),
    // A request name this daemon does not know, or none: named "message".
    (#"{"id":1,"request":"frob","x":{"y":1,"y":1}}"#, #"field "x" of message has field "y" more than once"#),
    // A provider's answers are client messages too.
    (
      #"{"type":"reply","id":1,"result":{"value":true,"value":false}}"#,
      #"field "result" of provider reply has field "value" more than once"#
    ),
  ])
  func aDuplicateIsBadRequestAtEveryDepth(line: String, message: String) {
    guard case .failure(let f)? = decodeStreamed(line) else {
      Issue.record("\(line) was accepted")
      return
    }
    #expect(f.error.code == .badRequest, "\(line)")
    #expect(f.error.message == message, "\(line)")
    #expect(f.id == .integer(1), "the id is echoed: \(line)")
  }

  /// The documented example message (protocol.md, Framing) is the one the daemon writes.
  @Test func theDocumentedMessage() {
    let f = ClientMessage.decode(
      line: #"{"id":1,"request":"assign","button":"a","kind":"k","configuration":{"led":{"x":1,"x":2}}}"#)
    guard case .failure(let failure) = f else {
      Issue.record("accepted")
      return
    }
    #expect(failure.error.message == #"field "configuration.led" of request "assign" has field "x" more than once"#)
  }

  /// The same keys in different objects are no duplicate.
  @Test func equalKeysInDifferentObjectsAreFine() {
    let line = #"{"id":1,"request":"perform","kind":"k","configuration":{"id":{"id":1},"kind":[{"id":2},{"id":3}]}}"#
    guard case .success(.request(let r))? = decodeStreamed(line) else {
      Issue.record("refused")
      return
    }
    #expect(r.body == .perform(.control(kind: "k", configuration: ["id": ["id": 1], "kind": [["id": 2], ["id": 3]]])))
  }
}

/// protocol.md, Versioning: clients ignore members and events they do not know.
@Suite struct NewerDaemonMessageTests {
  @Test func anUnknownEventIsReadAsSuchNotAsAnError() throws {
    let line = #"{"type":"event","event":"squeezed","button":"action","pressure":{"n":[1,{"x":null}]}}"#
    let message = try ServerMessage.decode(line: line)
    let json = try JSONParser.parse(line).root
    #expect(message == .unknownEvent(name: "squeezed", json: json))
    #expect(JSONEncoding.compact(message.json) == line, "what was read is passed on unchanged")
    // Still unreadable: an event without a name, or a name that is no string.
    #expect(throws: ProtocolError.self) { try ServerMessage.decode(line: #"{"type":"event"}"#) }
    #expect(throws: ProtocolError.self) { try ServerMessage.decode(line: #"{"type":"event","event":3}"#) }
  }

  /// Members this build does not know, added to every object of a known message,
  /// change nothing it reads; so do elements it cannot place.
  @Test func newMembersAtEveryDepthAreIgnored() throws {
    let hints = [GestureHint(gesture: .doublePress, kind: "k.mute", hint: "Press twice to Mute")]
    let pressed = Event.pressed(
      button: "action", kind: "k.timer", hint: "Hold to Start", hints: hints, time: .zero,
      threshold: .milliseconds(600))
    var line = JSONEncoding.compact(ServerMessage.event(pressed).json)
    line = line.replacingOccurrences(
      of: #""hints":["#,
      with: #""hints":[{"gesture":"triplePress","kind":"k.x","hint":"Press three times to X"},"#)
    line = line.replacingOccurrences(of: #""gesture":"doublePress","#, with: #""gesture":"doublePress","new":{"a":1},"#)
    line = line.replacingOccurrences(of: #""time":0"#, with: #""pressure":[1,2],"time":0"#)
    #expect(line.contains("triplePress") && line.contains(#""new":{"a":1}"#), "\(line)")
    let read = try ServerMessage.decode(line: line)
    #expect(read == .event(pressed))

    var button = ButtonStatus(
      name: "action", key: "KEY_PROG1", devices: [], holdThreshold: .milliseconds(600),
      control: ControlSnapshot(kind: "k", displayName: "K", type: .toggle, value: true, hint: "Hold to Stop"))
    button.feedback = [FeedbackOutput(light: .sysfs(name: "ACT"), moments: [.held])]
    var status = JSONEncoding.compact(
      ServerMessage.reply(Reply(id: .integer(1), request: .status, result: .buttons([button]))).json)
    status = status.replacingOccurrences(
      of: #""feedback":[{"sysfs":"ACT","on":["held"]"#,
      with: #""feedback":[{"display":"OLED","on":["held"]},{"sysfs":"ACT","on":["held","squeezed"],"blink":2"#)
    status = status.replacingOccurrences(of: #""performing":false"#, with: #""performing":false,"progress":0.5"#)
    #expect(status.contains("OLED") && status.contains("progress"), "\(status)")
    let readStatus = try ServerMessage.decode(line: status)
    #expect(readStatus == .reply(Reply(id: .integer(1), request: .status, result: .buttons([button]))))
  }

  /// Values this build does not know inside known members: a perform's `source` reads as
  /// itself, its `gesture` as none, and the rest of the event still counts.
  @Test func newValuesOfAPerformsSourceAndGestureAreReadAsUnknown() throws {
    let control = ControlSnapshot(kind: "k", displayName: "K", type: .toggle, value: true, hint: "Hold to Stop")
    let performed = Event.performed(button: "action", source: .button, gesture: .hold, control: control)
    let line = JSONEncoding.compact(ServerMessage.event(performed).json)
      .replacingOccurrences(of: #""source":"button""#, with: #""source":"schedule""#)
      .replacingOccurrences(of: #""gesture":"hold""#, with: #""gesture":"triplePress""#)
    #expect(line.contains("schedule") && line.contains("triplePress"), "\(line)")
    let read = try ServerMessage.decode(line: line)
    let schedule = PerformSource(rawValue: "schedule")
    #expect(read == .event(.performed(button: "action", source: schedule, gesture: nil, control: control)))
    #expect(schedule != .button && schedule != .socket)
    let lines = [
      #"{"type":"event","event":"performing","kind":"k","source":"schedule","gesture":"triplePress","value":true}"#,
      #"{"type":"event","event":"failed","kind":"k","source":"schedule","gesture":"triplePress","code":"overheated","reason":"hot"}"#,
      #"{"type":"event","event":"busy","kind":"k","source":"schedule","gesture":"triplePress"}"#,
    ]
    var events: [ServerMessage] = []
    for l in lines { events.append(try ServerMessage.decode(line: l)) }
    #expect(
      events == [
        .event(.performing(kind: "k", button: nil, source: schedule, gesture: nil, value: true)),
        .event(
          .failed(
            kind: "k", button: nil, source: schedule, gesture: nil,
            error: ProtocolError(ProtocolErrorCode("overheated"), "hot"))),
        .event(.busy(kind: "k", button: nil, source: schedule, gesture: nil)),
      ])
    // What this build knows still reads exactly.
    let known = try ServerMessage.decode(line: JSONEncoding.compact(ServerMessage.event(performed).json))
    #expect(known == .event(performed))
  }

  /// An assignment to a gesture this build does not know cannot be placed on its button:
  /// it reads as an event this build does not know (skipped, passed on unchanged).
  @Test func anAssignmentToANewGestureIsReadAsAnUnknownEvent() throws {
    let line =
      #"{"type":"event","event":"assigned","button":"action","gesture":"triplePress","kind":"k","#
      + #""momentary":false,"control":null}"#
    let read = try ServerMessage.decode(line: line)
    let json = try JSONParser.parse(line).root
    #expect(read == .unknownEvent(name: "assigned", json: json))
    let known = line.replacingOccurrences(of: "triplePress", with: "doublePress")
    let readKnown = try ServerMessage.decode(line: known)
    #expect(readKnown == .event(.assigned(button: "action", gesture: .doublePress, momentary: false, control: nil)))
  }
}
