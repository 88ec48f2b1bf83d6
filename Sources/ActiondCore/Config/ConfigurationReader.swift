// SPDX-License-Identifier: Apache-2.0
/// Collects problems for one file and reads typed values out of its JSON, reporting
/// (not throwing) every mismatch so that validation goes on and finds all problems.
/// Each reader returns nil when the value is absent or wrong; the caller falls back to
/// the default and keeps going. `package` members are what actiond-mqtt's settings reader
/// uses too; the rest serve the configuration and definition readers of this module only.
package final class ConfigurationReader {
  let file: String
  let document: JSONDocument
  package private(set) var problems: [ConfigurationProblem] = []

  package init(file: String, document: JSONDocument) {
    self.file = file
    self.document = document
  }

  package func report(_ path: JSONPath, _ message: String) {
    let location = document.location(of: path)
    problems.append(
      ConfigurationProblem(file: file, path: path, line: location?.line, column: location?.column, message: message))
  }

  func line(of path: JSONPath) -> Int? { document.location(of: path)?.line }

  /// The object at `path`, after reporting duplicate and unknown members (with a
  /// "did you mean" for near misses). Reports and returns nil when it is not an object.
  /// `allowed` nil accepts any member name (maps such as `assignments`).
  package func object(
    _ value: JSONValue, _ path: JSONPath, allowed: [String]?, what: String = "an object"
  ) -> JSONObject? {
    guard let object = value.objectValue else {
      report(path, "must be \(what), got \(value.typeName)")
      return nil
    }
    for key in object.duplicateKeys { report(path / key, "given more than once") }
    guard let allowed else { return object }
    for key in object.keys where !allowed.contains(key) {
      var message = "unknown key"
      if let suggestion = closestMatch(to: key, in: allowed) { message += " (did you mean \(suggestion)?)" }
      report(path / key, message)
    }
    return object
  }

  func requireMember(_ object: JSONObject, _ key: String, _ path: JSONPath, _ what: String) -> JSONValue? {
    guard let v = object[key] else {
      report(path / key, "missing (\(what))")
      return nil
    }
    return v
  }

  package func string(_ value: JSONValue, _ path: JSONPath, allowEmpty: Bool = false, maxLength: Int = 4096) -> String?
  {
    guard let s = value.stringValue else {
      report(path, "must be a string, got \(value.typeName)")
      return nil
    }
    if !allowEmpty && s.isEmpty {
      report(path, "must not be empty")
      return nil
    }
    if s.utf8.contains(0) {
      report(path, "must not contain a NUL character")
      return nil
    }
    if s.count > maxLength {
      report(path, "is too long (at most \(maxLength) characters)")
      return nil
    }
    return s
  }

  package func string(in object: JSONObject, _ key: String, _ path: JSONPath, allowEmpty: Bool = false) -> String? {
    object[key].flatMap { string($0, path / key, allowEmpty: allowEmpty) }
  }

  func bool(in object: JSONObject, _ key: String, _ path: JSONPath) -> Bool? {
    guard let v = object[key] else { return nil }
    guard let b = v.boolValue else {
      report(path / key, "must be true or false, got \(v.typeName)")
      return nil
    }
    return b
  }

  func integer(_ value: JSONValue, _ path: JSONPath, range: ClosedRange<Int64>, unit: String = "") -> Int64? {
    guard let i = value.integerValue else {
      let got = value.doubleValue != nil ? "a fraction" : value.typeName
      report(path, "must be an integer, got \(got)")
      return nil
    }
    guard range.contains(i) else {
      report(path, "must be between \(range.lowerBound) and \(range.upperBound)\(unit), got \(i)")
      return nil
    }
    return i
  }

  package func integer(
    in object: JSONObject, _ key: String, _ path: JSONPath, range: ClosedRange<Int64>, unit: String = ""
  )
    -> Int64?
  {
    object[key].flatMap { integer($0, path / key, range: range, unit: unit) }
  }

  /// An absolute path (starting with `/`).
  func absolutePath(_ value: JSONValue, _ path: JSONPath) -> String? {
    guard let s = string(value, path) else { return nil }
    guard s.hasPrefix("/") else {
      report(path, "must be an absolute path (starting with /), got \(JSONEncoding.quoted(s))")
      return nil
    }
    return s
  }

  package func absolutePath(in object: JSONObject, _ key: String, _ path: JSONPath) -> String? {
    object[key].flatMap { absolutePath($0, path / key) }
  }

  /// One of a fixed set of words.
  package func word<T>(_ value: JSONValue, _ path: JSONPath, _ choices: [(String, T)]) -> T? {
    let names = choices.map(\.0)
    guard let s = value.stringValue else {
      report(path, "must be one of \(names.joined(separator: ", ")), got \(value.typeName)")
      return nil
    }
    if let hit = choices.first(where: { $0.0 == s }) { return hit.1 }
    var message = "must be one of \(names.joined(separator: ", ")), got \(JSONEncoding.quoted(s))"
    if let suggestion = closestMatch(to: s, in: names) { message += " (did you mean \(suggestion)?)" }
    report(path, message)
    return nil
  }

  /// A user or group: a name (`input`) or a numeric id.
  func account(_ value: JSONValue, _ path: JSONPath) -> AccountReference? {
    switch value {
    case .string(let s):
      guard ConfigurationReader.isValidAccountName(s) else {
        report(path, "must be a user or group name (letters, digits, _ and -, at most 32) or a number")
        return nil
      }
      return .name(s)
    case .integer, .double:
      return integer(value, path, range: 0...Int64(UInt32.max - 1)).map { .id(UInt32($0)) }
    default:
      report(path, "must be a name or a number, got \(value.typeName)")
      return nil
    }
  }

  /// Like `useradd`'s default rule: `[a-z_][a-z0-9_-]*[$]?`, at most 32 characters.
  private static func isValidAccountName(_ s: String) -> Bool {
    var u = Array(s.utf8)
    if u.last == UInt8(ascii: "$") { u.removeLast() }
    guard let first = u.first, u.count <= 32 else { return false }
    let lower: (UInt8) -> Bool = { $0 >= 0x61 && $0 <= 0x7A }
    guard lower(first) || first == UInt8(ascii: "_") else { return false }
    return u.allSatisfy { lower($0) || $0.isASCIIDigit || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
  }
}
