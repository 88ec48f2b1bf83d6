// SPDX-License-Identifier: Apache-2.0
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

  /// The table is generated from the newest kernel header of a supported system (Debian 13's)
  /// and only grows (scripts/gen-keycodes.py). Whatever header this machine has, every key it
  /// names must be in the table with the same code: a newer header means the generator must be
  /// run again, which this test demands. Names the table has beyond an older header (Debian 12's
  /// lacks 5) must be keys that header does not know at all, not other names of its codes.
  @Test func tableCoversTheInstalledHeader() throws {
    let header = try String(contentsOfFile: "/usr/include/linux/input-event-codes.h", encoding: .utf8)
    let (problems, names) = Self.disagreements(withHeader: header)
    #expect(problems == [])
    // The check must have compared something real: Linux 6.1's header alone has 632 names.
    #expect(names >= 632)
  }

  /// The check above, fed headers made up from the table: it accepts an older header and
  /// catches a newer key, a changed code and a known code under a name the table lacks.
  @Test func theHeaderCheckCatchesANewerHeader() {
    let lines = KeyCodes.all.map { "#define \($0.name)\t0x\(String($0.code, radix: 16))" }
    #expect(Self.disagreements(withHeader: lines.joined(separator: "\n")).problems == [])
    let older = lines.filter { !$0.contains("KEY_DO_NOT_DISTURB") && !$0.contains("KEY_ACCESSIBILITY") }
    #expect(Self.disagreements(withHeader: older.joined(separator: "\n")).problems == [])
    #expect(
      Self.disagreements(withHeader: (lines + ["#define KEY_FROM_A_NEWER_KERNEL\t0x2fe"]).joined(separator: "\n"))
        .problems == ["KEY_FROM_A_NEWER_KERNEL = 0x2fe: the table says nil; run make keycodes"])
    #expect(
      Self.disagreements(withHeader: (lines + ["#define KEY_PROG1\t0x2fe"]).joined(separator: "\n")).problems
        == ["KEY_PROG1 = 0x2fe: the table says 148; run make keycodes"])
    let renamed = lines.map { $0.hasPrefix("#define KEY_DICTATE\t") ? "#define KEY_DICTATION\t0x24a" : $0 }
    #expect(
      Self.disagreements(withHeader: renamed.joined(separator: "\n")).problems == [
        "KEY_DICTATION = 0x24a: the table says nil; run make keycodes",
        "KEY_DICTATE is not in the header, but its code 586 is",
      ])
  }

  /// Where the table and a header (the text of an input-event-codes.h) disagree, and how many
  /// key names the header defines.
  private static func disagreements(withHeader header: String) -> (problems: [String], names: Int) {
    var numeric: [String: UInt16] = [:]
    var problems: [String] = []
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
        problems.append("cannot read \(line)")
        continue
      }
      numeric[name] = code
      if KeyCodes.code(named: name) != code {
        problems.append(
          "\(name) = \(value): the table says \(KeyCodes.code(named: name).map { "\($0)" } ?? "nil"); run make keycodes"
        )
      }
    }
    let headerCodes = Set(numeric.values)
    for entry in KeyCodes.all where numeric[entry.name] == nil && headerCodes.contains(entry.code) {
      problems.append("\(entry.name) is not in the header, but its code \(entry.code) is")
    }
    return (problems, numeric.count)
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
