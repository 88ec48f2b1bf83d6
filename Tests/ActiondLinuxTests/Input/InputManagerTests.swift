// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import Glibc
import Testing

private let keyProg1: UInt16 = 148
private let keyProg2: UInt16 = 149

/// A manager on fakes, recording what it reports.
private final class Harness {
  let loop = FakeInputLoop()
  let backend = FakeBackend()
  let manager: InputManager
  var events: [String] = []
  var raw: [InputEvent] = []

  init() {
    manager = InputManager(loop: loop, backend: backend)
    manager.onEvent = { [unowned self] event in
      self.raw.append(event)
      self.events.append(describe(event))
    }
  }

  func take() -> [String] {
    defer { events = [] }
    return events
  }

  /// Starts buttons "a" (KEY_PROG1) and "b" (KEY_PROG2), both on the device named "test
  /// keys", and takes what that reported.
  func startTwoButtons() throws {
    try manager.start([
      ButtonBinding(name: "a", keyCode: keyProg1, matches: named("test keys")),
      ButtonBinding(name: "b", keyCode: keyProg2, matches: named("test keys")),
    ])
    _ = take()
  }

  func udev(_ action: DeviceChangeAction, _ info: InputDeviceInfo, result: MonitorReadResult = .drained) {
    backend.monitor.pending.append(DeviceChange(action: action, device: info))
    backend.monitor.result = result
    loop.fire(backend.monitor.fileDescriptor)
  }
}

private func tagged(_ tag: String) -> (InputDeviceInfo) -> Bool { { $0.tags.contains(tag) } }
private func named(_ name: String) -> (InputDeviceInfo) -> Bool { { $0.name == name } }
private func at(_ ms: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: ms * 1_000_000) }

