// SPDX-License-Identifier: Apache-2.0
/// What `actiond learn` found, a key-down on one device, and what binds exactly that
/// button: a button for the configuration and a udev rule line that tags the device.
///
/// Pure rendering of the facts the Linux side gathered (the device as udev describes it
/// and the key code), so every output is testable without a device.
///
/// The device is matched the robust way, never by its node (`/dev/input/eventN` changes
/// across boots and plugs): by its `/dev/input/by-id` link when udev made one (it follows
/// the device to any port), else its `/dev/input/by-path` link (the port it is on), else
/// its kernel name with vendor:product. A link another device present also carries (two
/// identical keyboards without a serial share their by-id link) is passed over.
public struct LearnedButton: Hashable, Sendable {
  /// The device the key-down came from.
  public var device: InputDeviceInfo
  /// The `EV_KEY` code that went down.
  public var keyCode: UInt16
  /// The name the configuration gives the button (`action`, the embedded default's).
  public var buttonName: String
  /// Whether the udev rule also adds `TAG+="uaccess"` (logind lets the active desktop
  /// user read the device).
  public var uaccess: Bool
  /// The links other input devices present carry too: two identical keyboards without a
  /// serial number share their by-id link, so it would not tell them apart.
  public var sharedLinks: Set<String>

  /// `others`: every other input device learn saw, to avoid a link that is not unique.
  public init(
    device: InputDeviceInfo, keyCode: UInt16, buttonName: String = "action", uaccess: Bool = false,
    others: [InputDeviceInfo] = []
  ) {
    self.device = device
    self.keyCode = keyCode
    self.buttonName = buttonName
    self.uaccess = uaccess
    let own = Set(device.links)
    sharedLinks = Set(others.filter { $0.syspath != device.syspath }.flatMap(\.links).filter { own.contains($0) })
  }

  /// Where a local udev rule goes: it must sort before the shipped 70-actiond.rules.
  public static let udevRuleFile = "/etc/udev/rules.d/69-actiond-local.rules"

  /// The key's name in the key-code table (`KEY_F13`), or its number when the table has none.
  public var keyName: String { KeyCodes.name(of: keyCode) ?? String(keyCode) }

  /// The device's `/dev/input/by-id/` links, sorted.
  public var byIDLinks: [String] { device.links.filter { $0.hasPrefix("/dev/input/by-id/") }.sorted() }
  /// The device's `/dev/input/by-path/` links, sorted.
  public var byPathLinks: [String] { device.links.filter { $0.hasPrefix("/dev/input/by-path/") }.sorted() }

  /// How the device is told apart from every other one.
  public enum Identity: Hashable, Sendable {
    /// A udev link (by-id preferred, else by-path).
    case link(String)
    /// The kernel device name and vendor:product (no link exists: virtual and some
    /// platform devices).
    case nameAndID(name: String, vendor: UInt16, product: UInt16)
  }

  public var identity: Identity {
    let unique = { (link: String) in !self.sharedLinks.contains(link) }
    if let link = byIDLinks.first(where: unique) ?? byPathLinks.first(where: unique) { return .link(link) }
    return .nameAndID(name: device.name, vendor: device.vendor, product: device.product)
  }

  /// The device match of the button, as the configuration loader reads it.
  public var match: DeviceMatch {
    switch identity {
    case .link(let link):
      return DeviceMatch(link: try? Glob(Self.globEscaped(link)))
    case .nameAndID(let name, let vendor, let product):
      return DeviceMatch(name: try? Glob(Self.globEscaped(name)), vendor: vendor, product: product)
    }
  }

  /// The button as a configuration object: an element of `buttons` (strict JSON, so also
  /// JSON5), in the key order of docs/configuration.md.
  public var buttonJSON: JSONValue {
    let key: JSONValue = KeyCodes.name(of: keyCode).map { .string($0) } ?? .integer(Int64(keyCode))
    return .object(["name": .string(buttonName), "key": key, "match": .object(matchJSON)])
  }

