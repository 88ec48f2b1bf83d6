// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import Testing

@Suite struct StateSnapshotTests {
  let sample = StateSnapshot(
    assignments: [
      "action": [
        .hold: .init(kind: "org.example.flashlight", configuration: ["led": "green", "level": 3, "on": true])
      ],
      "aux": [.hold: .init(kind: "org.example.timer")],
    ],
    values: ["org.example.timer": true, "org.example.mute": false])

  @Test func roundTripsAndIsStable() throws {
    let text = sample.encoded()
    #expect(try StateSnapshot.decode(text) == sample)
    #expect(text == sample.encoded(), "sorted keys: same snapshot, same bytes")
    #expect(text.hasSuffix("\n"))
    #expect(text.contains("\"version\": 1"))
    #expect(try StateSnapshot.decode(StateSnapshot.empty.encoded()) == .empty)
  }

  @Test func theDocumentedShape() throws {
    let text = """
      {"version": 1, "assignments": {"action": {"kind": "k", "configuration": {"p": [1, "x"]}}}, "values": {"k": true}}
      """
    let snapshot = try StateSnapshot.decode(text)
    #expect(snapshot.assignments["action"] == [.hold: .init(kind: "k", configuration: ["p": [1, "x"]])])
    #expect(snapshot.values == ["k": true])
    #expect(try StateSnapshot.decode(#"{"version": 1}"#) == .empty)
  }

  @Test(arguments: [
    ("", "invalid JSON"),
    ("{\"version\": 1", "invalid JSON"),
    ("[]", "expected an object, got array"),
    ("{}", "$.version is missing"),
    ("{\"version\": \"1\"}", "$.version: expected integer, got string"),
    ("{\"version\": 2}", "$.version: format version 2 is not supported (expected 1)"),
    ("{\"version\": 1, \"extra\": 0}", "$: unknown key \"extra\""),
    ("{\"version\": 1, \"version\": 1}", "$: duplicate key \"version\""),
    ("{\"version\": 1, \"assignments\": []}", "$.assignments: expected object, got array"),
    ("{\"version\": 1, \"assignments\": {\"a\": 1}}", "$.assignments.a: expected object, got number"),
    ("{\"version\": 1, \"assignments\": {\"a\": {}}}", "$.assignments.a.kind: expected a non-empty string"),
    (
      "{\"version\": 1, \"assignments\": {\"a\": {\"kind\": \"\"}}}",
      "$.assignments.a.kind: expected a non-empty string"
    ),
    (
      "{\"version\": 1, \"assignments\": {\"a\": {\"kind\": \"k\", \"configuration\": 1}}}",
      "$.assignments.a.configuration: expected object, got number"
    ),
    ("{\"version\": 1, \"assignments\": {\"a\": {\"kind\": \"k\", \"x\": 1}}}", "$.assignments.a: unknown key \"x\""),
    ("{\"version\": 1, \"values\": {\"k\": 1}}", "$.values.k: expected boolean, got number"),
    ("{\"version\": 1, \"values\": null}", "$.values: expected object, got null"),
  ])
  func rejectsEveryWrongShape(text: String, message: String) {
    #expect {
      _ = try StateSnapshot.decode(text)
    } throws: { error in
      (error as? StateSnapshotError)?.message.hasPrefix(message) == true
    }
  }
}
