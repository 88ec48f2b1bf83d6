// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

@Suite struct DaemonWiringTests {
  /// A hold read from the input source performs once, at the threshold, after draining
  /// the device; the command gets the hold's environment; its release performs nothing
  /// more; the status line counts the bound button and its device.
  @Test func holdThroughTheInputSourcePerformsOnce() throws {
    let wired = try WiredDaemon()
    #expect(wired.input.calls == [.start(["action"])])
    #expect(wired.daemon.statusLine() == "0/1 button(s) bound, 0 device(s), 0 client(s)")
    // Stamped in the past, as events read late are: the hold's deadline is already due,
    // so the loop's next turn decides it and nothing here waits for a clock.
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    #expect(wired.daemon.statusLine() == "1/1 button(s) bound, 1 device(s), 0 client(s)")
    #expect(wired.log.records(event: "device-added").count == 1)

    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    #expect(wired.input.calls.contains(.drain(button: "action")), "the deadline drains the device first")
    let request = try #require(wired.runner.requests.first)
    #expect(request.argv == ["/usr/bin/lamp"])
    #expect(request.environment["ACTIOND_BUTTON"] == "action")
    #expect(request.environment["ACTIOND_VALUE"] == "1")
    #expect(request.environment["ACTIOND_PRESS_TIME"] == String((t0 + .milliseconds(100)).microseconds))

    wired.runner.complete(with: .exited(0))
    try wired.turn(until: "performed") { !wired.log.records(event: "performed").isEmpty }
    #expect(wired.log.records(event: "performed").first?.message == "Lamp: Lit")

    wired.input.emit(.key(button: "action", code: 148, value: 2, at: t0 + .milliseconds(900)))
    wired.input.emit(.key(button: "action", code: 148, value: 0, at: t0 + .milliseconds(1000)))
    try wired.turnOnce()
    #expect(wired.runner.runs.count == 1, "a hold performs exactly once")
    #expect(wired.log.records(event: "performed").count == 1)
  }

