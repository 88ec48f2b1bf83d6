// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import Testing

@Suite struct StateSnapshotGestureTests {
  /// A state file exactly as daemons before gestures wrote it: it must load unchanged and,
  /// with only holds, be written back byte for byte.
  static let fileBeforeGestures = """
    {
      "version": 1,
      "assignments": {
        "action": {
          "kind": "org.example.led",
          "configuration": {
            "led": "green"
          },
          "replaces": {
            "kind": "org.example.timer",
            "configuration": {}
          }
        },
        "foot": {
          "kind": "org.example.timer",
          "configuration": {}
        }
      },
      "values": {
        "org.example.timer": true
      }
    }

    """

  @Test func aFileFromBeforeGesturesLoadsAndIsWrittenAsBefore() throws {
    let snapshot = try StateSnapshot.decode(Self.fileBeforeGestures)
    #expect(
      snapshot.assignments == [
        "action": [
          .hold: .init(
            kind: "org.example.led", configuration: ["led": "green"], replaces: .init(kind: "org.example.timer"))
        ],
        "foot": [.hold: .init(kind: "org.example.timer")],
      ])
    #expect(snapshot.values == ["org.example.timer": true])
    #expect(snapshot.encoded() == Self.fileBeforeGestures)
  }

  @Test func otherGesturesAndMomentaryRoundTrip() throws {
    let snapshot = StateSnapshot(
      assignments: [
        "action": [
          .hold: .init(kind: "org.example.mic", momentary: true, replaces: .init(kind: "org.example.mic")),
          .doublePress: .init(kind: "org.example.mute", configuration: ["card": 1]),
        ],
        "panel": [
          .longHold: .init(
            kind: "org.example.reboot", replaces: .init(kind: "org.example.halt", configuration: ["now": true]))
        ],
      ])
    let text = snapshot.encoded()
    #expect(try StateSnapshot.decode(text) == snapshot)
    #expect(
      text == """
        {
          "version": 1,
          "assignments": {
            "action": {
              "kind": "org.example.mic",
              "configuration": {},
              "momentary": true,
              "replaces": {
                "kind": "org.example.mic",
                "configuration": {}
              }
            }
          },
          "gestures": {
            "action": {
              "doublePress": {
                "kind": "org.example.mute",
                "configuration": {
                  "card": 1
                }
              }
            },
            "panel": {
              "longHold": {
                "kind": "org.example.reboot",
                "configuration": {},
                "replaces": {
                  "kind": "org.example.halt",
                  "configuration": {
                    "now": true
                  }
                }
              }
            }
          },
          "values": {}
        }

        """)
    // A replaced momentary hold remembers that it was momentary.
    let replaced = StateSnapshot(
      assignments: ["a": [.hold: .init(kind: "k", replaces: .init(kind: "m", momentary: true))]])
    #expect(try StateSnapshot.decode(replaced.encoded()) == replaced)
    #expect(replaced.encoded().contains(#""momentary": true"#))
  }

  @Test(arguments: [
    (#"{"version": 1, "gestures": []}"#, "$.gestures: expected object, got array"),
    (#"{"version": 1, "gestures": {"a": 1}}"#, "$.gestures.a: expected object, got number"),
    (#"{"version": 1, "gestures": {"a": {}}}"#, "$.gestures.a: expected at least one gesture"),
    (#"{"version": 1, "gestures": {"a": {"hold": {"kind": "k"}}}}"#, #"$.gestures.a: unknown key "hold""#),
    (#"{"version": 1, "gestures": {"a": {"tap": {"kind": "k"}}}}"#, #"$.gestures.a: unknown key "tap""#),
    (
      #"{"version": 1, "gestures": {"a": {"longHold": {"kind": "k"}, "longHold": {"kind": "k"}}}}"#,
      #"$.gestures.a: duplicate key "longHold""#
    ),
    (
      #"{"version": 1, "gestures": {"a": {"doublePress": {}}}}"#,
      "$.gestures.a.doublePress.kind: expected a non-empty string"
    ),
    (
      #"{"version": 1, "gestures": {"a": {"doublePress": {"kind": "k", "momentary": true}}}}"#,
      #"$.gestures.a.doublePress: unknown key "momentary""#
    ),
    (
      #"{"version": 1, "gestures": {"a": {"doublePress": {"kind": "k", "replaces": {"kind": "k", "momentary": false}}}}}"#,
      #"$.gestures.a.doublePress.replaces: unknown key "momentary""#
    ),
    (
      #"{"version": 1, "assignments": {"a": {"kind": "k", "momentary": 1}}}"#,
      "$.assignments.a.momentary: expected boolean, got number"
    ),
    (
      #"{"version": 1, "assignments": {"a": {"kind": "k", "replaces": {"kind": "k", "momentary": "no"}}}}"#,
      "$.assignments.a.replaces.momentary: expected boolean, got string"
    ),
  ])
  func rejectsEveryWrongShape(text: String, message: String) {
    #expect {
      _ = try StateSnapshot.decode(text)
    } throws: { error in
      (error as? StateSnapshotError)?.message == message
    }
  }
}
