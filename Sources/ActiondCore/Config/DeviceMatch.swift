// SPDX-License-Identifier: Apache-2.0
/// Which input devices a button lives on.
///
/// Every rule that is given must hold (they are ANDed); a device matches when all do.
/// Text rules are glob patterns (`Glob`): `*`, `?`, `[...]`; a pattern without those
/// characters is an exact comparison.
///
/// When no rule is given at all, the match is `tags: ["actiond"]`: devices the shipped
/// udev rules tag (`TAG+="actiond"`). Giving any rule replaces that default, so
/// `{ name: "gpio-keys" }` does not require the tag; write `tag` as well to keep it.
///
/// Note: many GPIO and platform devices share vendor:product `0001:0001` (or `0000:0000`);
/// never match GPIO buttons by `id` alone, add `name`, `phys` or a udev tag/property.
public struct DeviceMatch: Hashable, Sendable, CustomStringConvertible {
  /// udev tags the device must all carry (`TAG+="actiond"`).
  public var tags: [String]
  /// udev properties the device must carry, value as a glob (`ACTIOND_BUTTON=action`).
  public var properties: [String: Glob]
  /// The kernel device name (`gpio-keys`, `*Foot Switch*`).
  public var name: Glob?
  /// The physical path (`usb-0000:00:14.0-2/input0`).
  public var phys: Glob?
  /// The unique id (`EVIOCGUNIQ`), often a serial number.
  public var uniq: Glob?
  /// USB/Bluetooth vendor id (`id: "046d:c52b"` sets both).
  public var vendor: UInt16?
  public var product: UInt16?
  /// A `/dev/input/by-id/...` or `/dev/input/by-path/...` link; matches when any link of the device does.
  public var link: Glob?
  /// The device node (`/dev/input/event3`). Node numbers change across boots; prefer other rules.
  public var devnode: Glob?

  /// The tag matched when a `match` gives no rule.
  public static let defaultTag = "actiond"
  /// `tags: ["actiond"]`, the match of a button without `match`.
  public static let `default` = DeviceMatch(tags: [defaultTag])

  public init(
    tags: [String] = [], properties: [String: Glob] = [:], name: Glob? = nil, phys: Glob? = nil,
    uniq: Glob? = nil, vendor: UInt16? = nil, product: UInt16? = nil, link: Glob? = nil, devnode: Glob? = nil
  ) {
    self.tags = tags
    self.properties = properties
    self.name = name
    self.phys = phys
    self.uniq = uniq
    self.vendor = vendor
    self.product = product
    self.link = link
    self.devnode = devnode
  }

  /// Whether no rule is given (the loader then uses `DeviceMatch.default`).
  public var isEmpty: Bool {
    tags.isEmpty && properties.isEmpty && name == nil && phys == nil && uniq == nil && vendor == nil
      && product == nil && link == nil && devnode == nil
  }

  /// Whether the device satisfies every given rule. Pure: decides from `info` alone.
  public func matches(_ info: InputDeviceInfo) -> Bool {
    for tag in tags where !info.tags.contains(tag) { return false }
    for (key, pattern) in properties {
      guard let v = info.properties[key], pattern.matches(v) else { return false }
    }
    if let name, !name.matches(info.name) { return false }
    if let phys, !phys.matches(info.phys ?? "") { return false }
    if let uniq, !uniq.matches(info.uniq ?? "") { return false }
    if let vendor, info.vendor != vendor { return false }
    if let product, info.product != product { return false }
    if let link, !info.links.contains(where: { link.matches($0) }) { return false }
    if let devnode {
      guard let node = info.devnode, devnode.matches(node) else { return false }
    }
    return true
  }

  /// The rules in configuration syntax, for logs: `tag=actiond name="gpio-keys*"`.
  public var description: String {
    var parts: [String] = tags.map { "tag=\($0)" }
    for k in properties.keys.sorted() { parts.append("property \(k)=\(JSONEncoding.quoted(properties[k]!.pattern))") }
    if let name { parts.append("name=\(JSONEncoding.quoted(name.pattern))") }
    if let phys { parts.append("phys=\(JSONEncoding.quoted(phys.pattern))") }
    if let uniq { parts.append("uniq=\(JSONEncoding.quoted(uniq.pattern))") }
    if vendor != nil || product != nil {
      parts.append("id=\(vendor.map { hex4($0) } ?? "*"):\(product.map { hex4($0) } ?? "*")")
    }
    if let link { parts.append("link=\(JSONEncoding.quoted(link.pattern))") }
    if let devnode { parts.append("devnode=\(JSONEncoding.quoted(devnode.pattern))") }
    return parts.isEmpty ? "(any device)" : parts.joined(separator: " ")
  }
}

