// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// Gesture assignments through the real daemon: the `assign` request's `gesture` and
/// `momentary`, the state file, a restart and a SIGHUP that edits the file's entry.
@Suite struct DaemonGestureAssignmentTests {
  private static let controls = """
    [
      { kind: "org.test.timer", type: "toggle", displayName: "Timer", intent: { type: "state" } },
      { kind: "org.test.mute", type: "toggle", displayName: "Mute", intent: { type: "state" } },
      { kind: "org.test.photo", type: "button", displayName: "Photo", intent: { type: "exec", argv: ["/bin/true"] } },
    ]
    """

  @Test func gesturesAndMomentarySurviveARestartAndTheFileWinsPerGesture() throws {
    let h = try DaemonHarness(controls: Self.controls, assignments: #"{ action: "org.test.timer" }"#)
    try h.start()
    var c = try h.connect()
    let assigned = try h.request(
      c, #""request":"assign","button":"action","kind":"org.test.mute","gesture":"doublePress""#)
    guard case .reply(let reply) = assigned, case .button(let button) = reply.result else {
      Issue.record("\(assigned)")
      return
    }
    #expect(button.control?.kind == "org.test.timer")
    #expect(button.doublePress?.kind == "org.test.mute")
    #expect(button.longHold == nil)
    #expect(
      try h.request(c, #""request":"assign","button":"action","kind":"org.test.photo","momentary":true"#).failure?.code
        == .unsupported)
    #expect(
      try h.request(
        c, #""request":"assign","button":"action","kind":"org.test.mute","gesture":"longHold","momentary":true"#
      )
      .failure?.code == .badRequest)
    #expect(
      try h.request(c, #""request":"assign","button":"action","kind":"org.test.timer","momentary":true"#).failure == nil
    )
    h.forget(c)
    #expect(try h.stop() == 0)

    try h.start()
    c = try h.connect()
    var status = try #require(try h.request(c, #""request":"status""#).buttons?.first)
    #expect(status.control?.kind == "org.test.timer")
    #expect(status.momentary == true)
    #expect(status.doublePress?.kind == "org.test.mute")

    // The operator gives the file a double press of its own: it wins there, the momentary hold stays.
    try h.writeConfiguration(
      controls: Self.controls, assignments: #"{ action: { hold: "org.test.timer", doublePress: "org.test.photo" } }"#)
    h.signal(SIGHUP)
    try h.waitForLog("event=config-reloaded applied=1")
    status = try #require(try h.request(c, #""request":"status""#).buttons?.first)
    #expect(status.doublePress?.kind == "org.test.photo")
    #expect(status.momentary == true)
    h.forget(c)
    #expect(try h.stop() == 0)
  }
}
