// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CEvdev
import Glibc

/// `actiond-testdev set-led DEVNODE LED 0|1`: writes `EV_LED` and `SYN_REPORT` to an evdev
/// node, as any process holding it open for writing can (the VT keyboard, a desktop setting
/// Caps Lock): how a scenario gives an LED a state before actiond takes it.
struct SetLEDMode {
  var node: String
  var led: UInt32
  var value: Int32

  init(arguments: [String]) throws {
    guard arguments.count == 3 else { throw TestDevError.usage("set-led needs DEVNODE LED 0|1") }
    node = arguments[0]
    led = try Names.ledCode(arguments[1])
    guard let value = Int32(arguments[2]), value == 0 || value == 1 else {
      throw TestDevError.usage("bad LED value '\(arguments[2])' (expected 0 or 1)")
    }
    self.value = value
  }

  func run() throws {
    let fd = open(node, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { throw TestDevError.system("cannot open \(node) for writing", errno) }
    defer { close(fd) }
    var events = [input_event(), input_event()]
    events[0].type = UInt16(EV_LED)
    events[0].code = UInt16(led)
    events[0].value = value
    events[1].type = UInt16(EV_SYN)
    events[1].code = UInt16(SYN_REPORT)
    let stamp = monotonicNow()
    let n = events.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard n == MemoryLayout<input_event>.stride * 2 else {
      throw TestDevError.system("writing EV_LED to \(node)", n < 0 ? errno : EIO)
    }
    emit("set-led \(formatTimestamp(stamp)) \(node) \(Names.ledName(led)) \(value)")
  }
}
