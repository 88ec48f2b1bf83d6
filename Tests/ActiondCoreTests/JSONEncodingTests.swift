// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore

/// The byte encoder against the scalar-by-scalar `String` encoder it replaced (kept here as
/// the reference model): the same text for every value, compact and pretty, and text the
/// parser reads back as the value.
@Suite struct JSONEncodingTests {
  /// The encoder before it wrote bytes, unchanged: one `String` append per scalar.
  enum Reference {
    static func encode(_ value: JSONValue, indent: String?) -> String {
      var out = ""
      write(value, into: &out, indent: indent, level: 0)
      return out
    }

    static func write(_ value: JSONValue, into out: inout String, indent: String?, level: Int) {
      switch value {
      case .null: out += "null"
      case .bool(let b): out += b ? "true" : "false"
      case .integer(let i): out += String(i)
      case .double(let d):
        if !d.isFinite {
          out += "null"
        } else if abs(d) < 1e15, let i = Int64(exactly: d) {
          out += String(i)
        } else {
          out += String(d)
        }
      case .string(let s): writeString(s, into: &out)
      case .array(let a):
        if a.isEmpty {
          out += "[]"
          return
        }
        out += "["
        for (i, e) in a.enumerated() {
          if i > 0 { out += "," }
          newline(&out, indent, level + 1)
          write(e, into: &out, indent: indent, level: level + 1)
        }
        newline(&out, indent, level)
        out += "]"
      case .object(let o):
        if o.isEmpty {
          out += "{}"
          return
        }
        out += "{"
        for (i, m) in o.members.enumerated() {
          if i > 0 { out += "," }
          newline(&out, indent, level + 1)
          writeString(m.key, into: &out)
          out += indent == nil ? ":" : ": "
          write(m.value, into: &out, indent: indent, level: level + 1)
        }
        newline(&out, indent, level)
        out += "}"
      }
    }

    static func newline(_ out: inout String, _ indent: String?, _ level: Int) {
      guard let indent else { return }
      out += "\n"
      for _ in 0..<level { out += indent }
    }

    static let hex: [Character] = Array("0123456789abcdef")

    static func writeString(_ s: String, into out: inout String) {
      out += "\""
      for u in s.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case "\u{2028}": out += "\\u2028"
        case "\u{2029}": out += "\\u2029"
        default:
          if u.value < 0x20 || u.value == 0x7F {
            out += "\\u00"
            out.append(hex[Int(u.value >> 4)])
            out.append(hex[Int(u.value & 0xF)])
          } else {
            out.unicodeScalars.append(u)
          }
        }
      }
      out += "\""
    }
  }

  /// Scalars chosen to hit every branch: escapes, controls, DEL, the two line separators
  /// and their UTF-8 neighbours (E2 80 A7 / AA), 2-, 3- and 4-byte sequences.
  static let scalars: [Unicode.Scalar] = [
    "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{8}", "\u{C}", "\u{1F}", "\u{7F}",
    "\u{80}", "é", "\u{2027}", "\u{2028}", "\u{2029}", "\u{202A}", "\u{20AC}", "\u{FFFD}", "\u{1F600}", "\u{10FFFF}",
  ]

  static func randomString(_ rng: inout SplitMix64) -> String {
    var s = ""
    for _ in 0..<Int(rng.next() % 12) { s.unicodeScalars.append(scalars[Int(rng.next() % UInt64(scalars.count))]) }
    return s
  }

  static func randomValue(_ rng: inout SplitMix64, depth: Int) -> JSONValue {
    switch rng.next() % (depth > 3 ? 6 : 8) {
    case 0: return .null
    case 1: return .bool(rng.next() % 2 == 0)
    case 2:
      let edges: [Int64] = [0, -1, 1, 9, 10, -10, .max, .min, .min + 1, 999_999_999_999_999]
      return .integer(
        rng.next() % 2 == 0 ? edges[Int(rng.next() % UInt64(edges.count))] : Int64(bitPattern: rng.next()))
    case 3:
      let edges: [Double] = [0.5, -2.5, 1e15, 1e300, -1e-300, 3, .nan, .infinity, 123_456.789]
      return .double(edges[Int(rng.next() % UInt64(edges.count))])
    case 4, 5: return .string(randomString(&rng))
    case 6: return .array((0..<Int(rng.next() % 4)).map { _ in randomValue(&rng, depth: depth + 1) })
    default:
      return .object(
        JSONObject(
          (0..<Int(rng.next() % 4)).map { _ in (key: randomString(&rng), value: randomValue(&rng, depth: depth + 1)) }))
    }
  }

  @Test func writesWhatTheStringEncoderWrote() throws {
    var rng = SplitMix64(seed: 0x6A73_6F6E)
    for _ in 0..<3000 {
      let value = Self.randomValue(&rng, depth: 0)
      let compact = JSONEncoding.compact(value)
      #expect(compact == Reference.encode(value, indent: nil))
      #expect(JSONEncoding.pretty(value) == Reference.encode(value, indent: "  "))
      var bytes: [UInt8] = [0x78]
      JSONEncoding.compact(value, into: &bytes)
      #expect(bytes == [0x78] + Array(compact.utf8))
      if case .string(let s) = value { #expect(JSONEncoding.quoted(s) == compact) }
      // What it writes reads back (NaN and infinities are written as null).
      _ = try JSONParser.parse(compact)
    }
  }

  @Test func escapesEachSpecialCharacterAsTheProtocolSays() {
    #expect(JSONEncoding.quoted("a\"b\\c\nd\re\tf") == #""a\"b\\c\nd\re\tf""#)
    #expect(JSONEncoding.quoted("\u{0}\u{1F}\u{7F}") == #""\u0000\u001f\u007f""#)
    #expect(JSONEncoding.quoted("x\u{2028}y\u{2029}z\u{2027}") == "\"x\\u2028y\\u2029z\u{2027}\"")
    #expect(JSONEncoding.quoted("é😀") == "\"é😀\"")
    #expect(JSONEncoding.compact(.integer(.min)) == "-9223372036854775808")
    #expect(JSONEncoding.compact(.integer(.max)) == "9223372036854775807")
    #expect(JSONEncoding.compact(.integer(0)) == "0")
    let line = ServerMessage.error(id: nil, ProtocolError(.badJSON, "x\ny")).line
    #expect(
      line
        == Array((JSONEncoding.compact(ServerMessage.error(id: nil, ProtocolError(.badJSON, "x\ny")).json) + "\n").utf8)
    )
    #expect(line.filter { $0 == UInt8(ascii: "\n") }.count == 1)
  }
}
