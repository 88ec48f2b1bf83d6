// SPDX-License-Identifier: Apache-2.0
/// An error in JSON text, with where it happened.
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
  public var message: String
  public var location: SourceLocation
  public init(_ message: String, at location: SourceLocation) {
    self.message = message
    self.location = location
  }
  public var description: String { "line \(location.line), column \(location.column): \(message)" }
}

/// A parsed document plus where each value started, so validation errors can name a line.
public struct JSONDocument: Sendable {
  public var root: JSONValue
  /// Start of every value, keyed by its path. Empty when locations were not requested.
  public var locations: [JSONPath: SourceLocation]

  public func location(of path: JSONPath) -> SourceLocation? {
    // A missing member has no location of its own: fall back to its nearest parent.
    var p = path
    while true {
      if let l = locations[p] { return l }
      if p.components.isEmpty { return nil }
      p.components.removeLast()
    }
  }
}

/// A recursive-descent parser for JSON and JSON5.
///
/// Strict mode accepts RFC 8259 JSON only (the wire protocol). JSON5 mode adds what
/// people write in hand-edited configuration: `//` and `/* */` comments, trailing
/// commas, single-quoted strings, unquoted identifier keys, hexadecimal numbers,
/// leading `+`/`.`, `Infinity`/`NaN` and escaped line breaks in strings.
public struct JSONParser {
  public struct Options: Sendable {
    public var json5: Bool
    public var recordLocations: Bool
    /// Nesting deeper than this is an error, so hostile input cannot exhaust the stack.
    public var maxDepth: Int
    public init(json5: Bool = false, recordLocations: Bool = false, maxDepth: Int = 128) {
      self.json5 = json5
      self.recordLocations = recordLocations
      self.maxDepth = maxDepth
    }
    public static let strict = Options()
    public static let configuration = Options(json5: true, recordLocations: true)
  }

  /// Parses one complete document; anything but whitespace (and, in JSON5, comments) after it is an error.
  public static func parse(_ text: String, options: Options = .strict) throws(JSONParseError) -> JSONDocument {
    var copy = text
    let result: Result<JSONDocument, JSONParseError> = copy.withUTF8 { buf in
      Result { () throws(JSONParseError) in try parse(bytes: buf, options: options) }
    }
    return try result.get()
  }

  public static func parse(
    bytes: UnsafeBufferPointer<UInt8>, options: Options = .strict
  ) throws(JSONParseError)
    -> JSONDocument
  {
    var p = JSONParser(bytes: bytes, options: options)
    try p.skipInsignificant()
    let root = try p.parseValue(path: options.recordLocations ? .root : nil, depth: 0)
    try p.skipInsignificant()
    if p.index < p.bytes.count {
      throw p.error("unexpected \(p.describeCurrent()) after the end of the document")
    }
    return JSONDocument(root: root, locations: p.locations)
  }

  /// Convenience for the wire: strict JSON, no locations.
  public static func parseValue(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
    try parse(bytes: bytes, options: .strict).root
  }

  private let bytes: UnsafeBufferPointer<UInt8>
  private let options: Options
  private var index = 0
  private var line = 1
  private var lineStart = 0
  private var locations: [JSONPath: SourceLocation] = [:]

  private init(bytes: UnsafeBufferPointer<UInt8>, options: Options) {
    self.bytes = bytes
    self.options = options
  }

  /// The column of `columnIndex` on the current line: a cache that only moves forward,
  /// so asking for the location of every value costs linear time in total. Walking from
  /// the start of the line each time made one long line quadratic (issue 13, item 15).
  private var columnIndex = 0
  private var column = 1

  /// Where `index` is. Columns count characters, not bytes: UTF-8 continuation bytes are skipped.
  private mutating func location() -> SourceLocation {
    if columnIndex < lineStart || columnIndex > index {
      columnIndex = lineStart
      column = 1
    }
    while columnIndex < index {
      if bytes[columnIndex] & 0xC0 != 0x80 { column += 1 }
      columnIndex += 1
    }
    return SourceLocation(line: line, column: column)
  }

  /// An error at `position` (default: `index`) on the current line; computed from the
  /// start of the line, which is fine once per parse.
  private func error(_ message: String, at position: Int? = nil) -> JSONParseError {
    var copy = self
    copy.index = max(position ?? index, lineStart)
    return JSONParseError(message, at: copy.location())
  }

