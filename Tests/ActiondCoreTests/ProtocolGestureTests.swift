// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

@Suite struct ProtocolGestureTests {
  private func request(_ line: String) throws(ProtocolError) -> Request {
    switch ClientMessage.decode(line: line) {
    case .success(.request(let r)): return r
    case .success(let other): throw ProtocolError(.internal, "not a request: \(other)")
    case .failure(let f): throw f.error
    }
  }

  @Test func assignTakesAGestureAndMomentary() throws {
    #expect(
      try request(#"{"request":"assign","button":"b","kind":"k"}"#).body
        == .assign(button: "b", kind: "k", configuration: [:], gesture: .hold, momentary: false))
    #expect(
      try request(#"{"request":"assign","button":"b","kind":"k","gesture":"doublePress"}"#).body
        == .assign(button: "b", kind: "k", configuration: [:], gesture: .doublePress))
    #expect(
      try request(#"{"request":"assign","button":"b","kind":"k","gesture":"longHold","momentary":false}"#).body
        == .assign(button: "b", kind: "k", configuration: [:], gesture: .longHold))
    #expect(
      try request(#"{"request":"assign","button":"b","kind":"k","gesture":"hold","momentary":true}"#).body
        == .assign(button: "b", kind: "k", configuration: [:], gesture: .hold, momentary: true))
  }

  @Test func theRequestRoundTripsAndLeavesDefaultsOut() throws {
    for body: Request.Body in [
      .assign(button: "b", kind: "k", configuration: [:]),
      .assign(button: "b", kind: "k", configuration: ["p": 1], gesture: .longHold),
      .assign(button: "b", kind: "k", configuration: [:], momentary: true),
    ] {
      let r = Request(id: .integer(1), body)
      #expect(try request(JSONEncoding.compact(r.json)) == r)
    }
    #expect(
      JSONEncoding.compact(Request(id: nil, .assign(button: "b", kind: "k", configuration: [:])).json)
        == #"{"type":"request","request":"assign","button":"b","kind":"k"}"#)
    #expect(
      JSONEncoding.compact(
        Request(id: nil, .assign(button: "b", kind: "k", configuration: [:], gesture: .doublePress)).json)
        == #"{"type":"request","request":"assign","button":"b","kind":"k","gesture":"doublePress"}"#)
  }

  @Test(arguments: [
    (
      #"{"request":"assign","button":"b","kind":"k","gesture":"tap"}"#,
      #"field "gesture" of request "assign" must be one of hold, doublePress, longHold, got "tap""#
    ),
    (
      #"{"request":"assign","button":"b","kind":"k","gesture":""}"#,
      #"field "gesture" of request "assign" must not be empty"#
    ),
    (
      #"{"request":"assign","button":"b","kind":"k","gesture":1}"#,
      #"field "gesture" of request "assign" must be a string, got number"#
    ),
    (
      #"{"request":"assign","button":"b","kind":"k","gesture":null}"#,
      #"field "gesture" of request "assign" must be a string, got null"#
    ),
    (
      #"{"request":"assign","button":"b","kind":"k","momentary":"yes"}"#,
      #"field "momentary" of request "assign" must be true or false, got string"#
    ),
    (
      #"{"request":"assign","button":"b","kind":"k","gesture":"doublePress","momentary":true}"#,
      #"field "momentary" of request "assign" is only for gesture "hold", not "doublePress""#
    ),
    (
      #"{"request":"assign","button":"b","kind":"k","gestures":"hold"}"#,
      #"request "assign" has an unexpected field "gestures""#
    ),
  ])
  func badAssignsAreBadRequests(line: String, message: String) {
    #expect {
      _ = try request(line)
    } throws: { error in
      let e = error as? ProtocolError
      return e?.code == .badRequest && e?.message == message
    }
  }

  static let timer = ControlSnapshot(
    kind: "org.example.timer", displayName: "Work Timer", type: .toggle, value: false, valueText: "Stopped",
    hint: "Hold to Start")
  static let mute = ControlSnapshot(kind: "org.example.mute", displayName: "Mute", type: .toggle, hint: "Hold to Mute")

  @Test func buttonStatusCarriesEveryGesture() throws {
    let status = ButtonStatus(
      name: "panel", key: "KEY_PROG2", devices: [], holdThreshold: .milliseconds(800),
      doublePressWindow: .milliseconds(250), longHoldThreshold: .milliseconds(5000), control: Self.timer,
      momentary: true, doublePress: nil, longHold: Self.mute)
    let json = status.json
    #expect(json["doublePressWindowMs"] == .integer(250))
    #expect(json["longHoldThresholdMs"] == .integer(5000))
    #expect(json["momentary"] == .bool(true))
    #expect(json["doublePress"] == .null)
    #expect(json["longHold"] == Self.mute.json)
    #expect(try ButtonStatus(json: json) == status)
    #expect(status.control(of: .hold) == Self.timer)
    #expect(status.control(of: .doublePress) == nil)
    #expect(status.control(of: .longHold) == Self.mute)
    #expect(
      JSONEncoding.compact(
        ButtonStatus(name: "a", key: "K", devices: [], holdThreshold: .milliseconds(600), control: nil).json)
        == #"{"name":"a","key":"K","bound":false,"devices":[],"holdThresholdMs":600,"doublePressWindowMs":300,"longHoldThresholdMs":3000,"control":null,"momentary":false,"doublePress":null,"longHold":null}"#
    )
  }

  @Test func aButtonFromAnOlderDaemonReadsAsHoldsOnly() throws {
    let old = try ButtonStatus(
      json: try JSONParser.parse(
        #"{"name":"a","key":"K","bound":false,"devices":[],"holdThresholdMs":2500,"control":null}"#
      ).root)
    #expect(old.doublePressWindow == .milliseconds(300))
    #expect(old.longHoldThreshold == .milliseconds(3500))
    #expect(old.momentary == false)
    #expect(old.doublePress == nil && old.longHold == nil)
  }

  @Test func theAssignedEventNamesItsGesture() throws {
    let event = Event.assigned(button: "panel", gesture: .doublePress, control: Self.mute)
    #expect(
      JSONEncoding.compact(event.json).hasPrefix(
        #"{"type":"event","event":"assigned","button":"panel","gesture":"doublePress","kind":"org.example.mute","momentary":false,"control":{"#
      ))
    #expect(try Event(json: event.json) == event)
    let momentary = Event.assigned(button: "a", gesture: .hold, momentary: true, control: Self.timer)
    #expect(try Event(json: momentary.json) == momentary)
    let unassigned = Event.assigned(button: "a", gesture: .longHold, control: nil)
    #expect(try Event(json: unassigned.json) == unassigned)
    #expect(unassigned.buttons == ["a"])
    // An older daemon's event has no gesture: a hold.
    #expect(
      try Event(json: try JSONParser.parse(#"{"type":"event","event":"assigned","button":"a","control":null}"#).root)
        == .assigned(button: "a", gesture: .hold, control: nil))
  }

  @Test func gestureNamesAreTheWireNames() {
    #expect(Gesture.allCases.map(\.rawValue) == ["hold", "doublePress", "longHold"])
    #expect(Gesture.names == "hold, doublePress, longHold")
  }
}
