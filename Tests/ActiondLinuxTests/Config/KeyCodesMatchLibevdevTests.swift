import ActiondCore
import CEvdev
import FoundationEssentials
import Testing

/// The core's generated key table (scripts/gen-keycodes.py) must agree with libevdev,
/// whose names the daemon prints and users know from `evtest` and `libinput debug-events`.
@Suite struct KeyCodesMatchLibevdevTests {
  /// libevdev's name for a code; nil when it has none.
  private func libevdevName(_ code: UInt16) -> String? {
    libevdev_event_code_get_name(UInt32(EV_KEY), UInt32(code)).map { String(cString: $0) }
  }

  @Test func everyNameLibevdevKnowsHasTheSameCode() {
    var known = 0
    for entry in KeyCodes.all {
      let code = libevdev_event_code_from_name(UInt32(EV_KEY), entry.name)
      // libevdev 1.13 lacks some aliases (KEY_SCREENLOCK) and keys newer than it; the
      // header is the authority for those, but whatever libevdev does know must agree.
      guard code >= 0 else {
        #expect(entry.isAlias || libevdevName(entry.code) == nil, "libevdev does not know \(entry.name)")
        continue
      }
      known += 1
      #expect(UInt16(code) == entry.code, "\(entry.name): table \(entry.code), libevdev \(code)")
    }
    // The check must have compared something real: almost all names are known to libevdev.
    #expect(known > 600)
  }

  @Test func canonicalNamesAreLibevdevs() {
    var compared = 0
    for code in 0...KeyCodes.maximum {
      guard let name = libevdevName(code), !name.hasSuffix("_MAX") else {
        continue
      }
      compared += 1
      #expect(KeyCodes.name(of: code) == name, "code \(code)")
    }
    #expect(compared > 600)
    // Codes only the (newer) header names still have a canonical name.
    for entry in KeyCodes.all where !entry.isAlias {
      #expect(KeyCodes.name(of: entry.code) == entry.name)
      #expect(KeyCodes.code(named: entry.name) == entry.code)
    }
  }

  /// The table is generated from this machine's kernel headers; when they change, the
  /// generator must be run again (scripts/gen-keycodes.py), which this test demands.
  @Test func tableIsUpToDateWithTheInstalledHeader() throws {
    let header = try String(contentsOfFile: "/usr/include/linux/input-event-codes.h", encoding: .utf8)
    var numeric: [String: UInt16] = [:]
    var checked = 0
    for line in header.split(separator: "\n") where line.hasPrefix("#define ") {
      let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
      guard fields.count >= 3 else { continue }
      let name = String(fields[1])
      guard name.hasPrefix("KEY_") || name.hasPrefix("BTN_"),
        !["KEY_MAX", "KEY_CNT", "KEY_MIN_INTERESTING"].contains(name)
      else { continue }
      let value = String(fields[2])
      let code = value.hasPrefix("0x") ? UInt16(value.dropFirst(2), radix: 16) : UInt16(value) ?? numeric[value]
      guard let code else {
        Issue.record("cannot read \(line)")
        continue
      }
      numeric[name] = code
      #expect(KeyCodes.code(named: name) == code, "\(name) = \(value)")
      checked += 1
    }
    #expect(checked == KeyCodes.all.count)
  }

  @Test func aliasesResolveToTheirKey() {
    #expect(KeyCodes.code(named: "BTN_A") == KeyCodes.code(named: "BTN_SOUTH"))
    #expect(KeyCodes.code(named: "BTN_MISC") == KeyCodes.code(named: "BTN_0"))
    #expect(KeyCodes.code(named: "KEY_SCREENLOCK") == KeyCodes.code(named: "KEY_COFFEE"))
    #expect(KeyCodes.code(named: "KEY_PROG1") == UInt16(KEY_PROG1))
    #expect(KeyCodes.code(named: "BTN_0") == UInt16(BTN_0))
    #expect(KeyCodes.code(named: "KEY_MAX") == nil)
    #expect(KeyCodes.code(named: "key_prog1") == nil)
    #expect(KeyCodes.name(of: UInt16(BTN_A)) == "BTN_SOUTH")
  }
}
