// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// protocol.md, Framing: the real daemon answers a duplicate member with `bad-request`
/// at every depth of a request, however slowly its bytes arrive, and goes on serving.
@Suite struct DuplicateMemberDaemonTests {
  static let controls = """
    [ { kind: "org.test.led", type: "toggle", displayName: "LED", intent: { type: "state" },
        parameters: [{ name: "led", type: "string" }] } ]
    """

  /// Sends `line` one byte per write, letting the daemon read each before the next.
  private func sendByteByByte(_ h: DaemonHarness, _ c: TestClient, _ line: String) throws {
    for byte in Array((line + "\n").utf8) {
      #expect(c.sendRaw([byte]) == 1)
      var p = pollfd(fd: c.fd, events: Int16(POLLIN), revents: 0)
      _ = poll(&p, 1, 1)  // a turn of the daemon's loop, not a timing assertion
    }
  }

  @Test func aDuplicateAtAnyDepthIsBadRequestAndTheSocketKeepsServing() throws {
    let h = try DaemonHarness(controls: Self.controls)
    try h.start()
    let c = try h.connect()
    let cases: [(Int64, String, String)] = [
      (
        101, #"{"id":101,"request":"assign","button":"action","button":"action","kind":"org.test.led"}"#,
        #"message has field "button" more than once"#
      ),
      (
        102,
        #"{"id":102,"request":"assign","button":"action","kind":"org.test.led","configuration":{"led":"a","led":"b"}}"#,
        #"field "configuration" of request "assign" has field "led" more than once"#
      ),
      // Before, this one reached the engine: invalid-configuration ("led: must be a string").
      (
        103,
        #"{"id":103,"request":"assign","button":"action","kind":"org.test.led","configuration":{"led":{"x":1,"x":2}}}"#,
        #"field "configuration.led" of request "assign" has field "x" more than once"#
      ),
      (
        104, #"{"id":104,"request":"perform","kind":"org.test.led","configuration":{"led":[{"a":{"b":1,"b":1}}]}}"#,
        #"field "configuration.led[0].a" of request "perform" has field "b" more than once"#
      ),
    ]
    for (id, line, message) in cases {
      try sendByteByByte(h, c, line)
      let answer = try h.answer(c, .integer(id))
      guard case .error(_, let error) = answer else {
        Issue.record("\(line): \(answer)")
        continue
      }
      #expect(error.code == .badRequest, "\(line): \(error)")
      #expect(error.message == message, "\(line)")
    }
    // The same connection still works, for a request of the same shape without the duplicate.
    guard
      case .reply(let reply) = try h.request(
        c, #""request":"assign","button":"action","kind":"org.test.led","configuration":{"led":"user1"}"#),
      case .button(let button) = reply.result
    else {
      Issue.record("the assign after the duplicates failed")
      return
    }
    #expect(button.control?.configuration == ["led": "user1"])
    #expect(!c.eof)
    // And so does a new one.
    let other = try h.connect()
    guard case .reply = try h.request(other, #""request":"ping""#) else {
      Issue.record("a new connection was not served")
      return
    }
    let exit = try h.stop()
    #expect(exit == 0)
  }
}
