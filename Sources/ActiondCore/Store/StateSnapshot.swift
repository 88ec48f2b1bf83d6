// SPDX-License-Identifier: Apache-2.0
/// Everything the daemon persists: the run-time assignments per button and gesture, and
/// the values of store-backed toggles. The "one source of truth" of the seeds.
///
/// On disk (`state.json`, strict JSON, keys sorted so successive files diff cleanly):
/// ```json
/// { "version": 1,
///   "assignments": { "action": { "kind": "org.example.flashlight", "configuration": { "led": "green" } } },
///   "gestures": { "action": { "doublePress": { "kind": "org.example.mute", "configuration": {} } } },
///   "values": { "org.example.timer": true } }
/// ```
/// `assignments` holds each button's `hold`, in the form files had before gestures
/// existed (plus `"momentary": true` for a momentary one), so those files load unchanged.
/// `gestures` holds the other gestures (`doublePress`, `longHold`) per button, each entry
/// shaped like a hold's without `momentary`; it is written only when one exists, so a
/// daemon whose buttons only hold writes exactly what it wrote before.
/// Values are keyed by ``ControlInstance/storeKey``: the kind, plus the explicit
/// configuration for configured instances (`org.example.flashlight{led=green}`), never
/// parameter defaults. Files written before that used the instance id (defaults included);
/// the engine carries such keys over when it loads them.
public struct StateSnapshot: Equatable, Sendable {
  /// The format this code writes and the only one it reads. A file with another version
  /// is treated as corrupt (kept aside), never half-understood.
  public static let formatVersion: Int64 = 1

  /// The control assigned to one gesture of one button.
  public struct Assignment: Equatable, Sendable {
    public var kind: String
    /// Parameter values of a configurable control (empty when it has none).
    public var configuration: [String: JSONValue]
    /// A momentary hold (only ever true for a hold).
    public var momentary: Bool
    /// The configuration file's assignment of the same button and gesture this run-time
    /// one replaced (nil: the file assigned nothing there). When the file's assignment
    /// later differs from it, the operator edited the file on purpose and the file wins again.
    public var replaces: Replaced?
    public init(
      kind: String, configuration: [String: JSONValue] = [:], momentary: Bool = false, replaces: Replaced? = nil
    ) {
      self.kind = kind
      self.configuration = configuration
      self.momentary = momentary
      self.replaces = replaces
    }
  }

  /// A configuration-file assignment, as remembered by a run-time one.
  public struct Replaced: Equatable, Sendable {
    public var kind: String
    public var configuration: [String: JSONValue]
    /// Whether the file's hold was momentary: changing only that is an edit of the file too.
    public var momentary: Bool
    public init(kind: String, configuration: [String: JSONValue] = [:], momentary: Bool = false) {
      self.kind = kind
      self.configuration = configuration
      self.momentary = momentary
    }
  }

  /// Button name → gesture → assignment. A button's gestures are never an empty map.
  public var assignments: [String: [Gesture: Assignment]]
  /// Store key (``ControlInstance/storeKey``) → value of a store-backed toggle.
  public var values: [String: Bool]

  public init(assignments: [String: [Gesture: Assignment]] = [:], values: [String: Bool] = [:]) {
    self.assignments = assignments
    self.values = values
  }

  /// No assignments, no values: what a first start (or a corrupt file) begins from,
  /// before configuration defaults apply.
  public static let empty = StateSnapshot()

  // MARK: Codec

  /// The JSON document (pretty, sorted keys, trailing newline).
  public func encoded() -> String {
    JSONEncoding.pretty(jsonValue) + "\n"
  }

