// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// A hold's command is readied at its key-down (issue 15: prepare what can be prepared
/// without a process), and the hold runs exactly what it would have built at the
/// threshold: the readied request only when nothing changed in between.
@Suite struct DaemonPreparedHoldTests {
  @Test func theHoldRunsTheRequestReadiedAtItsKeyDown() throws {
    let wired = try WiredDaemon()
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    // Stamped in the past: the deadline is due, and the next turn decides it.
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    #expect(wired.runner.runs.isEmpty)
    let prepared = try #require(wired.runner.preparedRequests.first, "readied at the key-down")
    #expect(prepared.argv == ["/usr/bin/lamp"])
    #expect(prepared.environment["ACTIOND_VALUE"] == "1")
    #expect(prepared.environment["ACTIOND_PRESS_TIME"] == String((t0 + .milliseconds(100)).microseconds))
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    #expect(wired.runner.requests == [prepared])
    #expect(wired.runner.ranPrepared == [true], "the runner's readied request was the one run")
    #expect(wired.runner.prepared == nil)
    wired.runner.complete(with: .exited(0))
    try wired.turn(until: "performed") { !wired.log.records(event: "performed").isEmpty }
    wired.input.emit(.key(button: "action", code: 148, value: 0, at: t0 + .milliseconds(1000)))
    try wired.turnOnce()
    #expect(wired.runner.preparedRequests.count == 1, "nothing is readied at a release")
  }

  @Test func aShortPressReleasesWhatWasReadied() throws {
    let wired = try WiredDaemon()
    let t0 = wired.daemon.loop.now()
    wired.plugIn(at: t0)
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0))
    #expect(wired.runner.prepared != nil)
    wired.input.emit(.key(button: "action", code: 148, value: 0, at: t0 + .milliseconds(50)))
    #expect(wired.runner.prepared == nil, "released at the short press's end")
    try wired.turnOnce()
    #expect(wired.runner.runs.isEmpty)
  }

  @Test func aValueChangedDuringThePressIsWhatTheHoldRuns() throws {
    let wired = try WiredDaemon()
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    #expect(wired.runner.prepared?.environment["ACTIOND_VALUE"] == "1", "readied to turn the lamp on")
    // Someone turns the lamp on before the threshold: the hold must now turn it off.
    let lamp = try #require(wired.daemon.engine.assignment(of: "action"))
    var set: Result<EngineAnswer, ProtocolError>?
    wired.daemon.interpreter.request(.set(lamp, to: true)) { set = $0 }
    #expect(set.map { if case .success = $0 { true } else { false } } == true)
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    #expect(wired.runner.requests.map { $0.environment["ACTIOND_VALUE"] } == ["0"])
    #expect(wired.runner.ranPrepared == [false], "the stale readied request is not run")
    #expect(wired.runner.prepared != nil, "still readied until the press ends")
    wired.input.emit(.key(button: "action", code: 148, value: 0, at: t0 + .milliseconds(1000)))
    #expect(wired.runner.prepared == nil, "released at the press's end")
  }

  @Test func aReloadReleasesWhatWasReadied() throws {
    let wired = try WiredDaemon()
    let t0 = wired.daemon.loop.now()
    wired.plugIn(at: t0)
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0))
    #expect(wired.runner.prepared != nil)
    wired.daemon.reloadConfiguration()
    #expect(wired.runner.prepared == nil, "a user may resolve differently after a reload")
  }

  @Test func aPressWhoseHoldHasNoControlReadiesNothing() throws {
    // Only the double press runs the command: a press readies nothing for its hold.
    let wired = try WiredDaemon(assignment: #"{ doublePress: "org.example.lamp" }"#)
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    try wired.turnOnce()
    #expect(wired.runner.preparedRequests.isEmpty)
    #expect(wired.runner.runs.isEmpty)
  }
}