  /// The `match` object of ``buttonJSON``.
  public var matchJSON: JSONObject {
    switch identity {
    case .link(let link):
      return ["link": .string(Self.globEscaped(link))]
    case .nameAndID(let name, let vendor, let product):
      return ["name": .string(Self.globEscaped(name)), "id": .string("\(hex4(vendor)):\(hex4(product))")]
    }
  }

  /// The button in JSON5 as a person writes it, one line:
  /// `{ name: "action", key: "KEY_F13", match: { link: "/dev/input/by-id/…" } }`.
  public var snippet: String {
    let key = KeyCodes.name(of: keyCode).map(JSONEncoding.quoted) ?? String(keyCode)
    let match = matchJSON.map { "\($0.key): \(JSONEncoding.compact($0.value))" }.joined(separator: ", ")
    return "{ name: \(JSONEncoding.quoted(buttonName)), key: \(key), match: { \(match) } }"
  }

  /// One udev rule line that marks exactly this device `ACTIOND_BUTTON=<name>` and tags it
  /// `actiond` (and `uaccess` when asked). The tags are set by the line itself, not left to
  /// the shipped 70-actiond.rules (which also turns `ACTIOND_BUTTON` into the tag, adds
  /// group `input`, mode 0660 and starts the service): so the rule works for `make run`
  /// before anything is installed. `uaccess` must be tagged before 73-seat-late.rules
  /// applies it; the file's 69 sorts before it.
  public var udevRule: String {
    var parts = [#"SUBSYSTEM=="input""#, #"KERNEL=="event*""#]
    switch identity {
    case .link(let link):
      // udev compares SYMLINK with each of the node's links without the /dev/ prefix; the
      // links come from 60-persistent-input.rules, which sorts before 69-*.
      let relative = link.hasPrefix("/dev/") ? String(link.dropFirst(5)) : link
      parts.append(#"SYMLINK==""# + Self.udevEscaped(relative) + #"""#)
    case .nameAndID(let name, let vendor, let product):
      // ATTRS{} of one rule must all hold on one ancestor: the inputN parent has all three.
      parts.append(#"ATTRS{name}==""# + Self.udevEscaped(name) + #"""#)
      parts.append(#"ATTRS{id/vendor}==""# + hex4(vendor) + #"""#)
      parts.append(#"ATTRS{id/product}==""# + hex4(product) + #"""#)
    }
    parts.append(#"ENV{ACTIOND_BUTTON}=""# + buttonName + #"""#)
    parts.append(#"TAG+="actiond""#)
    if uaccess { parts.append(#"TAG+="uaccess""#) }
    return parts.joined(separator: ", ")
  }

  /// `usb`, `bluetooth`, ... for `linux/input.h`'s `BUS_*`; nil for a bus without a name here.
  public static func busName(_ bustype: UInt16) -> String? {
    switch bustype {
    case 0x01: "pci"
    case 0x03: "usb"
    case 0x05: "bluetooth"
    case 0x06: "virtual"
    case 0x10: "isa"
    case 0x11: "i8042"
    case 0x13: "rs232"
    case 0x18: "i2c"
    case 0x19: "host"
    case 0x1C: "spi"
    case 0x1D: "rmi"
    case 0x1E: "cec"
    case 0x1F: "intel-ishtp"
    case 0x20: "amd-sfh"
    default: nil
    }
  }

  /// The object `actiond learn --json` prints (docs/keyboard-key.md documents it).
  public var json: JSONValue {
    var device: JSONObject = [
      "name": .string(self.device.name),
      "devnode": self.device.devnode.map { .string($0) } ?? .null,
      "syspath": .string(self.device.syspath),
      "byId": .array(byIDLinks.map { .string($0) }),
      "byPath": .array(byPathLinks.map { .string($0) }),
      "bus": Self.busName(self.device.bustype).map { .string($0) } ?? .null,
      "bustype": .integer(Int64(self.device.bustype)),
      "id": .string("\(hex4(self.device.vendor)):\(hex4(self.device.product))"),
    ]
    device["phys"] = self.device.phys.map { .string($0) } ?? .null
    device["uniq"] = self.device.uniq.map { .string($0) } ?? .null
    return .object([
      "device": .object(device),
      "key": .object(["name": .string(keyName), "code": .integer(Int64(keyCode))]),
      "button": buttonJSON,
      "snippet": .string(snippet),
      "udevRule": .string(udevRule),
      "udevRuleFile": .string(Self.udevRuleFile),
    ])
  }

  /// The report for a person: the device, the key, the button snippet and the udev rule.
  public var text: String {
    var lines: [String] = []
    lines.append("device   \(device.name.isEmpty ? "(no name)" : device.name) (\(device.devnode ?? device.syspath))")
    for link in byIDLinks { lines.append("by-id    \(link)") }
    for link in byPathLinks { lines.append("by-path  \(link)") }
    let bus = Self.busName(device.bustype).map { "\($0) (0x\(hex2(device.bustype)))" } ?? "0x\(hex2(device.bustype))"
    lines.append("bus      \(bus), id \(hex4(device.vendor)):\(hex4(device.product))")
    lines.append("key      \(keyName) (code \(keyCode))")
    lines.append("")
    lines.append("configuration (a button for the \"buttons\" list of /etc/actiond/actiond.json):")
    lines.append("  \(snippet)")
    lines.append("udev rule (a line for \(Self.udevRuleFile)):")
    lines.append("  \(udevRule)")
    lines.append("then: sudo udevadm control --reload && sudo udevadm trigger --subsystem-match=input")
    if !uaccess {
      lines.append(
        "(for the desktop's active user to read the device, as `make run` does, learn with --uaccess: "
          + "the rule then ends with TAG+=\"uaccess\")")
    }
    return lines.joined(separator: "\n")
  }

  /// The embedded default configuration (docs/configuration.md) with its button replaced
  /// by this one: a whole file for `--config`, the Work Timer on the learned button.
  public var configuration: String {
    let lines = DefaultConfiguration.text.split(separator: "\n", omittingEmptySubsequences: false)
    // The default's `buttons: [` ... `],` block, at its two-space indentation.
    guard let start = lines.firstIndex(of: "  buttons: ["),
      let end = lines[start...].firstIndex(of: "  ],")
    else { preconditionFailure("DefaultConfiguration.text lost its buttons block") }
    var out = Array(lines[..<start]).map(String.init)
    out[0] = "// actiond's embedded default configuration, on the button `actiond learn` found."
    out.append("  buttons: [")
    out.append("    \(snippet),")
    out.append("  ],")
    // The default assigns the Work Timer to `action`; the learned button may be named otherwise.
    out += lines[(end + 1)...].map {
      $0 == "    action: { kind: \"\(DefaultConfiguration.workTimerKind)\" }," && buttonName != "action"
        ? "    \(JSONEncoding.quoted(buttonName)): { kind: \"\(DefaultConfiguration.workTimerKind)\" }," : String($0)
    }
    return out.joined(separator: "\n")
  }

  /// `pattern` as a glob that matches exactly `text` (`*`, `?`, `[` and `\` made literal).
  public static func globEscaped(_ text: String) -> String {
    var out = ""
    for c in text {
      if c == "*" || c == "?" || c == "[" || c == "\\" { out.append("\\") }
      out.append(c)
    }
    return out
  }

  /// `text` as a udev match value: udev has no escape for its pattern characters
  /// (`*?[]|`), nor for `"` and `\` in a value, so each becomes `?` (any one character):
  /// still exactly this device in practice, and never an alternative (`|`).
  public static func udevEscaped(_ text: String) -> String {
    String(text.map { "*?[]|\"\\".contains($0) || $0.isNewline ? "?" : $0 })
  }
}

func hex2(_ v: UInt16) -> String {
  let s = String(v, radix: 16)
  return s.count >= 2 ? s : "0" + s
}
