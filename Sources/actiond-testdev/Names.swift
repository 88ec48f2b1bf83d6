// SPDX-License-Identifier: Apache-2.0
import CEvdev
import Glibc

/// Names of event types, codes and buses, through libevdev's tables (the kernel's names).
enum Names {
  /// KEY_PROG1, BTN_0, or the short form "prog1" for KEY_PROG1.
  static func keyCode(_ name: String) throws -> UInt32 {
    var candidates = [name]
    if !name.hasPrefix("KEY_") && !name.hasPrefix("BTN_") { candidates.append("KEY_" + name.uppercased()) }
    for candidate in candidates {
      let code = libevdev_event_code_from_name(UInt32(EV_KEY), candidate)
      if code >= 0 { return UInt32(code) }
    }
    throw TestDevError.usage("unknown key '\(name)' (expected a kernel name like KEY_PROG1)")
  }

  static func keyName(_ code: UInt32) -> String {
    codeName(type: UInt32(EV_KEY), code: code)
  }

  /// LED_CAPSL, or the short form "capsl".
  static func ledCode(_ name: String) throws -> UInt32 {
    for candidate in [name, "LED_" + name.uppercased()] {
      let code = libevdev_event_code_from_name(UInt32(EV_LED), candidate)
      if code >= 0 { return UInt32(code) }
    }
    throw TestDevError.usage("unknown LED '\(name)' (expected a kernel name like LED_CAPSL)")
  }

  static func ledName(_ code: UInt32) -> String {
    codeName(type: UInt32(EV_LED), code: code)
  }

  static func typeName(_ type: UInt32) -> String {
    guard let name = libevdev_event_type_get_name(type) else { return "type\(type)" }
    return String(cString: name)
  }

  static func codeName(type: UInt32, code: UInt32) -> String {
    guard let name = libevdev_event_code_get_name(type, code) else { return "code\(code)" }
    return String(cString: name)
  }

  static let buses: [(String, Int32)] = [
    ("usb", BUS_USB), ("host", BUS_HOST), ("bluetooth", BUS_BLUETOOTH), ("i8042", BUS_I8042),
    ("virtual", BUS_VIRTUAL), ("i2c", BUS_I2C), ("spi", BUS_SPI),
  ]

  static func bus(_ text: String) throws -> Int32 {
    if let entry = buses.first(where: { $0.0 == text }) { return entry.1 }
    if text.hasPrefix("0x"), let value = Int32(text.dropFirst(2), radix: 16), value >= 0, value <= 0xffff {
      return value
    }
    throw TestDevError.usage("unknown bus '\(text)' (usb, host, bluetooth, i8042, virtual, i2c, spi or 0xNN)")
  }

  static func busName(_ value: Int32) -> String {
    buses.first(where: { $0.1 == value })?.0 ?? "0x" + String(value, radix: 16)
  }

  /// "VVVV:PPPP", both hexadecimal.
  static func id(_ text: String) throws -> (vendor: Int32, product: Int32) {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, let vendor = Int32(parts[0], radix: 16), let product = Int32(parts[1], radix: 16),
      (0...0xffff).contains(vendor), (0...0xffff).contains(product)
    else { throw TestDevError.usage("bad id '\(text)' (expected VVVV:PPPP in hexadecimal)") }
    return (vendor, product)
  }

  static func hex4(_ value: Int32) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }
}
