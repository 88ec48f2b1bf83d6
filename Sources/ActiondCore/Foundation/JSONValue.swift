// SPDX-License-Identifier: Apache-2.0
/// A JSON value, as parsed from configuration files and protocol lines.
///
/// actiond carries its own small JSON model instead of `Codable` for two reasons:
/// configuration validation must report *every* problem with its path and line
/// (a `Decoder` stops at the first), and the wire codec must frame and parse
/// lines fed one byte at a time without Foundation on the hot path.
public enum JSONValue: Hashable, Sendable {
  case null
  case bool(Bool)
  /// A number written without fraction or exponent that fits in 64 bits.
  case integer(Int64)
  /// Any other number. NaN and infinities (JSON5 only) are kept; the encoder writes them as null.
  case double(Double)
  case string(String)
  case array([JSONValue])
  case object(JSONObject)

  /// A short name of the value's type, for error messages ("expected string, got array").
  public var typeName: String {
    switch self {
    case .null: return "null"
    case .bool: return "boolean"
    case .integer, .double: return "number"
    case .string: return "string"
    case .array: return "array"
    case .object: return "object"
    }
  }

  public var stringValue: String? {
    if case .string(let s) = self { return s }
    return nil
  }
  public var boolValue: Bool? {
    if case .bool(let b) = self { return b }
    return nil
  }
  /// The value as an integer when it is one exactly (1.0 counts, 1.5 does not).
  public var integerValue: Int64? {
    switch self {
    case .integer(let i): return i
    case .double(let d):
      return Int64(exactly: d)
    default: return nil
    }
  }
  public var doubleValue: Double? {
    switch self {
    case .integer(let i): return Double(i)
    case .double(let d): return d
    default: return nil
    }
  }
  public var arrayValue: [JSONValue]? {
    if case .array(let a) = self { return a }
    return nil
  }
  public var objectValue: JSONObject? {
    if case .object(let o) = self { return o }
    return nil
  }
  public var isNull: Bool {
    if case .null = self { return true }
    return false
  }

  /// Member lookup for objects; nil for anything else or a missing key.
  public subscript(key: String) -> JSONValue? {
    objectValue?[key]
  }
}

/// A JSON object that keeps its members in source order (so output is stable and
/// readable) and remembers duplicates (so validation can reject them).
public struct JSONObject: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
  public private(set) var members: [(key: String, value: JSONValue)]

  public init() { members = [] }
  public init(_ members: [(key: String, value: JSONValue)]) { self.members = members }
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    members = elements.map { (key: $0.0, value: $0.1) }
  }

  /// The last value written for `key` (JSON's usual "last wins"); setting replaces
  /// the first occurrence in place or appends, and `nil` removes every occurrence.
  public subscript(key: String) -> JSONValue? {
    get {
      for member in members.reversed() where member.key == key { return member.value }
      return nil
    }
    set {
      if let newValue {
        if let i = members.firstIndex(where: { $0.key == key }) {
          members[i].value = newValue
        } else {
          members.append((key: key, value: newValue))
        }
      } else {
        members.removeAll { $0.key == key }
      }
    }
  }

  /// Adds a member at the end, without looking for one of the same name (the caller knows
  /// there is none, or wants the duplicate).
  mutating func append(key: String, value: JSONValue) {
    // Room for the widest announcement (`pressed`, `performed`: 9 members) in one allocation.
    if members.isEmpty { members.reserveCapacity(12) }
    members.append((key: key, value: value))
  }

  public var keys: [String] { members.map(\.key) }
  public var count: Int { members.count }
  public var isEmpty: Bool { members.isEmpty }

  /// Keys that occur more than once, in order of their second occurrence.
  public var duplicateKeys: [String] {
    var seen = Set<String>()
    var dups: [String] = []
    for m in members where !seen.insert(m.key).inserted { dups.append(m.key) }
    return dups
  }

  public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
    members.makeIterator()
  }

  public static func == (a: JSONObject, b: JSONObject) -> Bool {
    guard a.members.count == b.members.count else { return false }
    for (x, y) in zip(a.members, b.members) where x.key != y.key || x.value != y.value {
      return false
    }
    return true
  }
  public func hash(into hasher: inout Hasher) {
    hasher.combine(members.count)
    for m in members {
      hasher.combine(m.key)
      hasher.combine(m.value)
    }
  }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral,
  ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByNilLiteral,
  ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
  public init(stringLiteral value: String) { self = .string(value) }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  public init(integerLiteral value: Int64) { self = .integer(value) }
  public init(floatLiteral value: Double) { self = .double(value) }
  public init(nilLiteral: ()) { self = .null }
  public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self = .object(JSONObject(elements.map { (key: $0.0, value: $0.1) }))
  }
}

/// A line and column in a source text, both counted from 1.
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
  public var line: Int
  public var column: Int
  public init(line: Int, column: Int) {
    self.line = line
    self.column = column
  }
  public var description: String { "\(line):\(column)" }
}

/// A path into a JSON document, rendered the way errors name it:
/// `controls[2].intent.argv`, `assignments["my button"]`.
public struct JSONPath: Hashable, Sendable, CustomStringConvertible {
  public enum Component: Hashable, Sendable {
    case key(String)
    case index(Int)
  }
  public var components: [Component]

  public init(_ components: [Component] = []) { self.components = components }
  public static let root = JSONPath()

  public func appending(_ key: String) -> JSONPath { JSONPath(components + [.key(key)]) }
  public func appending(_ index: Int) -> JSONPath { JSONPath(components + [.index(index)]) }
  public static func / (path: JSONPath, key: String) -> JSONPath { path.appending(key) }
  public static func / (path: JSONPath, index: Int) -> JSONPath { path.appending(index) }

  public var description: String {
    if components.isEmpty { return "(top level)" }
    var out = ""
    for c in components {
      switch c {
      case .index(let i): out += "[\(i)]"
      case .key(let k):
        if JSONPath.isPlainIdentifier(k) {
          out += out.isEmpty ? k : ".\(k)"
        } else {
          out += "[\(JSONEncoding.quoted(k))]"
        }
      }
    }
    return out
  }

  static func isPlainIdentifier(_ s: String) -> Bool {
    guard let first = s.utf8.first, first == UInt8(ascii: "_") || first.isASCIILetter else {
      return false
    }
    return s.utf8.allSatisfy {
      $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0.isASCIILetter || $0.isASCIIDigit
    }
  }
}

extension UInt8 {
  @inlinable var isASCIILetter: Bool { (self | 0x20) >= 0x61 && (self | 0x20) <= 0x7A }
  @inlinable var isASCIIDigit: Bool { self >= 0x30 && self <= 0x39 }
}
