// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CEvdev
import Glibc

/// What the kernel delivers to a uinput device's own descriptor: every `EV_LED` change a
/// process writes to the device's evdev node (or the LED class device `inputN::capslock`
/// sets) arrives there as an event, stamped by uinput with CLOCK_MONOTONIC when the input
/// core passed it to the device. The input core passes a change only: writing an LED's
/// current value delivers nothing.
///
/// Printed lines: `led SEC.USEC LED_CAPSL 1` for an LED, `snd SEC.USEC SND_TONE 1000` for a
/// sound, `ff SEC.USEC effect=ID 1` for an effect played (1) or stopped (0), and
/// `received SEC.USEC TYPE CODE VALUE` for anything else the device is sent.
enum Inbox {
  /// The line for one delivered event.
  static func line(type: UInt32, code: UInt32, value: Int32, at stamp: MonotonicInstant) -> String {
    if type == UInt32(EV_LED) {
      return "led \(formatTimestamp(stamp)) \(Names.codeName(type: type, code: code)) \(value)"
    }
    if type == UInt32(EV_SND) {
      return "snd \(formatTimestamp(stamp)) \(Names.codeName(type: type, code: code)) \(value)"
    }
    if type == UInt32(EV_FF) && code < UInt32(FF_EFFECT_MIN) {
      return "ff \(formatTimestamp(stamp)) effect=\(code) \(value)"
    }
    return
      "received \(formatTimestamp(stamp)) \(Names.typeName(type)) \(Names.codeName(type: type, code: code)) \(value)"
  }

  /// Answers a force-feedback request of the kernel (a process uploaded or removed an
  /// effect on the device's evdev node and waits for the answer): always success. The line:
  /// `ff-upload SEC.USEC effect=ID FF_RUMBLE strong=S weak=W length=MS` or
  /// `ff-erase SEC.USEC effect=ID`.
  static func answer(fd: Int32, request code: UInt16, id: UInt32, at stamp: MonotonicInstant) -> String {
    switch Int32(code) {
    case UI_FF_UPLOAD:
      var effect = ff_effect()
      guard actiond_testdev_answer_ff_upload(fd, id, &effect) == 0 else {
        return "ff-upload \(formatTimestamp(stamp)) failed errno=\(errno)"
      }
      let type = Names.codeName(type: UInt32(EV_FF), code: UInt32(effect.type))
      var details = ""
      if effect.type == UInt16(FF_RUMBLE) {
        details = " strong=\(effect.u.rumble.strong_magnitude) weak=\(effect.u.rumble.weak_magnitude)"
      }
      return "ff-upload \(formatTimestamp(stamp)) effect=\(effect.id) \(type)\(details) length=\(effect.replay.length)"
    case UI_FF_ERASE:
      var effectID: UInt32 = 0
      guard actiond_testdev_answer_ff_erase(fd, id, &effectID) == 0 else {
        return "ff-erase \(formatTimestamp(stamp)) failed errno=\(errno)"
      }
      return "ff-erase \(formatTimestamp(stamp)) effect=\(effectID)"
    default:
      return "received \(formatTimestamp(stamp)) EV_UINPUT \(code) \(id)"
    }
  }

  /// Prints every event waiting on `fd` (non-blocking); returns at EAGAIN or when the
  /// device is gone.
  static func drain(fd: Int32) {
    var events = [input_event](repeating: input_event(), count: 64)
    while true {
      let n = events.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { return }
      for event in events.prefix(n / MemoryLayout<input_event>.stride) {
        let stamp = MonotonicInstant(seconds: Int64(event.time.tv_sec), microseconds: Int64(event.time.tv_usec))
        if event.type == UInt16(EV_UINPUT) {
          emit(answer(fd: fd, request: event.code, id: UInt32(bitPattern: event.value), at: stamp))
          continue
        }
        emit(line(type: UInt32(event.type), code: UInt32(event.code), value: event.value, at: stamp))
      }
    }
  }

  /// Waits until `deadline` (nil: no deadline) or until `input` is readable (or at its end),
  /// printing what the device receives meanwhile. True when `input` is readable.
  ///
  /// A device without an inbox (no LEDs) and no `input` sleeps with an absolute
  /// `clock_nanosleep`, as a press's hold always did.
  @discardableResult
  static func wait(
    device: VirtualDevice, until deadline: MonotonicInstant?, orReadable input: Int32? = nil
  )
    -> Bool
  {
    let inbox = device.inboxDescriptor
    if inbox == nil && input == nil {
      if let deadline { sleep(until: deadline) }
      return false
    }
    while true {
      var fds: [pollfd] = []
      if let input { fds.append(pollfd(fd: input, events: Int16(POLLIN), revents: 0)) }
      if let inbox { fds.append(pollfd(fd: inbox, events: Int16(POLLIN), revents: 0)) }
      // poll counts whole milliseconds: the last fraction of one is slept exactly
      // (absolute), so a press's hold stays as precise as without an inbox.
      var timeout: Int32 = -1
      if let deadline {
        let left = deadline - monotonicNow()
        if left < .milliseconds(1) {
          sleep(until: deadline)
          if let inbox { drain(fd: inbox) }
          return false
        }
        timeout = Int32(min(left.nanoseconds / 1_000_000, Int64(Int32.max)))
      }
      let rc = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeout) }
      if rc < 0 && errno == EINTR { continue }
      if rc < 0 { return false }
      if let inbox, let ready = fds.last, ready.fd == inbox, ready.revents != 0 { drain(fd: inbox) }
      if input != nil, fds[0].revents != 0 { return true }
    }
  }
}

/// Splits what arrives on a descriptor into lines (the device script on stdin), without
/// stdio's buffering, so that waiting for the next line can also watch the device's inbox.
struct LineReader {
  let fd: Int32
  private var pending: [UInt8] = []
  private(set) var atEnd = false

  init(fd: Int32) { self.fd = fd }

  /// The complete lines in `bytes` appended to what was pending (without their newline);
  /// what follows the last newline stays pending. Internal for tests.
  mutating func lines(adding bytes: [UInt8]) -> [String] {
    pending += bytes
    var lines: [String] = []
    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
      lines.append(String(decoding: pending[..<newline], as: UTF8.self))
      pending.removeSubrange(...newline)
    }
    return lines
  }

  /// Reads what is there (once readable): the lines it completes; at the end of input, the
  /// unterminated rest as a last line.
  mutating func read() -> [String] {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      if n <= 0 {
        atEnd = true
        guard !pending.isEmpty else { return [] }
        defer { pending = [] }
        return [String(decoding: pending, as: UTF8.self)]
      }
      return lines(adding: Array(buffer[..<n]))
    }
  }
}