  private func describeCurrent() -> String {
    guard index < bytes.count else { return "end of input" }
    let b = bytes[index]
    if b >= 0x20 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
    return "byte 0x\(String(b, radix: 16))"
  }

  private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

  private mutating func advance() {
    if bytes[index] == UInt8(ascii: "\n") {
      line += 1
      lineStart = index + 1
    }
    index += 1
  }

  private mutating func skipInsignificant() throws(JSONParseError) {
    while let b = current {
      switch b {
      case 0x20, 0x09, 0x0A, 0x0D:
        advance()
      case UInt8(ascii: "/") where options.json5:
        let next = index + 1 < bytes.count ? bytes[index + 1] : 0
        if next == UInt8(ascii: "/") {
          while let c = current, c != 0x0A { advance() }
        } else if next == UInt8(ascii: "*") {
          let start = location()
          advance()
          advance()
          var closed = false
          while let c = current {
            if c == UInt8(ascii: "*"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
              advance()
              advance()
              closed = true
              break
            }
            advance()
          }
          if !closed { throw JSONParseError("unterminated comment", at: start) }
        } else {
          return
        }
      case 0xC2 where options.json5 && index + 1 < bytes.count && bytes[index + 1] == 0xA0:
        // U+00A0 no-break space: JSON5 counts it as white space.
        index += 2
      case 0xEF
      where index == 0 && bytes.count >= 3 && bytes[1] == 0xBB && bytes[2] == 0xBF:
        // A UTF-8 byte order mark some editors write at the start of a file.
        index += 3
        lineStart = 3
      default:
        return
      }
    }
  }