func hex4(_ v: UInt16) -> String {
  let s = String(v, radix: 16)
  return String(repeating: "0", count: 4 - s.count) + s
}

/// A shell-style glob pattern (like `fnmatch(3)` without flags): `*` matches any run of
/// characters (including `/`), `?` one character, `[abc]`, `[a-z]` and `[!a-z]` (or `[^a-z]`)
/// one character of (not of) a set, and `\` makes the next character literal.
/// Matching works on Unicode characters (extended grapheme clusters), so `?` matches `é`.
public struct Glob: Hashable, Sendable, CustomStringConvertible {
  public let pattern: String
  private let elements: [Element]

  enum Element: Hashable {
    case literal(Character)
    case any
    case one
    case set(negated: Bool, items: [SetItem])
  }
  enum SetItem: Hashable {
    case char(Character)
    case range(Character, Character)
  }

  /// A malformed pattern (an unclosed `[` or a trailing `\`).
  public struct SyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
  }

  /// Parses a pattern; throws on an unclosed `[` or a trailing `\`.
  public init(_ pattern: String) throws(SyntaxError) {
    self.pattern = pattern
    var out: [Element] = []
    let chars = Array(pattern)
    var i = 0
    while i < chars.count {
      let c = chars[i]
      switch c {
      case "*":
        if out.last != .any { out.append(.any) }
        i += 1
      case "?":
        out.append(.one)
        i += 1
      case "\\":
        guard i + 1 < chars.count else { throw SyntaxError(message: "pattern ends with a lone \\") }
        out.append(.literal(chars[i + 1]))
        i += 2
      case "[":
        var j = i + 1
        var negated = false
        if j < chars.count && (chars[j] == "!" || chars[j] == "^") {
          negated = true
          j += 1
        }
        var items: [SetItem] = []
        var first = true
        var closed = false
        while j < chars.count {
          var ch = chars[j]
          if ch == "]" && !first {
            closed = true
            break
          }
          first = false
          if ch == "\\" && j + 1 < chars.count {
            j += 1
            ch = chars[j]
          }
          if j + 2 < chars.count && chars[j + 1] == "-" && chars[j + 2] != "]" {
            var hi = chars[j + 2]
            var skip = 3
            if hi == "\\" && j + 3 < chars.count {
              hi = chars[j + 3]
              skip = 4
            }
            guard ch <= hi else {
              throw SyntaxError(message: "range \(ch)-\(hi) is reversed in [...]")
            }
            items.append(.range(ch, hi))
            j += skip
          } else {
            items.append(.char(ch))
            j += 1
          }
        }
        guard closed else { throw SyntaxError(message: "unclosed [ in pattern (write \\[ for a literal [)") }
        out.append(.set(negated: negated, items: items))
        i = j + 1
      default:
        out.append(.literal(c))
        i += 1
      }
    }
    elements = out
  }

  public var description: String { pattern }

  /// Whether `text` matches the whole pattern.
  public func matches(_ text: String) -> Bool {
    let t = Array(text)
    // Iterative matcher with single-star backtracking: linear in practice, never exponential.
    var p = 0
    var s = 0
    var starP = -1
    var starS = 0
    while s < t.count {
      if p < elements.count {
        switch elements[p] {
        case .any:
          starP = p
          starS = s
          p += 1
          continue
        case .one:
          p += 1
          s += 1
          continue
        case .literal(let c) where c == t[s]:
          p += 1
          s += 1
          continue
        case .set(let negated, let items) where Glob.setContains(items, t[s]) != negated:
          p += 1
          s += 1
          continue
        default:
          break
        }
      }
      guard starP >= 0 else { return false }
      p = starP + 1
      starS += 1
      s = starS
    }
    while p < elements.count, elements[p] == .any { p += 1 }
    return p == elements.count
  }

  private static func setContains(_ items: [SetItem], _ c: Character) -> Bool {
    for item in items {
      switch item {
      case .char(let x) where x == c: return true
      case .range(let lo, let hi) where lo <= c && c <= hi: return true
      default: continue
      }
    }
    return false
  }
}
