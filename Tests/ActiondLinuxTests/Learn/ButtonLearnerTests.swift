// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import Glibc
import Testing

@testable import ActiondLinux

/// `actiond learn`'s reading, on fake devices: the next key-down and nothing else.
@Suite struct ButtonLearnerTests {
  final class Harness {
    let loop = FakeInputLoop()
    let backend = FakeBackend()
    let learner: ButtonLearner
    var learned: [(InputDeviceInfo, UInt16)] = []
    var problems: [String] = []
    var added: [InputDeviceInfo] = []

    init() {
      learner = ButtonLearner(loop: loop, backend: backend) { path, error in
        InputNodeAccess(path: path, error: error?.name)
      }
      learner.onLearned = { [unowned self] in self.learned.append(($0, $1)) }
      learner.onProblem = { [unowned self] in self.problems.append($0) }
      learner.onAdded = { [unowned self] in self.added.append($0) }
    }

    func deliver(_ syspath: String, _ events: [EvdevEvent]) {
      let handle = backend.handle(syspath)!
      handle.pending += events
      loop.fire(handle.fileDescriptor)
    }
  }

  static func key(_ code: UInt16, _ value: Int32) -> EvdevEvent {
    .key(code: code, value: value, at: MonotonicInstant(nanoseconds: 1))
  }

  @Test func theFirstKeyDownOnAnyDeviceIsLearnedAndEverythingIsClosedAtOnce() throws {
    let h = Harness()
    let a = h.backend.plug(eventDevice(1, name: "a"), keys: [28, 148])
    let b = h.backend.plug(eventDevice(2, name: "b"), keys: [183], down: [])
    let nodes = try h.learner.start()
    #expect(nodes.map(\.path) == ["/dev/input/event1", "/dev/input/event2"] && nodes.allSatisfy(\.isReadable))
    #expect(h.learner.openDevices.count == 2)
    // On A: the release and autorepeat of the Enter held when learn started: not presses.
    h.deliver(a.syspath, [Self.key(28, 2), Self.key(28, 0)])
    #expect(h.learned.isEmpty)
    // On B: a key-down, then more events already in its buffer.
    h.deliver(b.syspath, [Self.key(183, 1), Self.key(183, 0), Self.key(184, 1)])
    #expect(h.learned.count == 1)
    #expect(h.learned.first?.0 == b && h.learned.first?.1 == 183)
    // Nothing after the one key was read; every device and the monitor are closed.
    #expect(h.backend.handle(b.syspath)?.pending.count == 2)
    #expect(h.backend.handle(a.syspath)?.isClosed == true && h.backend.handle(b.syspath)?.isClosed == true)
    #expect(h.backend.monitor.isClosed && h.loop.watchedFDs.isEmpty && h.learner.openDevices.isEmpty)
    // A key on A now is not read at all.
    h.backend.handle(a.syspath)!.pending = [Self.key(148, 1)]
    h.loop.fire(h.backend.handle(a.syspath)!.fileDescriptor)
    #expect(h.learned.count == 1 && h.backend.handle(a.syspath)!.pending.count == 1)
  }

  @Test func touchContactsAreNotPresses() throws {
    let h = Harness()
    let pad = h.backend.plug(eventDevice(3, name: "touchpad"), keys: [0x14a, 0x145, 0x110])
    _ = try h.learner.start()
    h.deliver(pad.syspath, [Self.key(0x14a, 1), Self.key(0x145, 1)])
    #expect(h.learned.isEmpty)
    h.deliver(pad.syspath, [Self.key(0x110, 1)])  // BTN_LEFT is a button
    #expect(h.learned.map(\.1) == [0x110])
  }

  @Test func aDevicePluggedInWhileWaitingCounts() throws {
    let h = Harness()
    h.backend.plug(eventDevice(1), keys: [28])
    _ = try h.learner.start()
    let pedal = eventDevice(7, name: "pedal")
    h.backend.specs[pedal.syspath] = FakeBackend.Spec(keys: [0x100])
    h.backend.monitor.pending = [DeviceChange(action: .add, device: pedal)]
    h.loop.fire(h.backend.monitor.fileDescriptor)
    #expect(h.learner.openDevices.contains(pedal.syspath))
    #expect(h.added == [pedal])
    h.deliver(pedal.syspath, [Self.key(0x100, 1)])
    #expect(h.learned.first?.0 == pedal && h.learned.first?.1 == 0x100)
  }

  @Test func aRemovedDeviceIsClosedAndADeniedOneIsReported() throws {
    let h = Harness()
    let a = h.backend.plug(eventDevice(1), keys: [28])
    let locked = h.backend.plug(eventDevice(2), keys: [28])
    h.backend.specs[locked.syspath]?.openError = Errno(EACCES)
    let nodes = try h.learner.start()
    #expect(nodes.map(\.error) == [nil, "EACCES"])
    #expect(h.learner.openDevices == [a.syspath])
    let late = eventDevice(3)
    h.backend.specs[late.syspath] = FakeBackend.Spec(keys: [], openError: Errno(EACCES))
    h.backend.monitor.pending = [DeviceChange(action: .add, device: late), DeviceChange(action: .remove, device: a)]
    h.loop.fire(h.backend.monitor.fileDescriptor)
    #expect(h.learner.openDevices.isEmpty && h.added.isEmpty)
    // Seen: what is present, readable or not (for links another device shares).
    #expect(h.learner.seenDevices.keys.sorted() == [locked.syspath, late.syspath])
    #expect(h.backend.handle(a.syspath)?.isClosed == true)
    #expect(h.problems == ["/dev/input/event3 (test keys) appeared but cannot be read: EACCES (Permission denied)"])
  }

  @Test func nothingReadableLeavesNothingOpen() throws {
    let h = Harness()
    let locked = h.backend.plug(eventDevice(1), keys: [28])
    h.backend.specs[locked.syspath]?.openError = Errno(EACCES)
    let nodes = try h.learner.start()
    #expect(h.learner.openDevices.isEmpty && nodes.map(\.isDenied) == [true])
    h.learner.stop()
    #expect(h.loop.watchedFDs.isEmpty)
  }
}