  private mutating func parseValue(path: JSONPath?, depth: Int) throws(JSONParseError) -> JSONValue {
    if let path { locations[path] = location() }
    guard let b = current else { throw error("expected a value, got end of input") }
    switch b {
    case UInt8(ascii: "{"):
      return try parseObject(path: path, depth: depth)
    case UInt8(ascii: "["):
      return try parseArray(path: path, depth: depth)
    case UInt8(ascii: "\""):
      return .string(try parseString(quote: b))
    case UInt8(ascii: "'") where options.json5:
      return .string(try parseString(quote: b))
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      return try parseNumber()
    case UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "I"), UInt8(ascii: "N"):
      if options.json5 { return try parseNumber() }
      throw error("unexpected \(describeCurrent())")
    default:
      if matchWord("true") { return .bool(true) }
      if matchWord("false") { return .bool(false) }
      if matchWord("null") { return .null }
      throw error("unexpected \(describeCurrent()), expected a value")
    }
  }

  private mutating func matchWord(_ word: StaticString) -> Bool {
    let n = word.utf8CodeUnitCount
    guard index + n <= bytes.count else { return false }
    let w = word.utf8Start
    for i in 0..<n where bytes[index + i] != w[i] { return false }
    if index + n < bytes.count, Self.isIdentifierByte(bytes[index + n]) { return false }
    index += n
    return true
  }

  private static func isIdentifierByte(_ b: UInt8) -> Bool {
    b.isASCIILetter || b.isASCIIDigit || b == UInt8(ascii: "_") || b == UInt8(ascii: "$") || b >= 0x80
  }

  private mutating func parseObject(path: JSONPath?, depth: Int) throws(JSONParseError) -> JSONValue {
    guard depth < options.maxDepth else { throw error("nesting deeper than \(options.maxDepth) levels") }
    advance()  // {
    var members: [(key: String, value: JSONValue)] = []
    try skipInsignificant()
    if current == UInt8(ascii: "}") {
      advance()
      return .object(JSONObject(members))
    }
    while true {
      try skipInsignificant()
      let key: String
      switch current {
      case UInt8(ascii: "\"")?:
        key = try parseString(quote: UInt8(ascii: "\""))
      case UInt8(ascii: "'")? where options.json5:
        key = try parseString(quote: UInt8(ascii: "'"))
      case let c? where options.json5 && (c.isASCIILetter || c == UInt8(ascii: "_") || c == UInt8(ascii: "$")):
        let start = index
        while let c = current, Self.isIdentifierByte(c) { advance() }
        key = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
      case UInt8(ascii: "}")? where options.json5 && !members.isEmpty:
        // Trailing comma before the brace.
        advance()
        return .object(JSONObject(members))
      default:
        throw error("expected a member name in quotes, got \(describeCurrent())")
      }
      try skipInsignificant()
      guard current == UInt8(ascii: ":") else {
        throw error("expected ':' after member name \"\(key)\", got \(describeCurrent())")
      }
      advance()
      try skipInsignificant()
      let value = try parseValue(path: path.map { $0 / key }, depth: depth + 1)
      members.append((key: key, value: value))
      try skipInsignificant()
      switch current {
      case UInt8(ascii: ",")?:
        advance()
      case UInt8(ascii: "}")?:
        advance()
        return .object(JSONObject(members))
      default:
        throw error("expected ',' or '}' in object, got \(describeCurrent())")
      }
    }
  }

  private mutating func parseArray(path: JSONPath?, depth: Int) throws(JSONParseError) -> JSONValue {
    guard depth < options.maxDepth else { throw error("nesting deeper than \(options.maxDepth) levels") }
    advance()  // [
    var elements: [JSONValue] = []
    try skipInsignificant()
    if current == UInt8(ascii: "]") {
      advance()
      return .array(elements)
    }
    while true {
      try skipInsignificant()
      if options.json5, current == UInt8(ascii: "]"), !elements.isEmpty {
        advance()
        return .array(elements)
      }
      elements.append(try parseValue(path: path.map { $0 / elements.count }, depth: depth + 1))
      try skipInsignificant()
      switch current {
      case UInt8(ascii: ",")?:
        advance()
      case UInt8(ascii: "]")?:
        advance()
        return .array(elements)
      default:
        throw error("expected ',' or ']' in array, got \(describeCurrent())")
      }
    }
  }

  private mutating func parseString(quote: UInt8) throws(JSONParseError) -> String {
    let start = location()
    advance()  // opening quote
    var out: [UInt8] = []
    var runStart = index
    while true {
      guard let b = current else { throw JSONParseError("unterminated string", at: start) }
      if b == quote {
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
        advance()
        break
      }
      if b == UInt8(ascii: "\\") {
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
        advance()
        try parseEscape(into: &out)
        runStart = index
        continue
      }
      if b < 0x20 {
        throw error(b == 0x0A ? "unterminated string (line break inside a string)" : "control character in string")
      }
      advance()
    }
    guard let s = String(validating: out, as: UTF8.self) else {
      throw JSONParseError("string is not valid UTF-8", at: start)
    }
    return s
  }

  private mutating func parseEscape(into out: inout [UInt8]) throws(JSONParseError) {
    guard let e = current else { throw error("unterminated escape") }
    advance()
    switch e {
    case UInt8(ascii: "\""): out.append(e)
    case UInt8(ascii: "\\"): out.append(e)
    case UInt8(ascii: "/"): out.append(e)
    case UInt8(ascii: "b"): out.append(0x08)
    case UInt8(ascii: "f"): out.append(0x0C)
    case UInt8(ascii: "n"): out.append(0x0A)
    case UInt8(ascii: "r"): out.append(0x0D)
    case UInt8(ascii: "t"): out.append(0x09)
    case UInt8(ascii: "u"):
      var scalar = try parseHex(digits: 4)
      if (0xD800..<0xDC00).contains(scalar) {
        // A high surrogate must be followed by an escaped low surrogate.
        guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
          throw error("unpaired surrogate in \\u escape")
        }
        advance()
        advance()
        let low = try parseHex(digits: 4)
        guard (0xDC00..<0xE000).contains(low) else { throw error("invalid low surrogate in \\u escape") }
        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
      } else if (0xDC00..<0xE000).contains(scalar) {
        throw error("unpaired surrogate in \\u escape")
      }
      appendUTF8(scalar, to: &out)
    case UInt8(ascii: "'") where options.json5: out.append(e)
    case UInt8(ascii: "v") where options.json5: out.append(0x0B)
    case UInt8(ascii: "0") where options.json5: out.append(0)
    case UInt8(ascii: "x") where options.json5: appendUTF8(try parseHex(digits: 2), to: &out)
    case 0x0A where options.json5: break  // escaped line break: line continuation
    case 0x0D where options.json5:
      if current == 0x0A { advance() }
    default:
      if options.json5, e != UInt8(ascii: "1") && !(e >= UInt8(ascii: "1") && e <= UInt8(ascii: "9")) && e >= 0x20 {
        out.append(e)  // JSON5: any other escaped character stands for itself
      } else {
        throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))'")
      }
    }
  }

  private mutating func parseHex(digits: Int) throws(JSONParseError) -> UInt32 {
    var v: UInt32 = 0
    for _ in 0..<digits {
      guard let c = current, let d = Self.hexValue(c) else { throw error("expected a hexadecimal digit") }
      v = v << 4 | UInt32(d)
      advance()
    }
    return v
  }

  private static func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
    default: return nil
    }
  }

  private func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
    guard let u = Unicode.Scalar(scalar) else { return }
    out.append(contentsOf: UTF8.encode(u)!)
  }

  private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
    let start = index
    var negative = false
    if current == UInt8(ascii: "-") || current == UInt8(ascii: "+") {
      if current == UInt8(ascii: "+") && !options.json5 { throw error("unexpected '+'") }
      negative = current == UInt8(ascii: "-")
      advance()
    }
    if options.json5 {
      if matchWord("Infinity") { return .double(negative ? -.infinity : .infinity) }
      if matchWord("NaN") { return .double(.nan) }
      if current == UInt8(ascii: "0"), index + 1 < bytes.count, bytes[index + 1] | 0x20 == UInt8(ascii: "x") {
        advance()
        advance()
        var v: UInt64 = 0
        var any = false
        while let c = current, let d = Self.hexValue(c) {
          let (m, o1) = v.multipliedReportingOverflow(by: 16)
          let (s, o2) = m.addingReportingOverflow(UInt64(d))
          guard !o1, !o2 else { throw error("hexadecimal number too large") }
          v = s
          any = true
          advance()
        }
        guard any else { throw error("expected hexadecimal digits after 0x") }
        guard v <= UInt64(Int64.max) + (negative ? 1 : 0) else { throw error("hexadecimal number too large") }
        return .integer(negative ? Int64(bitPattern: 0 &- v) : Int64(v))
      }
    }
    var integral = true
    var digits = 0
    if current == UInt8(ascii: "0") {
      advance()
      digits = 1
      if let c = current, c.isASCIIDigit { throw error("leading zeros are not allowed") }
    } else {
      while let c = current, c.isASCIIDigit {
        advance()
        digits += 1
      }
    }
    if current == UInt8(ascii: ".") {
      integral = false
      advance()
      var frac = 0
      while let c = current, c.isASCIIDigit {
        advance()
        frac += 1
      }
      if frac == 0 && !(options.json5 && digits > 0) { throw error("expected digits after '.'") }
      digits += frac
    }
    guard digits > 0 else { throw error("expected digits in number") }
    if let c = current, c | 0x20 == UInt8(ascii: "e") {
      integral = false
      advance()
      if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { advance() }
      var exp = 0
      while let c = current, c.isASCIIDigit {
        advance()
        exp += 1
      }
      guard exp > 0 else { throw error("expected digits in exponent") }
    }
    if let c = current, Self.isIdentifierByte(c) { throw error("unexpected \(describeCurrent()) in number") }
    var text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    if text.hasPrefix("+") { text.removeFirst() }
    if integral, let i = Int64(text) { return .integer(i) }
    // Double() does not take a leading '.' or a trailing '.' (JSON5): normalise.
    if text.hasPrefix(".") { text = "0" + text } else if text.hasPrefix("-.") { text = "-0" + text.dropFirst() }
    if text.hasSuffix(".") { text += "0" }
    // "1.e5" (JSON5) has no digit after the point either: "1.0e5". Done on the bytes, which are
    // ASCII here: String's own substring search would link the regex modules into every program
    // (780 kB of text) for this one line.
    if let dot = text.utf8.firstIndex(of: UInt8(ascii: ".")) {
      let next = text.utf8.index(after: dot)
      if next != text.utf8.endIndex, text.utf8[next] | 0x20 == UInt8(ascii: "e") { text.insert("0", at: next) }
    }
    guard let d = Double(text) else { throw error("invalid number \(text)") }
    // A literal beyond a double's range would silently become 0 or infinity, and `1e-400`
    // would then pass as the integer 0: refuse it instead.
    if d.isInfinite { throw error("number \(text) is too large", at: start) }
    if d == 0, text.utf8.prefix(while: { $0 | 0x20 != UInt8(ascii: "e") }).contains(where: { $0 >= 0x31 && $0 <= 0x39 })
    {
      throw error("number \(text) is too small (it would read as 0)", at: start)
    }
    return .double(d)
  }
}
