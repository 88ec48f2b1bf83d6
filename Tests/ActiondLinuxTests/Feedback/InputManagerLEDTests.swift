// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import CEvdev
import Glibc
import Testing

/// `EV_LED` through the descriptor the input manager holds for a button's device: what
/// reaches the device is one write of `EV_LED` and `SYN_REPORT` (read back from a pipe
/// standing in for the evdev node; the VM tier proves it on a real uinput device).
@Suite struct InputManagerLEDTests {
  @Test func setLEDWritesOneEventFrameToTheButtonsDevice() throws {
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    defer {
      close(fds[0])
      close(fds[1])
    }
    let loop = FakeInputLoop()
    let backend = FakeBackend()
    let device = backend.plug(eventDevice(3), keys: [148])
    backend.specs[device.syspath]?.fd = fds[1]
    let manager = InputManager(loop: loop, backend: backend)
    try manager.start([ButtonBinding(name: "action", keyCode: 148, matches: { _ in true })])
    #expect(manager.ledDevice(forButton: "action") == device.syspath)
    #expect(manager.ledDevice(forButton: "other") == nil)

    try manager.setLED(device: device.syspath, code: 1, on: true)
    try manager.setLED(device: device.syspath, code: 1, on: false)
    var buffer = [UInt8](repeating: 0, count: 256)
    let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
    let size = MemoryLayout<input_event>.size
    #expect(n == 4 * size)
    let events = (0..<4).map { i in
      buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: i * size, as: input_event.self) }
    }
    #expect(
      events.map { "\($0.type) \($0.code) \($0.value)" } == [
        "\(EV_LED) 1 1", "\(EV_SYN) \(SYN_REPORT) 0", "\(EV_LED) 1 0", "\(EV_SYN) \(SYN_REPORT) 0",
      ])

    // A pipe is no evdev node: EVIOCGLED fails with the reason.
    #expect {
      _ = try manager.isLEDOn(device: device.syspath, code: 1)
    } throws: { error in
      "\(error)".hasPrefix("EVIOCGLED on /dev/input/event3: ")
    }
    #expect {
      try manager.setLED(device: "/sys/devices/gone", code: 1, on: true)
    } throws: { error in
      "\(error)".hasPrefix("write an LED of /sys/devices/gone: ")
    }
    #expect(manager.isOpen(device: device.syspath) && !manager.isOpen(device: "/sys/devices/gone"))
  }
}