@Suite struct InputManagerTests {
  @Test func aDeviceMatchedByTwoButtonsIsOpenedOnce() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3, tags: ["actiond"]), keys: [keyProg1, keyProg2])
    try h.manager.start([
      ButtonBinding(name: "action", keyCode: keyProg1, matches: tagged("actiond")),
      ButtonBinding(name: "second", keyCode: keyProg2, matches: tagged("actiond")),
    ])
    #expect(h.backend.openCount(dev.syspath) == 1)
    #expect(
      h.take() == [
        "bound /dev/input/event3 [action, second]", "appeared action on /dev/input/event3 up @1000ms",
        "appeared second on /dev/input/event3 up @1000ms",
      ])
    let fd = try #require(h.backend.handle(dev.syspath)).fileDescriptor
    #expect(h.loop.watchedFDs == [fd, 500].sorted())
    #expect(h.manager.device(forButton: "action")?.syspath == dev.syspath)
    #expect(h.manager.device(forButton: "second")?.syspath == dev.syspath)
    #expect(h.manager.device(forButton: "third") == nil)
  }

  @Test func keyEventsAreRoutedByCodeWithKernelTimestamps() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3), keys: [keyProg1, keyProg2, 30])
    try h.startTwoButtons()
    let handle = try #require(h.backend.handle(dev.syspath))
    handle.pending = [
      .key(code: keyProg1, value: 1, at: at(5)), .key(code: 30, value: 1, at: at(6)),
      .key(code: keyProg2, value: 0, at: at(7)), .key(code: keyProg1, value: 2, at: at(8)),
    ]
    h.loop.fire(handle.fileDescriptor)
    #expect(h.take() == ["key a=1 @5ms", "key b=0 @7ms", "key a=2 @8ms"])
  }

  @Test func aKeyAlreadyDownAppearsDown() throws {
    let h = Harness()
    h.backend.plug(eventDevice(3), keys: [keyProg1], down: [keyProg1])
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: named("test keys"))])
    #expect(h.take() == ["bound /dev/input/event3 [a]", "appeared a on /dev/input/event3 down @1000ms"])
  }

  @Test func aDeviceWithoutTheKeyIsRefusedOnceAndClosed() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3, name: "AT keyboard"), keys: [30])
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: named("AT keyboard"))])
    #expect(h.take() == ["refused a on /dev/input/event3"])
    guard case .refused(_, _, let reason) = h.raw.first else { Issue.record("no refusal"); return }
    #expect(reason == "/dev/input/event3 (AT keyboard) has no key with code 148")
    #expect(h.backend.handle(dev.syspath)?.isClosed == true)
    #expect(h.manager.openDevicePaths.isEmpty)
    #expect(h.loop.watchedFDs == [500])
    h.udev(.change, dev)
    #expect(h.take().isEmpty)
    #expect(h.backend.openCount(dev.syspath) == 1)
  }

  /// The manager is the one record of bound devices: `boundDevices` lists each as it was
  /// announced (its buttons by name), and `deviceUnbound` repeats that announcement even
  /// after a reload renamed the buttons.
  @Test func boundDevicesAreWhatWasAnnounced() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3, tags: ["actiond"]), keys: [keyProg1, keyProg2])
    #expect(h.manager.boundDevices.isEmpty)
    try h.manager.start([
      ButtonBinding(name: "action", keyCode: keyProg1, matches: tagged("actiond")),
      ButtonBinding(name: "second", keyCode: keyProg2, grab: true, matches: tagged("actiond")),
    ])
    let announced = BoundInputDevice(info: dev, buttons: ["action", "second"], grabbed: true)
    #expect(h.manager.boundDevices == [announced])
    // A button that no longer matches anything closes the device; the removal is the
    // device as announced, under the names it was announced with.
    h.manager.reconfigure([ButtonBinding(name: "renamed", keyCode: keyProg1, matches: named("nothing"))])
    #expect(h.manager.boundDevices.isEmpty)
    let unbound = h.raw.compactMap { event -> BoundInputDevice? in
      if case .deviceUnbound(let device, .noLongerMatched) = event { return device }
      return nil
    }
    #expect(unbound == [announced])
  }

  @Test func aButtonWithoutDeviceWaitsQuietlyAndBindsWhenItAppears() throws {
    let h = Harness()
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: tagged("actiond"))])
    #expect(h.take().isEmpty)
    #expect(h.manager.device(forButton: "a") == nil)
    h.backend.plug(eventDevice(4, name: "other"), keys: [keyProg1])
    h.udev(.add, eventDevice(4, name: "other"))
    #expect(h.take().isEmpty)
    #expect(h.manager.openDevicePaths.isEmpty, "a device no button matches is never opened")
    let dev = h.backend.plug(eventDevice(5, tags: ["actiond"]), keys: [keyProg1])
    h.loop.clock = at(2000)
    h.udev(.add, dev)
    #expect(h.take() == ["bound /dev/input/event5 [a]", "appeared a on /dev/input/event5 up @2000ms"])
    #expect(h.manager.knownDevices.map(\.syspath) == [eventDevice(4).syspath, dev.syspath])
  }

  @Test func unplugLosesTheButtonAndReplugRebindsIt() throws {
    let h = Harness()
    let first = h.backend.plug(eventDevice(3, tags: ["actiond"]), keys: [keyProg1])
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: tagged("actiond"))])
    _ = h.take()
    let handle = try #require(h.backend.handle(first.syspath))
    h.loop.clock = at(3000)
    h.backend.present = []
    h.udev(.remove, InputDeviceInfo(syspath: first.syspath, devnode: first.devnode, name: ""))
    #expect(h.take() == ["lost a @3000ms", "unbound /dev/input/event3 removed"])
    #expect(handle.isClosed)
    #expect(h.loop.watchedFDs == [500])
    #expect(h.manager.knownDevices.isEmpty)
    // The replugged device gets a new input number, hence a new syspath and node.
    let again = h.backend.plug(eventDevice(7, tags: ["actiond"]), keys: [keyProg1])
    h.udev(.add, again)
    #expect(h.take() == ["bound /dev/input/event7 [a]", "appeared a on /dev/input/event7 up @3000ms"])
  }

  @Test func aReadFailureUnbindsAndForgetsTheDeviceUntilUdevReportsItAgain() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3), keys: [keyProg1])
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: named("test keys"))])
    _ = h.take()
    let handle = try #require(h.backend.handle(dev.syspath))
    handle.pending = [.key(code: keyProg1, value: 1, at: at(10))]
    handle.failure = .noSuchDevice
    h.loop.fire(handle.fileDescriptor, hangup: true)
    #expect(
      h.take() == ["key a=1 @10ms", "lost a @1000ms", "unbound /dev/input/event3 read failed: \(Errno.noSuchDevice)"])
    #expect(handle.isClosed)
    #expect(h.manager.knownDevices.isEmpty, "not reopened in a loop")
    #expect(h.backend.openCount(dev.syspath) == 1)
    h.udev(.change, dev)
    #expect(h.backend.openCount(dev.syspath) == 2)
    #expect(h.take() == ["bound /dev/input/event3 [a]", "appeared a on /dev/input/event3 up @1000ms"])
  }

  @Test func aHangupWithNothingToReadStillUnbinds() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3), keys: [keyProg1])
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: named("test keys"))])
    _ = h.take()
    h.loop.fire(try #require(h.backend.handle(dev.syspath)).fileDescriptor, hangup: true)
    #expect(h.take() == ["lost a @1000ms", "unbound /dev/input/event3 read failed: hang-up"])
  }

  @Test func aChangeEventReevaluatesMatching() throws {
    let h = Harness()
    let plain = h.backend.plug(eventDevice(3), keys: [keyProg1])
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: tagged("actiond"))])
    #expect(h.take().isEmpty)
    var tagged = plain
    tagged.tags = ["actiond"]
    h.udev(.change, tagged)
    #expect(h.take() == ["bound /dev/input/event3 [a]", "appeared a on /dev/input/event3 up @1000ms"])
    #expect(h.manager.device(forButton: "a")?.tags == ["actiond"])
    h.udev(.change, plain)
    #expect(h.take() == ["lost a @1000ms", "unbound /dev/input/event3 no longer matched by any button"])
    #expect(h.backend.handle(plain.syspath)?.isClosed == true)
  }

  @Test func theDeviceIsGrabbedWhileAnyBoundButtonWantsIt() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3), keys: [keyProg1, keyProg2])
    try h.manager.start([
      ButtonBinding(name: "a", keyCode: keyProg1, grab: false, matches: named("test keys")),
      ButtonBinding(name: "b", keyCode: keyProg2, grab: true, matches: named("test keys")),
    ])
    let handle = try #require(h.backend.handle(dev.syspath))
    #expect(handle.isGrabbed)
    #expect(h.take().first == "bound /dev/input/event3 [a, b] grabbed")
    h.manager.reconfigure([ButtonBinding(name: "a", keyCode: keyProg1, grab: false, matches: named("test keys"))])
    #expect(!handle.isGrabbed)
    #expect(h.take() == ["bound /dev/input/event3 [a]", "appeared a on /dev/input/event3 up @1000ms"])
    #expect(h.backend.openCount(dev.syspath) == 1, "a reload keeps bound devices open")
  }

  @Test func aReloadKeepsDevicesThatStayBoundAndClosesTheRest() throws {
    let h = Harness()
    let a = h.backend.plug(eventDevice(3, name: "pedal"), keys: [keyProg1])
    let b = h.backend.plug(eventDevice(4, name: "board"), keys: [keyProg2], down: [keyProg2])
    try h.manager.start([
      ButtonBinding(name: "pedal", keyCode: keyProg1, matches: named("pedal")),
      ButtonBinding(name: "board", keyCode: keyProg2, matches: named("board")),
    ])
    _ = h.take()
    h.manager.reconfigure([ButtonBinding(name: "board", keyCode: keyProg2, matches: named("board"))])
    // event4 still serves "board" alone: it is not announced bound again.
    #expect(
      h.take() == [
        "unbound /dev/input/event3 no longer matched by any button", "appeared board on /dev/input/event4 down @1000ms",
      ])
    #expect(h.backend.handle(a.syspath)?.isClosed == true)
    #expect(h.backend.handle(b.syspath)?.isClosed == false)
    #expect(h.backend.openCount(b.syspath) == 1)
    // Events go on reaching the button.
    let handle = try #require(h.backend.handle(b.syspath))
    handle.pending = [.key(code: keyProg2, value: 0, at: at(20))]
    h.loop.fire(handle.fileDescriptor)
    #expect(h.take() == ["key board=0 @20ms"])
  }

  @Test func aGrabFailureIsReportedOnceAndTheButtonStaysBound() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3), keys: [keyProg1])
    h.backend.specs[dev.syspath]?.grabError = Errno(EBUSY)
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, grab: true, matches: named("test keys"))])
    #expect(
      h.take() == [
        "failed /dev/input/event3: cannot grab (another program may hold it; events can be missed): \(Errno(EBUSY))",
        "bound /dev/input/event3 [a]", "appeared a on /dev/input/event3 up @1000ms",
      ])
    #expect(h.manager.device(forButton: "a")?.syspath == dev.syspath)
    h.udev(.add, eventDevice(9, name: "unrelated"))
    #expect(h.take().isEmpty, "not reported again at every udev event")
    // Once the other program lets go, the next udev event takes the grab.
    let handle = try #require(h.backend.handle(dev.syspath))
    handle.grabError = nil
    h.udev(.add, eventDevice(10, name: "unrelated"))
    #expect(handle.isGrabbed)
    #expect(h.take() == ["bound /dev/input/event3 [a] grabbed"])
  }

  @Test func aReadOnlyDeviceIsReportedAsSuch() throws {
    let h = Harness()
    h.backend.plug(eventDevice(3), keys: [keyProg1], readOnly: true)
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: named("test keys"))])
    #expect(h.take().first == "bound /dev/input/event3 [a] read-only")
  }

  @Test func anOpenFailureIsReportedOnceAndRetriedAfterAChange() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3), keys: [keyProg1])
    h.backend.specs[dev.syspath]?.openError = .permissionDenied
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: named("test keys"))])
    #expect(h.take() == ["failed /dev/input/event3: cannot open: \(Errno.permissionDenied)"])
    h.udev(.add, eventDevice(9, name: "unrelated"))
    #expect(h.take().isEmpty)
    h.backend.specs[dev.syspath]?.openError = nil
    h.udev(.change, dev)
    #expect(h.take() == ["bound /dev/input/event3 [a]", "appeared a on /dev/input/event3 up @1000ms"])
  }

  @Test func aFailedWatchClosesTheDeviceAndReportsIt() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3), keys: [keyProg1])
    try h.manager.start([])
    h.loop.failNextWatch = .invalidArgument
    h.manager.reconfigure([ButtonBinding(name: "a", keyCode: keyProg1, matches: named("test keys"))])
    #expect(h.take() == ["failed /dev/input/event3: cannot watch its fd: \(Errno.invalidArgument)"])
    #expect(h.backend.handle(dev.syspath)?.isClosed == true)
  }

  @Test func aReloadKeepsUnchangedButtonsBoundSilentlyWhereverTheyMoved() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3), keys: [keyProg1, keyProg2], down: [keyProg2])
    try h.startTwoButtons()
    // "b" is unchanged and moves to the front; "a" changed (it is re-announced).
    h.manager.reconfigure(
      [
        ButtonBinding(name: "b", keyCode: keyProg2, matches: named("test keys")),
        ButtonBinding(name: "a", keyCode: keyProg1, grab: true, matches: named("test keys")),
      ], keeping: ["b"])
    #expect(
      h.take() == ["bound /dev/input/event3 [b, a] grabbed", "appeared a on /dev/input/event3 up @1000ms"],
      "no appeared for the kept button: its press in progress goes on")
    #expect(h.manager.device(forButton: "b")?.syspath == dev.syspath)
    let handle = try #require(h.backend.handle(dev.syspath))
    handle.pending = [.key(code: keyProg2, value: 0, at: at(20))]
    h.loop.fire(handle.fileDescriptor)
    #expect(h.take() == ["key b=0 @20ms"])
  }

  /// A button is its name: a reload that only reorders the buttons changes nothing on the
  /// device; a renamed button is a new one (the device is announced again under the new
  /// name, which then appears); a changed key re-appears on the same device.
  @Test func aReloadRebindsByNameWhenButtonsMoveAreRenamedOrChangeTheirKey() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3), keys: [keyProg1, keyProg2, 30, 31])
    func binding(_ name: String, _ code: UInt16) -> ButtonBinding {
      ButtonBinding(name: name, keyCode: code, matches: named("test keys"))
    }
    try h.manager.start([binding("a", keyProg1), binding("b", keyProg2), binding("c", 30)])
    _ = h.take()
    let handle = try #require(h.backend.handle(dev.syspath))
    func press(_ code: UInt16) -> [String] {
      handle.pending = [.key(code: code, value: 1, at: at(5))]
      h.loop.fire(handle.fileDescriptor)
      return h.take()
    }

    h.manager.reconfigure(
      [binding("c", 30), binding("a", keyProg1), binding("b", keyProg2)], keeping: ["a", "b", "c"])
    #expect(h.take().isEmpty, "moving buttons in the list is no change to them or their device")
    #expect(press(keyProg1) == ["key a=1 @5ms"])
    #expect(press(30) == ["key c=1 @5ms"])

    h.manager.reconfigure([binding("c", 30), binding("a", keyProg1), binding("bee", keyProg2)], keeping: ["a", "c"])
    #expect(h.take() == ["bound /dev/input/event3 [c, a, bee]", "appeared bee on /dev/input/event3 up @1000ms"])
    #expect(h.manager.boundDevices.map(\.buttons) == [["c", "a", "bee"]], "`devices` shows the new name")
    #expect(h.manager.device(forButton: "b") == nil)
    #expect(h.manager.device(forButton: "bee")?.syspath == dev.syspath)
    #expect(press(keyProg2) == ["key bee=1 @5ms"])

    h.manager.reconfigure([binding("c", 30), binding("a", 31), binding("bee", keyProg2)], keeping: ["c", "bee"])
    #expect(h.take() == ["appeared a on /dev/input/event3 up @1000ms"])
    #expect(press(keyProg1).isEmpty, "the old key is no longer the button's")
    #expect(press(31) == ["key a=1 @5ms"])
    #expect(h.backend.openCount(dev.syspath) == 1)
  }

  @Test func keysTheKernelReleasedAreReportedAsSuchNotAsAResync() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3), keys: [keyProg1, keyProg2])
    try h.startTwoButtons()
    let handle = try #require(h.backend.handle(dev.syspath))
    handle.pending = [.key(code: keyProg1, value: 1, at: at(5)), .releasedByKernel(at: at(9))]
    handle.failure = .noSuchDevice
    h.loop.fire(handle.fileDescriptor)
    #expect(
      h.take() == [
        "key a=1 @5ms", "released-by-kernel a @9ms", "released-by-kernel b @9ms", "lost a @1000ms", "lost b @1000ms",
        "unbound /dev/input/event3 read failed: \(Errno.noSuchDevice)",
      ])
  }

  @Test func droppedEventsResyncEveryButtonOfTheDevice() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3), keys: [keyProg1, keyProg2])
    try h.startTwoButtons()
    let handle = try #require(h.backend.handle(dev.syspath))
    handle.pending = [.key(code: keyProg1, value: 1, at: at(5)), .resynced(at: at(9))]
    handle.downAfterResync = [keyProg2]
    h.loop.fire(handle.fileDescriptor)
    #expect(h.take() == ["key a=1 @5ms", "resync a up @9ms", "resync b down @9ms"])
  }

  @Test func drainingAButtonDeliversItsPendingEventsBeforeReturning() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3), keys: [keyProg1])
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: named("test keys"))])
    _ = h.take()
    let handle = try #require(h.backend.handle(dev.syspath))
    handle.pending = [.key(code: keyProg1, value: 0, at: at(599))]
    h.manager.drain(button: "a")
    #expect(h.take() == ["key a=0 @599ms"])
    h.manager.drain(button: "b")  // no such button: nothing happens
    h.manager.drain(button: "")
    #expect(handle.drainCount == 1)
    handle.failure = .noSuchDevice
    h.manager.drain(button: "a")
    #expect(h.take() == ["lost a @1000ms", "unbound /dev/input/event3 read failed: \(Errno.noSuchDevice)"])
    h.manager.drain(button: "a")  // unbound now
    #expect(handle.drainCount == 2)
  }

  @Test func aSecondMatchingDeviceIsIgnoredUntilTheFirstGoes() throws {
    let h = Harness()
    let first = h.backend.plug(eventDevice(3, tags: ["actiond"]), keys: [keyProg1])
    let second = h.backend.plug(eventDevice(4, tags: ["actiond"]), keys: [keyProg1])
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: tagged("actiond"))])
    #expect(
      h.take() == [
        "extra a on /dev/input/event4 (bound to /dev/input/event3)", "bound /dev/input/event3 [a]",
        "appeared a on /dev/input/event3 up @1000ms",
      ])
    #expect(h.backend.openCount(second.syspath) == 0)
    h.udev(.remove, first)
    #expect(
      h.take() == [
        "lost a @1000ms", "unbound /dev/input/event3 removed", "bound /dev/input/event4 [a]",
        "appeared a on /dev/input/event4 up @1000ms",
      ])
  }

  @Test func nodesWithoutDevnodeAreNeverOpened() throws {
    let h = Harness()
    h.backend.plug(
      InputDeviceInfo(syspath: "/sys/devices/virtual/input/input3", devnode: nil, name: "test keys"), keys: [keyProg1])
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: named("test keys"))])
    #expect(h.take().isEmpty)
    #expect(h.backend.opened.isEmpty)
  }

  @Test func shutdownUngrabsAndClosesEverything() throws {
    let h = Harness()
    let a = h.backend.plug(eventDevice(3, name: "pedal"), keys: [keyProg1])
    let b = h.backend.plug(eventDevice(4, name: "board"), keys: [keyProg2])
    try h.manager.start([
      ButtonBinding(name: "pedal", keyCode: keyProg1, grab: true, matches: named("pedal")),
      ButtonBinding(name: "board", keyCode: keyProg2, matches: named("board")),
    ])
    _ = h.take()
    let handleA = try #require(h.backend.handle(a.syspath))
    #expect(handleA.isGrabbed)
    h.manager.shutdown()
    #expect(h.take() == ["unbound /dev/input/event3 shutting down", "unbound /dev/input/event4 shutting down"])
    #expect(!handleA.isGrabbed && handleA.isClosed)
    #expect(h.backend.handle(b.syspath)?.isClosed == true)
    #expect(h.backend.monitor.isClosed)
    #expect(h.loop.watchedFDs.isEmpty)
    #expect(h.manager.device(forButton: "pedal") == nil)
  }

  @Test func aMonitorOverflowEnumeratesAgain() throws {
    let h = Harness()
    let a = h.backend.plug(eventDevice(3), keys: [keyProg1])
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: named("test keys"))])
    _ = h.take()
    // The removal of event3 and the arrival of event5 were in the lost messages.
    h.backend.present = []
    let b = h.backend.plug(eventDevice(5), keys: [keyProg1])
    h.backend.monitor.result = .overflowed
    h.loop.fire(h.backend.monitor.fileDescriptor)
    #expect(
      h.take() == [
        "discovery: udev monitor overflowed; devices enumerated again", "lost a @1000ms",
        "unbound /dev/input/event3 removed", "bound /dev/input/event5 [a]",
        "appeared a on /dev/input/event5 up @1000ms",
      ])
    #expect(h.backend.handle(a.syspath)?.isClosed == true)
    #expect(h.manager.knownDevices.map(\.syspath) == [b.syspath])
  }

  @Test func aFailedMonitorIsReplaced() throws {
    let h = Harness()
    try h.manager.start([])
    let old = h.backend.monitor
    old.result = .failed(Errno(EIO))
    h.loop.fire(old.fileDescriptor)
    #expect(old.isClosed)
    #expect(h.backend.monitors.count == 2)
    #expect(h.take() == ["discovery: udev monitor failed (\(Errno(EIO))); devices enumerated again"])
    #expect(h.loop.watchedFDs == [500])
    h.backend.monitorError = .permissionDenied
    h.loop.fire(h.backend.monitor.fileDescriptor, hangup: true)
    #expect(
      h.take() == [
        "discovery: udev monitor failed (hang-up); hotplug is no longer followed: \(Errno.permissionDenied)"
      ])
    #expect(h.loop.watchedFDs.isEmpty)
  }

  @Test func startFailuresLeaveNothingBehind() throws {
    let h = Harness()
    h.backend.enumerateError = .permissionDenied
    #expect(throws: Errno.permissionDenied) { try h.manager.start([]) }
    #expect(h.backend.monitor.isClosed)
    #expect(h.loop.watchedFDs.isEmpty)
    h.backend.monitorError = .notSupported
    #expect(throws: Errno.notSupported) { try h.manager.start([]) }
    h.backend.monitorError = nil
    h.backend.enumerateError = nil
    h.loop.failNextWatch = .invalidArgument
    #expect(throws: Errno.invalidArgument) { try h.manager.start([]) }
    #expect(h.backend.monitor.isClosed)
    try h.manager.start([])
    #expect(h.loop.watchedFDs == [500])
  }

  @Test func aHandlerMayShutDownWhileEventsAreBeingRead() throws {
    let h = Harness()
    let dev = h.backend.plug(eventDevice(3), keys: [keyProg1])
    try h.manager.start([ButtonBinding(name: "a", keyCode: keyProg1, matches: named("test keys"))])
    _ = h.take()
    let handle = try #require(h.backend.handle(dev.syspath))
    handle.pending = [.key(code: keyProg1, value: 1, at: at(1)), .key(code: keyProg1, value: 0, at: at(2))]
    handle.afterEvent = { [unowned h] in h.manager.shutdown() }
    h.loop.fire(handle.fileDescriptor)
    #expect(h.take() == ["key a=1 @1ms", "unbound /dev/input/event3 shutting down"])
    #expect(handle.isClosed)
  }
}
