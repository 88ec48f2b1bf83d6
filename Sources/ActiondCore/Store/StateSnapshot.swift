/// Everything the daemon persists: the assignment per button and the values of
/// store-backed toggles. The "one source of truth" of the seeds.
///
/// On disk (`state.json`, strict JSON, keys sorted so successive files diff cleanly):
/// ```json
/// { "version": 1,
///   "assignments": { "action": { "kind": "org.example.flashlight", "configuration": { "led": "green" } } },
///   "values": { "org.example.timer": true } }
/// ```
/// Values are keyed by ``ControlInstance/storeKey``: the kind, plus the explicit
/// configuration for configured instances (`org.example.flashlight{led=green}`), never
/// parameter defaults. Files written before that used the instance id (defaults included);
/// the engine carries such keys over when it loads them.
public struct StateSnapshot: Equatable, Sendable {
  /// The format this code writes and the only one it reads. A file with another version
  /// is treated as corrupt (kept aside), never half-understood.
  public static let formatVersion: Int64 = 1

  /// The control assigned to one button.
  public struct Assignment: Equatable, Sendable {
    public var kind: String
    /// Parameter values of a configurable control (empty when it has none).
    public var configuration: [String: JSONValue]
    /// The configuration file's assignment this run-time one replaced (nil: the file
    /// assigned nothing). When the file's assignment later differs from it, the operator
    /// edited the file on purpose and the file wins again.
    public var replaces: Replaced?
    public init(kind: String, configuration: [String: JSONValue] = [:], replaces: Replaced? = nil) {
      self.kind = kind
      self.configuration = configuration
      self.replaces = replaces
    }
  }

  /// A configuration-file assignment, as remembered by a run-time one.
  public struct Replaced: Equatable, Sendable {
    public var kind: String
    public var configuration: [String: JSONValue]
    public init(kind: String, configuration: [String: JSONValue] = [:]) {
      self.kind = kind
      self.configuration = configuration
    }
  }

  /// Button name → assignment.
  public var assignments: [String: Assignment]
  /// Store key (``ControlInstance/storeKey``) → value of a store-backed toggle.
  public var values: [String: Bool]

  public init(assignments: [String: Assignment] = [:], values: [String: Bool] = [:]) {
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
    var assignmentMembers: [(key: String, value: JSONValue)] = []
    for (button, assignment) in assignments.sorted(by: { $0.key < $1.key }) {
      let configuration = JSONObject(
        assignment.configuration.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) })
      var entry: JSONObject = ["kind": .string(assignment.kind), "configuration": .object(configuration)]
      if let replaced = assignment.replaces {
        entry["replaces"] = .object([
          "kind": .string(replaced.kind),
          "configuration": .object(
            JSONObject(replaced.configuration.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) })),
        ])
      }
      assignmentMembers.append((key: button, value: .object(entry)))
    }
    let valueMembers = values.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSONValue.bool($0.value)) }
    return .object(
      JSONObject([
        (key: "version", value: .integer(Self.formatVersion)),
        (key: "assignments", value: .object(JSONObject(assignmentMembers))),
        (key: "values", value: .object(JSONObject(valueMembers))),
      ]))
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
    try checkKeys(object, allowed: ["version", "assignments", "values"], at: "$")
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
        let path = "$.assignments.\(button)"
        guard let entry = value.objectValue else {
          throw StateSnapshotError("\(path): expected object, got \(value.typeName)")
        }
        try checkKeys(entry, allowed: ["kind", "configuration", "replaces"], at: path)
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
        var replaces: Replaced?
        if let replacedValue = entry["replaces"] {
          guard let replaced = replacedValue.objectValue else {
            throw StateSnapshotError("\(path).replaces: expected object, got \(replacedValue.typeName)")
          }
          try checkKeys(replaced, allowed: ["kind", "configuration"], at: "\(path).replaces")
          guard let replacedKind = replaced["kind"]?.stringValue, !replacedKind.isEmpty else {
            throw StateSnapshotError("\(path).replaces.kind: expected a non-empty string")
          }
          guard let members = (replaced["configuration"] ?? .object([:])).objectValue else {
            throw StateSnapshotError("\(path).replaces.configuration: expected object")
          }
          replaces = Replaced(kind: replacedKind, configuration: Dictionary(members.map { ($0.key, $0.value) }) { $1 })
        }
        snapshot.assignments[button] = Assignment(kind: kind, configuration: configuration, replaces: replaces)
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
