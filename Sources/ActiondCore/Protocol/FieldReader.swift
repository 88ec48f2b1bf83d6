// SPDX-License-Identifier: Apache-2.0
/// Reads the members of one wire object with precise `bad-request` messages:
/// `field "kind" of request "get" must be a string, got number`.
///
/// Requests are read strictly (unknown members are rejected, so a typo such as
/// `"kinds"` for `"kind"` is an error, not a silently ignored field). Messages the
/// daemon sends are read leniently by clients (unknown members are ignored), so a
/// newer daemon can add fields without breaking older clients.
struct FieldReader {
  let object: JSONObject
  /// How errors name the object: `request "get"`, `event "pressed"`, `control`.
  let context: String
  /// How requests are read (protocol.md: a wrong type or an empty member is
  /// `bad-request`): `null` is a wrong type rather than an absent member, and an empty
  /// string is refused wherever a string is read. Off for what the daemon sends, which
  /// clients read leniently. (Duplicate members in a request, at any depth, are refused
  /// before any reader sees it: ``ClientMessage/decode(_:)``.)
  let strict: Bool
  private(set) var used: Set<String> = []

  init(_ object: JSONObject, context: String, strict: Bool = false) throws(ProtocolError) {
    self.object = object
    self.context = context
    self.strict = strict
    if let dup = object.duplicateKeys.first {
      throw .badRequest("\(context) has field \"\(dup)\" more than once")
    }
  }

  init(_ value: JSONValue, context: String, strict: Bool = false) throws(ProtocolError) {
    guard let object = value.objectValue else {
      throw .badRequest("\(context) must be an object, got \(value.typeName)")
    }
    try self.init(object, context: context, strict: strict)
  }

  private func mismatch(_ key: String, _ expected: String, _ got: JSONValue) -> ProtocolError {
    .badRequest("field \"\(key)\" of \(context) must be \(expected), got \(got.typeName)")
  }

  private func missing(_ key: String) -> ProtocolError {
    .badRequest("\(context) is missing field \"\(key)\"")
  }

  /// The member, or nil when absent. `null` counts as absent for optional fields.
  mutating func raw(_ key: String) -> JSONValue? {
    used.insert(key)
    guard let v = object[key], !v.isNull else { return nil }
    return v
  }

  /// The member, or nil when absent; `null` is absent, or (strict) a wrong type.
  private mutating func present(_ key: String, _ expected: String) throws(ProtocolError) -> JSONValue? {
    used.insert(key)
    guard let v = object[key] else { return nil }
    if v.isNull {
      if strict { throw mismatch(key, expected, v) }
      return nil
    }
    return v
  }

  mutating func optionalString(_ key: String) throws(ProtocolError) -> String? {
    guard let v = try present(key, "a string") else { return nil }
    guard let s = v.stringValue else { throw mismatch(key, "a string", v) }
    if strict && s.isEmpty { throw .badRequest("field \"\(key)\" of \(context) must not be empty") }
    return s
  }

  /// A required string; empty strings are rejected because no name on the wire may be empty.
  mutating func string(_ key: String) throws(ProtocolError) -> String {
    guard let s = try optionalString(key) else { throw missing(key) }
    guard !s.isEmpty else { throw .badRequest("field \"\(key)\" of \(context) must not be empty") }
    return s
  }

  mutating func optionalBool(_ key: String) throws(ProtocolError) -> Bool? {
    guard let v = try present(key, "true or false") else { return nil }
    guard let b = v.boolValue else { throw mismatch(key, "true or false", v) }
    return b
  }

  mutating func bool(_ key: String) throws(ProtocolError) -> Bool {
    guard let b = try optionalBool(key) else { throw missing(key) }
    return b
  }

  mutating func optionalInteger(_ key: String) throws(ProtocolError) -> Int64? {
    guard let v = try present(key, "an integer") else { return nil }
    guard let i = v.integerValue else { throw mismatch(key, "an integer", v) }
    return i
  }

  mutating func integer(_ key: String) throws(ProtocolError) -> Int64 {
    guard let i = try optionalInteger(key) else { throw missing(key) }
    return i
  }

  mutating func optionalObject(_ key: String) throws(ProtocolError) -> JSONObject? {
    guard let v = try present(key, "an object") else { return nil }
    guard let o = v.objectValue else { throw mismatch(key, "an object", v) }
    return o
  }

  mutating func object(_ key: String) throws(ProtocolError) -> JSONObject {
    guard let o = try optionalObject(key) else { throw missing(key) }
    return o
  }

  mutating func optionalArray(_ key: String) throws(ProtocolError) -> [JSONValue]? {
    guard let v = try present(key, "an array") else { return nil }
    guard let a = v.arrayValue else { throw mismatch(key, "an array", v) }
    return a
  }

  mutating func array(_ key: String) throws(ProtocolError) -> [JSONValue] {
    guard let a = try optionalArray(key) else { throw missing(key) }
    return a
  }

  /// An array of non-empty strings; the message names the offending element.
  mutating func optionalStringArray(_ key: String) throws(ProtocolError) -> [String]? {
    guard let a = try optionalArray(key) else { return nil }
    var out: [String] = []
    out.reserveCapacity(a.count)
    for (i, e) in a.enumerated() {
      guard let s = e.stringValue else {
        throw .badRequest("element \(i) of field \"\(key)\" of \(context) must be a string, got \(e.typeName)")
      }
      guard !s.isEmpty else {
        throw .badRequest("element \(i) of field \"\(key)\" of \(context) must not be empty")
      }
      out.append(s)
    }
    return out
  }

  mutating func stringArray(_ key: String) throws(ProtocolError) -> [String] {
    guard let a = try optionalStringArray(key) else { throw missing(key) }
    return a
  }

  /// Rejects members nobody asked for (strict reading of requests).
  func rejectUnknown() throws(ProtocolError) {
    for key in object.keys where !used.contains(key) {
      throw .badRequest("\(context) has an unexpected field \"\(key)\"")
    }
  }
}

/// Builds wire objects while leaving out absent optional members, so every
/// message has one canonical form.
struct ObjectBuilder {
  var object = JSONObject()
  init() {}
  init(_ key: String, _ value: JSONValue) { set(key, value) }
  /// Appends the member. A builder sets each key once, so it does not look for an earlier
  /// member of that name as `JSONObject`'s setter does: every announcement is built on the
  /// way from a key's event to its subscribers (checked in debug builds).
  mutating func set(_ key: String, _ value: JSONValue) {
    assert(object[key] == nil, "\(key) set twice")
    object.append(key: key, value: value)
  }
  mutating func set(_ key: String, _ value: String?) {
    if let value { set(key, .string(value)) }
  }
  mutating func set(_ key: String, _ value: Bool?) {
    if let value { set(key, .bool(value)) }
  }
  mutating func set(_ key: String, _ value: Int64?) {
    if let value { set(key, .integer(value)) }
  }
  mutating func set(_ key: String, strings: [String]?) {
    if let strings { set(key, .array(strings.map { .string($0) })) }
  }
  var value: JSONValue { .object(object) }
}

extension Optional where Wrapped == Bool {
  /// `true`, `false` or `null`: a tri-state value that is always present on the wire.
  var json: JSONValue { map { .bool($0) } ?? .null }
}
