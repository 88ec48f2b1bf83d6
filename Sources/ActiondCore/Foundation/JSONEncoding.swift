// SPDX-License-Identifier: Apache-2.0
/// Writes `JSONValue`s as strict JSON (RFC 8259): compact for the wire (one line,
/// no spaces, which newline-delimited framing requires), pretty for files people read.
///
/// It writes UTF-8 bytes, not `String`s: every announcement is encoded on the way from a
/// key's event to its subscribers, and appending to a `String` scalar by scalar cost most
/// of the daemon's work between a hold's deadline and its command (docs/benchmarks-notebook.md,
/// "The deadline turn, traced"). Runs of bytes that need no escape are copied at once.
public enum JSONEncoding {
  /// One line, no insignificant white space, members in their stored order.
  public static func compact(_ value: JSONValue) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(128)
    write(value, into: &out, indent: nil, level: 0)
    return String(decoding: out, as: UTF8.self)
  }

  /// The compact form's UTF-8 bytes appended to `out`: what the wire carries, without a
  /// `String` in between.
  public static func compact(_ value: JSONValue, into out: inout [UInt8]) {
    write(value, into: &out, indent: nil, level: 0)
  }

  /// Indented with two spaces, ending without a newline.
  public static func pretty(_ value: JSONValue) -> String {
    var out: [UInt8] = []
    write(value, into: &out, indent: 2, level: 0)
    return String(decoding: out, as: UTF8.self)
  }

  /// A string literal with JSON escapes: quotes, backslash and control characters.
  public static func quoted(_ s: String) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(s.utf8.count + 2)
    writeString(s, into: &out)
    return String(decoding: out, as: UTF8.self)
  }

  private static func write(_ value: JSONValue, into out: inout [UInt8], indent: Int?, level: Int) {
    switch value {
    case .null: out.append(contentsOf: "null".utf8)
    case .bool(let b): out.append(contentsOf: b ? "true".utf8 : "false".utf8)
    case .integer(let i): writeInteger(i, into: &out)
    case .double(let d):
      if !d.isFinite {
        out.append(contentsOf: "null".utf8)  // JSON has no NaN or infinities
      } else if abs(d) < 1e15, let i = Int64(exactly: d) {
        writeInteger(i, into: &out)
      } else {
        out.append(contentsOf: String(d).utf8)
      }
    case .string(let s): writeString(s, into: &out)
    case .array(let a):
      if a.isEmpty {
        out.append(contentsOf: "[]".utf8)
        return
      }
      out.append(UInt8(ascii: "["))
      for (i, e) in a.enumerated() {
        if i > 0 { out.append(UInt8(ascii: ",")) }
        newline(&out, indent, level + 1)
        write(e, into: &out, indent: indent, level: level + 1)
      }
      newline(&out, indent, level)
      out.append(UInt8(ascii: "]"))
    case .object(let o):
      if o.isEmpty {
        out.append(contentsOf: "{}".utf8)
        return
      }
      out.append(UInt8(ascii: "{"))
      for (i, m) in o.members.enumerated() {
        if i > 0 { out.append(UInt8(ascii: ",")) }
        newline(&out, indent, level + 1)
        writeString(m.key, into: &out)
        out.append(UInt8(ascii: ":"))
        if indent != nil { out.append(UInt8(ascii: " ")) }
        write(m.value, into: &out, indent: indent, level: level + 1)
      }
      newline(&out, indent, level)
      out.append(UInt8(ascii: "}"))
    }
  }

  private static func newline(_ out: inout [UInt8], _ indent: Int?, _ level: Int) {
    guard let indent else { return }
    out.append(UInt8(ascii: "\n"))
    out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * level))
  }

  /// Decimal digits, as `String(i)` writes them.
  private static func writeInteger(_ i: Int64, into out: inout [UInt8]) {
    if i < 0 { out.append(UInt8(ascii: "-")) }
    // The magnitude as unsigned: Int64.min has no positive counterpart. 20 digits at most.
    var m = i.magnitude
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
      var start = 20
      repeat {
        start -= 1
        digits[start] = UInt8(ascii: "0") + UInt8(m % 10)
        m /= 10
      } while m > 0
      out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
    }
  }

  private static let hex = Array("0123456789abcdef".utf8)

  private static func writeString(_ s: String, into out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    var s = s
    // Native strings are contiguous UTF-8; bridged or lazy ones become so here, once.
    s.withUTF8 { bytes in
      var runStart = 0
      var i = 0
      while i < bytes.count {
        let b = bytes[i]
        let escape: StaticString?
        var length = 1
        switch b {
        case UInt8(ascii: "\""): escape = "\\\""
        case UInt8(ascii: "\\"): escape = "\\\\"
        case UInt8(ascii: "\n"): escape = "\\n"
        case UInt8(ascii: "\r"): escape = "\\r"
        case UInt8(ascii: "\t"): escape = "\\t"
        case 0xE2 where i + 2 < bytes.count && bytes[i + 1] == 0x80 && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9):
          // U+2028 and U+2029: legal in JSON, but they break JavaScript readers.
          escape = bytes[i + 2] == 0xA8 ? "\\u2028" : "\\u2029"
          length = 3
        case 0..<0x20, 0x7F: escape = nil
        default:
          i += 1
          continue
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
        if let escape {
          escape.withUTF8Buffer { out.append(contentsOf: $0) }
        } else {
          out.append(contentsOf: "\\u00".utf8)
          out.append(hex[Int(b >> 4)])
          out.append(hex[Int(b & 0xF)])
        }
        i += length
        runStart = i
      }
      out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
    }
    out.append(UInt8(ascii: "\""))
  }
}
