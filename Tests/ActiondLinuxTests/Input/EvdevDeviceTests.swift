// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CEvdev
import Glibc
import Testing

@testable import ActiondLinux

/// Replays `libevdev_next_event` results and records the read flags it was called with.
private final class ScriptedReads {
  var script: [(Int32, input_event)]
  var flags: [String] = []

  init(_ script: [(Int32, input_event)]) { self.script = script }

  func next(_ event: inout input_event, _ flag: UInt32) -> Int32 {
    flags.append(flag == LIBEVDEV_READ_FLAG_SYNC.rawValue ? "sync" : "normal")
    guard !script.isEmpty else {
      Issue.record("read past the end of the script")
      return -EAGAIN
    }
    let (rc, scripted) = script.removeFirst()
    event = scripted
    return rc
  }
}

private func event(_ type: Int32, _ code: Int32, _ value: Int32, sec: Int = 0, usec: Int = 0) -> input_event {
  input_event(time: timeval(tv_sec: sec, tv_usec: usec), type: UInt16(type), code: UInt16(code), value: value)
}

private let success = Int32(LIBEVDEV_READ_STATUS_SUCCESS.rawValue)
private let sync = Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue)
private let none = event(0, 0, 0)

@Suite struct EvdevDeviceTests {
  /// On unplug the kernel releases held keys itself and ends that frame with SYN_REPORT
  /// value 1: released by the kernel (the device is going away), never a user's release
  /// that would be a short press, and not a resync either (nothing was dropped).
  @Test func kernelSynthesizedReleasesAreReleasedByTheKernel() {
    let reads = ScriptedReads([
      (success, event(EV_KEY, KEY_PROG1, 1, sec: 1)),
      (success, event(EV_SYN, SYN_REPORT, 0, sec: 1)),
      (success, event(EV_KEY, KEY_PROG1, 0, sec: 1, usec: 200_000)),
      (success, event(EV_SYN, SYN_REPORT, 1, sec: 1, usec: 200_000)),
      (-ENODEV, none),
    ])
    var seen: [EvdevEvent] = []
    let result = EvdevDevice.drain(next: reads.next, isClosed: { false }) { seen.append($0) }
    #expect(result == .lost(Errno(ENODEV)))
    #expect(
      seen == [
        .key(code: UInt16(KEY_PROG1), value: 1, at: MonotonicInstant(nanoseconds: 1_000_000_000)),
        .releasedByKernel(at: MonotonicInstant(nanoseconds: 1_200_000_000)),
      ])
  }

  /// Real releases (SYN_REPORT value 0) keep their own timestamps and order, also when a
  /// frame releases more keys than are kept back and when a read ends mid-frame.
  @Test func realReleasesAreDeliveredInOrder() {
    var script: [(Int32, input_event)] = []
    for code in 0..<6 { script.append((success, event(EV_KEY, KEY_A + Int32(code), 0, sec: 2, usec: code))) }
    script.append((success, event(EV_SYN, SYN_REPORT, 0, sec: 2, usec: 9)))
    script.append((success, event(EV_KEY, KEY_B, 0, sec: 3)))
    script.append((-EAGAIN, none))
    let reads = ScriptedReads(script)
    var seen: [EvdevEvent] = []
    _ = EvdevDevice.drain(next: reads.next, isClosed: { false }) { seen.append($0) }
    let expected: [EvdevEvent] =
      (0..<6).map {
        .key(
          code: UInt16(KEY_A + Int32($0)), value: 0, at: MonotonicInstant(nanoseconds: 2_000_000_000 + Int64($0) * 1000)
        )
      } + [.key(code: UInt16(KEY_B), value: 0, at: MonotonicInstant(nanoseconds: 3_000_000_000))]
    #expect(seen == expected)
  }

  @Test func keysAreDeliveredWithTheirTimestampsAndDroppedEventsAreResynced() {
    let reads = ScriptedReads([
      (success, event(EV_KEY, KEY_PROG1, 1, sec: 1, usec: 500)),
      (success, event(EV_MSC, MSC_SCAN, 0x70, sec: 1, usec: 500)),
      (success, event(EV_SYN, SYN_REPORT, 0, sec: 1, usec: 500)),
      (sync, event(EV_SYN, SYN_DROPPED, 0, sec: 2)),
      // The state delta libevdev synthesizes: never reported as a real release.
      (sync, event(EV_KEY, KEY_PROG1, 0, sec: 2)),
      (sync, event(EV_SYN, SYN_REPORT, 0, sec: 2)),
      (-EAGAIN, none),
      (-EINTR, none),
      (success, event(EV_KEY, KEY_PROG2, 1, sec: 3)),
      (-EAGAIN, none),
    ])
    var seen: [EvdevEvent] = []
    let result = EvdevDevice.drain(next: reads.next, isClosed: { false }) { seen.append($0) }
    #expect(result == .drained)
    #expect(
      seen == [
        .key(code: UInt16(KEY_PROG1), value: 1, at: MonotonicInstant(nanoseconds: 1_000_500_000)),
        .resynced(at: MonotonicInstant(nanoseconds: 2_000_000_000)),
        .key(code: UInt16(KEY_PROG2), value: 1, at: MonotonicInstant(nanoseconds: 3_000_000_000)),
      ])
    #expect(
      reads.flags == ["normal", "normal", "normal", "normal", "sync", "sync", "sync", "normal", "normal", "normal"])
  }

  @Test func aReadErrorReportsTheDeviceLostAfterWhatWasRead() {
    let reads = ScriptedReads([
      (success, event(EV_KEY, KEY_PROG1, 0, sec: 4)),
      (-ENODEV, none),
    ])
    var seen: [EvdevEvent] = []
    let result = EvdevDevice.drain(next: reads.next, isClosed: { false }) { seen.append($0) }
    #expect(result == .lost(.noSuchDevice))
    #expect(seen == [.key(code: UInt16(KEY_PROG1), value: 0, at: MonotonicInstant(nanoseconds: 4_000_000_000))])
  }

  @Test func aLostDeviceDuringResyncIsStillLost() {
    let reads = ScriptedReads([(sync, event(EV_SYN, SYN_DROPPED, 0, sec: 2)), (-EIO, none)])
    let result = EvdevDevice.drain(next: reads.next, isClosed: { false }) { _ in Issue.record("no event expected") }
    #expect(result == .lost(Errno(EIO)))
  }

  @Test func readingStopsAsSoonAsTheSinkClosesTheDevice() {
    let reads = ScriptedReads([
      (success, event(EV_KEY, KEY_PROG1, 1, sec: 1)),
      (success, event(EV_KEY, KEY_PROG1, 0, sec: 2)),
    ])
    var closed = false
    var seen = 0
    let result = EvdevDevice.drain(next: reads.next, isClosed: { closed }) { _ in
      seen += 1
      closed = true
    }
    #expect(result == .drained)
    #expect(seen == 1)
    #expect(reads.script.count == 1, "libevdev is not touched after close")
  }

  @Test func openingAMissingNodeNamesThePathAndTheErrno() {
    #expect {
      try EvdevDevice(path: "/dev/input/event-missing-\(getpid())")
    } throws: { error in
      guard let error = error as? EvdevOpenError else { return false }
      return error.errno == .notFound && error.step == "open"
        && error.description == "/dev/input/event-missing-\(getpid()): open: \(Errno.notFound)"
    }
  }

  @Test func openingSomethingThatIsNotAnEvdevNodeIsRefused() {
    #expect {
      try EvdevDevice(path: "/dev/null")
    } throws: { error in
      guard let error = error as? EvdevOpenError else { return false }
      return error.step == "libevdev_new_from_fd" && error.description.hasPrefix("/dev/null: not an evdev device")
    }
  }
}
