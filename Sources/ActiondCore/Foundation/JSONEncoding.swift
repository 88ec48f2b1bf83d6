/// Writes `JSONValue`s as strict JSON (RFC 8259): compact for the wire (one line,
/// no spaces, which newline-delimited framing requires), pretty for files people read.
public enum JSONEncoding {
  /// One line, no insignificant white space, members in their stored order.
  public static func compact(_ value: JSONValue) -> String {
    var out = ""
    out.reserveCapacity(128)
    write(value, into: &out, indent: nil, level: 0)
    return out
  }

  /// Indented with two spaces, ending without a newline.
  public static func pretty(_ value: JSONValue) -> String {
    var out = ""
    write(value, into: &out, indent: "  ", level: 0)
    return out
  }

  /// Appends the compact form to `out` (avoids an intermediate string when framing).
  public static func write(_ value: JSONValue, into out: inout String) {
    write(value, into: &out, indent: nil, level: 0)
  }

  /// A string literal with JSON escapes: quotes, backslash and control characters.
  public static func quoted(_ s: String) -> String {
    var out = ""
    writeString(s, into: &out)
    return out
  }

  private static func write(_ value: JSONValue, into out: inout String, indent: String?, level: Int) {
    switch value {
    case .null: out += "null"
    case .bool(let b): out += b ? "true" : "false"
    case .integer(let i): out += String(i)
    case .double(let d):
      if !d.isFinite {
        out += "null"  // JSON has no NaN or infinities
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

  private static func newline(_ out: inout String, _ indent: String?, _ level: Int) {
    guard let indent else { return }
    out += "\n"
    for _ in 0..<level { out += indent }
  }

  private static let hex: [Character] = Array("0123456789abcdef")

  private static func writeString(_ s: String, into out: inout String) {
    out += "\""
    for u in s.unicodeScalars {
      switch u {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case "\u{2028}": out += "\\u2028"  // legal in JSON, but breaks JavaScript readers
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