  /// At a hold's deadline `held` and `performing` reach a subscriber before the command is
  /// spawned, sent together (ControlServer's batch: one send per subscriber), so the
  /// subscriber does not wait for the spawn, nor the spawn for one send per line.
  @Test func aHoldsAnnouncementsGoOutBeforeItsCommandIsSpawned() throws {
    let wired = try WiredDaemon()
    let client = try wired.connect()
    _ = try wired.request(client, id: 1, #""request":"subscribe""#)
    var atSpawn: [Event] = []
    wired.runner.onRun = { _ in
      client.readAvailable()
      atSpawn = client.events
    }
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    #expect(atSpawn.contains { if case .held = $0 { true } else { false } }, "\(atSpawn)")
    #expect(atSpawn.contains { if case .performing = $0 { true } else { false } }, "\(atSpawn)")
  }

  /// What one turn announces reaches each subscriber in one send(2) (issue 32, item 7):
  /// a command's end announces its `state` and `performed`, and the subscriber gets them
  /// together; the key-down's `pressed` goes out in the same turn, before it ends.
  @Test func aTurnSendsWhatItAnnouncesInOneWritePerSubscriber() throws {
    let wired = try WiredDaemon()
    let client = try wired.connect()
    _ = try wired.request(client, id: 1, #""request":"subscribe""#)
    let server = try #require(wired.daemon.interpreter.server)
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    client.readAvailable()
    var sends = server.sends
    var seen = client.events.count
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    client.readAvailable()
    #expect(client.events.dropFirst(seen).map(\.name) == [.pressed], "sent before the key-down's turn ended")
    #expect(server.sends - sends == 1)
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    client.readAvailable()
    (sends, seen) = (server.sends, client.events.count)
    wired.runner.complete(with: .exited(0))
    client.readAvailable()
    let ended = client.events.dropFirst(seen).map(\.name)
    #expect(ended.contains(.state) && ended.contains(.performed), "\(ended)")
    #expect(server.sends - sends == 1, "\(ended.count) announcements, one send")
  }

  /// The socket clients wait around a button's deadline (issue 13, item 14): from
  /// `clientQuiet.before` ahead of it until it is handled, then, after a command it
  /// started, until that command shows life (its first output line or its exit). A key
  /// released before the deadline ends the quiet at once.
  @Test func theClientsWaitAroundADeadlineAndItsCommand() throws {
    let wired = try WiredDaemon()
    // Spans no machine is too slow for: only the events end the quiet here.
    wired.daemon.interpreter.clientQuiet = .init(before: .seconds(3600), after: .seconds(3600))
    let loop = wired.daemon.loop
    let t0 = loop.now() - .seconds(10)
    wired.plugIn(at: t0)
    try wired.turnOnce()
    #expect(!loop.isQuiet)

    // A hold whose deadline is already due: decided next turn, its command keeps the quiet.
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .seconds(1)))
    #expect(loop.isQuiet, "the deadline is near")
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    #expect(loop.isQuiet, "the command has not shown life yet")
    wired.runner.emit(ProcessOutputLine(stream: .stdout, text: "on", truncated: false), run: 0)
    #expect(!loop.isQuiet, "its first output line ends the quiet")
    wired.runner.complete(with: .exited(0))
    try wired.turn(until: "performed") { !wired.log.records(event: "performed").isEmpty }
    wired.input.emit(.key(button: "action", code: 148, value: 0, at: t0 + .seconds(2)))
    try wired.turnOnce()
    #expect(!loop.isQuiet)

    // A second hold: the command's exit ends the quiet too.
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .seconds(3)))
    try wired.turn(until: "the second hold's command") { wired.runner.runs.count == 2 }
    #expect(loop.isQuiet)
    wired.runner.complete(with: .exited(0))
    #expect(!loop.isQuiet, "its exit ends the quiet")
    try wired.turn(until: "performed twice") { wired.log.records(event: "performed").count == 2 }
    wired.input.emit(.key(button: "action", code: 148, value: 0, at: t0 + .seconds(4)))
    try wired.turnOnce()

    // A press now, released before its threshold: the deadline is gone, so is the quiet.
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: loop.now()))
    #expect(loop.isQuiet, "600 ms before the deadline, within `before`")
    wired.input.emit(.key(button: "action", code: 148, value: 0, at: loop.now()))
    try wired.turnOnce()
    #expect(!loop.isQuiet)
    #expect(wired.runner.runs.count == 2, "the short press ran nothing")
  }

  /// A device lost before the loop got to a due hold cancels the press: nothing runs, the
  /// removal is announced and the status line no longer counts the button.
  @Test func deviceLostBeforeTheDeadlineCancelsTheHold() throws {
    let wired = try WiredDaemon()
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    let bound = wired.input.boundDevices[0]
    wired.input.buttonDevices["action"] = nil
    wired.input.boundDevices = []
    wired.input.emit(.lost(button: "action", at: t0 + .milliseconds(200)))
    wired.input.emit(.deviceUnbound(bound, reason: .removed))
    try wired.turnOnce()
    try wired.turnOnce()

    #expect(wired.runner.runs.isEmpty)
    let cancelled = wired.log.records(event: "cancelled")
    #expect(cancelled.count == 1)
    #expect(cancelled.first?.fields.contains(LogField("reason", "device-lost")) == true)
    #expect(wired.log.records(event: "device-removed").count == 1)
    #expect(wired.daemon.statusLine() == "0/1 button(s) bound, 0 device(s), 0 client(s)")
  }

  /// From the input layer on a button is its name: an event for a button a reload removed
  /// (from an input source that still has it) reaches no press, and the daemon goes on.
  /// (With binding slots, such an event indexed past the configuration's buttons.)
  @Test func inputEventsForAButtonAReloadRemovedAreIgnored() throws {
    let wired = try WiredDaemon()
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    try WiredDaemon.writeConfiguration(wired.directory, button: "main")
    wired.daemon.reloadConfiguration()
    #expect(wired.log.records(event: "config-problem").isEmpty)
    #expect(wired.input.bindings.map(\.name) == ["main"])
    let device = wired.device
    let gone: [InputEvent] = [
      .appeared(button: "action", device: device, isDown: false, at: t0 + .milliseconds(100)),
      .key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(200)),
      .resync(button: "action", isDown: true, at: t0 + .milliseconds(300)),
      .releasedByKernel(button: "action", at: t0 + .milliseconds(400)),
      .lost(button: "action", at: t0 + .milliseconds(500)),
      .refused(button: "action", device: device, reason: "no such key"),
      .ignoredExtraMatch(button: "action", device: device, boundTo: device),
    ]
    for event in gone { wired.input.emit(event) }
    try wired.turnOnce()
    #expect(wired.log.records(event: "pressed").isEmpty)
    #expect(wired.runner.runs.isEmpty)
    #expect(wired.log.records(event: "device-refused").first?.message.hasPrefix("button action: ") == true)
    // The button under its new name is pressed and held as ever.
    wired.input.buttonDevices["main"] = device
    wired.input.emit(.appeared(button: "main", device: device, isDown: false, at: t0 + .seconds(1)))
    wired.input.emit(.key(button: "main", code: 148, value: 1, at: t0 + .seconds(2)))
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    #expect(wired.log.records(event: "pressed").map(\.message) == ["button main pressed: Hold to Turn On"])
  }

  /// A stop while a momentary toggle is held on turns it off first, and spares that off
  /// from the stop's SIGTERM: nothing stays on because the daemon stopped.
  @Test func aStopTurnsAHeldMomentaryToggleOff() throws {
    let wired = try WiredDaemon(assignment: #"{ kind: "org.example.lamp", momentary: true }"#)
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    try wired.turn(until: "the momentary on") { !wired.runner.runs.isEmpty }
    #expect(wired.runner.requests.first?.environment["ACTIOND_VALUE"] == "1")
    wired.runner.complete(with: .exited(0))
    try wired.turn(until: "performed") { !wired.log.records(event: "performed").isEmpty }

    wired.daemon.shutdown(reason: "test")
    #expect(wired.runner.runs.count == 2, "the off started before the stop ended commands")
    let off = try #require(wired.runner.runs.last)
    #expect(off.request.environment["ACTIOND_VALUE"] == "0")
    #expect(off.request.environment["ACTIOND_GESTURE"] == "hold")
    #expect(wired.runner.terminateAllCount == 1)
    #expect(wired.runner.lastSpared == [off.id])
  }

  /// `devices` and `status` answer from the input source, the one record of bindings and
  /// bound devices: the device as announced, the button's devnode.
  @Test func socketRequestsReadTheInputSource() throws {
    let wired = try WiredDaemon()
    let client = try wired.connect()
    guard case .reply(let empty) = try wired.request(client, id: 1, #""request":"devices""#) else {
      Issue.record("no reply to devices")
      return
    }
    #expect(empty.result == .devices([]))
    wired.plugIn(at: wired.daemon.loop.now())
    guard case .reply(let listed) = try wired.request(client, id: 2, #""request":"devices""#) else {
      Issue.record("no reply to devices")
      return
    }
    #expect(
      listed.result
        == .devices([
          DeviceSnapshot(
            devnode: "/dev/input/event9", name: "test keys", id: "0000:0000", buttons: ["action"], grabbed: false)
        ]))
    guard case .reply(let status) = try wired.request(client, id: 3, #""request":"status""#),
      case .buttons(let buttons) = status.result
    else {
      Issue.record("no buttons in the reply to status")
      return
    }
    #expect(buttons.map(\.devices) == [["/dev/input/event9"]])
  }
}