  /// The snapshot as a JSON value.
  public var jsonValue: JSONValue {
    func sortedObject(_ members: [String: JSONValue]) -> JSONValue {
      .object(JSONObject(members.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }))
    }
    func entry(_ assignment: Assignment) -> JSONValue {
      var entry: JSONObject = [
        "kind": .string(assignment.kind), "configuration": sortedObject(assignment.configuration),
      ]
      // Written only when true, so a file without momentary holds reads as before gestures.
      if assignment.momentary { entry["momentary"] = .bool(true) }
      if let replaced = assignment.replaces {
        var r: JSONObject = ["kind": .string(replaced.kind), "configuration": sortedObject(replaced.configuration)]
        if replaced.momentary { r["momentary"] = .bool(true) }
        entry["replaces"] = .object(r)
      }
      return .object(entry)
    }
    var holdMembers: [(key: String, value: JSONValue)] = []
    var gestureMembers: [(key: String, value: JSONValue)] = []
    for (button, gestures) in assignments.sorted(by: { $0.key < $1.key }) {
      if let hold = gestures[.hold] { holdMembers.append((key: button, value: entry(hold))) }
      let others = Gesture.allCases.filter { $0 != .hold }.compactMap { g in
        gestures[g].map { (key: g.rawValue, value: entry($0)) }
      }
      if !others.isEmpty { gestureMembers.append((key: button, value: .object(JSONObject(others)))) }
    }
    let valueMembers = values.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSONValue.bool($0.value)) }
    var members: [(key: String, value: JSONValue)] = [
      (key: "version", value: .integer(Self.formatVersion)),
      (key: "assignments", value: .object(JSONObject(holdMembers))),
    ]
    if !gestureMembers.isEmpty { members.append((key: "gestures", value: .object(JSONObject(gestureMembers)))) }
    members.append((key: "values", value: .object(JSONObject(valueMembers))))
    return .object(JSONObject(members))
  }

  /// Parses a document written by ``encoded()``. Anything else (bad JSON, another
  /// version, a wrong shape, duplicate keys) is an error naming the first problem.
  public static func decode(_ text: String) throws(StateSnapshotError) -> StateSnapshot {
    let document: JSONDocument
    do { document = try JSONParser.parse(text) } catch { throw StateSnapshotError("invalid JSON: \(error)") }
    return try decode(document.root)
  }

  /// Validates and converts a parsed document.
  public static func decode(_ root: JSONValue) throws(StateSnapshotError) -> StateSnapshot {
    guard let object = root.objectValue else { throw StateSnapshotError("expected an object, got \(root.typeName)") }
    try checkKeys(object, allowed: ["version", "assignments", "gestures", "values"], at: "$")
    guard let versionValue = object["version"] else { throw StateSnapshotError("$.version is missing") }
    guard let version = versionValue.integerValue else {
      throw StateSnapshotError("$.version: expected integer, got \(versionValue.typeName)")
    }
    guard version == formatVersion else {
      throw StateSnapshotError("$.version: format version \(version) is not supported (expected \(formatVersion))")
    }
    var snapshot = StateSnapshot()
    if let assignmentsValue = object["assignments"] {
      guard let assignments = assignmentsValue.objectValue else {
        throw StateSnapshotError("$.assignments: expected object, got \(assignmentsValue.typeName)")
      }
      try checkKeys(assignments, allowed: nil, at: "$.assignments")
      for (button, value) in assignments {
        snapshot.assignments[button, default: [:]][.hold] = try decodeAssignment(
          value, at: "$.assignments.\(button)", momentaryAllowed: true)
      }
    }
    if let gesturesValue = object["gestures"] {
      guard let buttons = gesturesValue.objectValue else {
        throw StateSnapshotError("$.gestures: expected object, got \(gesturesValue.typeName)")
      }
      try checkKeys(buttons, allowed: nil, at: "$.gestures")
      let others = Gesture.allCases.filter { $0 != .hold }
      for (button, value) in buttons {
        let path = "$.gestures.\(button)"
        guard let gestures = value.objectValue else {
          throw StateSnapshotError("\(path): expected object, got \(value.typeName)")
        }
        // The hold lives in `assignments`; an empty object is no assignment and not written.
        try checkKeys(gestures, allowed: Set(others.map(\.rawValue)), at: path)
        guard !gestures.isEmpty else { throw StateSnapshotError("\(path): expected at least one gesture") }
        for gesture in others {
          guard let entry = gestures[gesture.rawValue] else { continue }
          snapshot.assignments[button, default: [:]][gesture] = try decodeAssignment(
            entry, at: "\(path).\(gesture.rawValue)", momentaryAllowed: false)
        }
      }
    }
    if let valuesValue = object["values"] {
      guard let values = valuesValue.objectValue else {
        throw StateSnapshotError("$.values: expected object, got \(valuesValue.typeName)")
      }
      try checkKeys(values, allowed: nil, at: "$.values")
      for (id, value) in values {
        guard let flag = value.boolValue else {
          throw StateSnapshotError("$.values.\(id): expected boolean, got \(value.typeName)")
        }
        snapshot.values[id] = flag
      }
    }
    return snapshot
  }

  private static func decodeAssignment(
    _ value: JSONValue, at path: String, momentaryAllowed: Bool
  ) throws(StateSnapshotError) -> Assignment {
    guard let entry = value.objectValue else {
      throw StateSnapshotError("\(path): expected object, got \(value.typeName)")
    }
    try checkKeys(
      entry,
      allowed: momentaryAllowed
        ? ["kind", "configuration", "momentary", "replaces"] : ["kind", "configuration", "replaces"],
      at: path)
    guard let kind = entry["kind"]?.stringValue, !kind.isEmpty else {
      throw StateSnapshotError("\(path).kind: expected a non-empty string")
    }
    var configuration: [String: JSONValue] = [:]
    if let configurationValue = entry["configuration"] {
      guard let members = configurationValue.objectValue else {
        throw StateSnapshotError("\(path).configuration: expected object, got \(configurationValue.typeName)")
      }
      try checkKeys(members, allowed: nil, at: "\(path).configuration")
      for (name, parameter) in members { configuration[name] = parameter }
    }
    let momentary = try decodeMomentary(entry, at: path)
    var replaces: Replaced?
    if let replacedValue = entry["replaces"] {
      guard let replaced = replacedValue.objectValue else {
        throw StateSnapshotError("\(path).replaces: expected object, got \(replacedValue.typeName)")
      }
      try checkKeys(
        replaced, allowed: momentaryAllowed ? ["kind", "configuration", "momentary"] : ["kind", "configuration"],
        at: "\(path).replaces")
      guard let replacedKind = replaced["kind"]?.stringValue, !replacedKind.isEmpty else {
        throw StateSnapshotError("\(path).replaces.kind: expected a non-empty string")
      }
      guard let members = (replaced["configuration"] ?? .object([:])).objectValue else {
        throw StateSnapshotError("\(path).replaces.configuration: expected object")
      }
      replaces = Replaced(
        kind: replacedKind, configuration: Dictionary(members.map { ($0.key, $0.value) }) { $1 },
        momentary: try decodeMomentary(replaced, at: "\(path).replaces"))
    }
    return Assignment(kind: kind, configuration: configuration, momentary: momentary, replaces: replaces)
  }

  private static func decodeMomentary(_ entry: JSONObject, at path: String) throws(StateSnapshotError) -> Bool {
    guard let value = entry["momentary"] else { return false }
    guard let flag = value.boolValue else {
      throw StateSnapshotError("\(path).momentary: expected boolean, got \(value.typeName)")
    }
    return flag
  }

  private static func checkKeys(_ object: JSONObject, allowed: Set<String>?, at path: String) throws(StateSnapshotError)
  {
    if let duplicate = object.duplicateKeys.first {
      throw StateSnapshotError("\(path): duplicate key \"\(duplicate)\"")
    }
    if let allowed, let unknown = object.keys.first(where: { !allowed.contains($0) }) {
      throw StateSnapshotError("\(path): unknown key \"\(unknown)\"")
    }
  }
}

/// Why a state file could not be read as a ``StateSnapshot``.
public struct StateSnapshotError: Error, Equatable, Sendable, CustomStringConvertible {
  public var message: String
  public init(_ message: String) { self.message = message }
  public var description: String { message }
}
