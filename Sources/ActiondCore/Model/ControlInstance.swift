// SPDX-License-Identifier: Apache-2.0
/// A configured control: a definition's kind plus values for its parameters
/// (`AppIntentControlConfiguration`). Several instances of one kind may exist, e.g. two
/// flashlights with `led=green` and `led=red`. An assignment puts one instance on a button.
public struct ControlInstance: Hashable, Sendable, CustomStringConvertible {
  /// The definition's kind.
  public let kind: String
  /// The values the assignment gave explicitly (what is persisted and sent back to clients).
  public let configuration: [String: ParameterValue]
  /// Every parameter that has a value: the explicit ones plus defaults.
  /// With `requiresConfiguration`, defaults of required parameters are not applied.
  public let values: [String: ParameterValue]
  /// Required parameters still without a value, in declaration order. Non-empty means
  /// unconfigured: the instance cannot be performed and its hint says what is missing.
  public let missing: [String]

  /// Whether the instance can be performed (no required parameter is missing).
  public var isConfigured: Bool { missing.isEmpty }

  /// Canonical, stable identifier: the kind alone without values, otherwise the kind and
  /// the values sorted by name, `org.example.flashlight{led=green}`,
  /// `org.example.x{a=1,b=true}`. In values, `\`, `,`, `=`, `{` and `}` are escaped with `\`.
  public var id: String {
    guard !values.isEmpty else { return kind }
    let parts = values.keys.sorted().map { "\($0)=\(ControlInstance.escape(values[$0]!.text))" }
    return kind + "{" + parts.joined(separator: ",") + "}"
  }

  /// The key of a store-backed value in the state store: the kind alone without explicit
  /// values, otherwise the kind and only the values the assignment gave (not defaults),
  /// escaped like ``id``. Editing a parameter's default in the definition therefore keeps
  /// the user's stored value; two configurations the user chose differently stay apart.
  public var storeKey: String {
    guard !configuration.isEmpty else { return kind }
    let parts = configuration.keys.sorted().map { "\($0)=\(ControlInstance.escape(configuration[$0]!.text))" }
    return kind + "{" + parts.joined(separator: ",") + "}"
  }

  /// The kind a store key (``storeKey``, or an ``id`` as older state files used) belongs to.
  public static func kind(ofStoreKey key: String) -> String {
    key.firstIndex(of: "{").map { String(key[..<$0]) } ?? key
  }

  public var description: String { id }

  /// The explicit configuration as a JSON object, members sorted by name: what the socket
  /// protocol and the state store carry, and what `init(definition:configuration:)` reads back.
  public var configurationJSON: JSONObject {
    JSONObject(configuration.keys.sorted().map { (key: $0, value: configuration[$0]!.json) })
  }

  /// The `ACTIOND_PARAM_<NAME>` variables an exec intent or value command gets, one per value.
  public var parameterEnvironment: [String: String] {
    var env: [String: String] = [:]
    for (name, value) in values { env[ParameterSpec.environmentName(for: name)] = value.text }
    return env
  }

  /// Builds an instance from already-typed values; each is checked against the definition.
  public init(
    definition: ControlDefinition, configuration: [String: ParameterValue]
  ) throws(ParameterProblems) {
    var problems: [ParameterProblem] = []
    for name in configuration.keys.sorted() {
      guard let spec = definition.parameter(named: name) else {
        problems.append(ParameterProblem(parameter: name, message: ControlInstance.unknownMessage(name, definition)))
        continue
      }
      if let message = spec.check(configuration[name]!) {
        problems.append(ParameterProblem(parameter: name, message: message))
      } else if definition.pathParameters.contains(name),
        let message = ParameterSubstitution.pathComponentProblem(configuration[name]!.text)
      {
        problems.append(ParameterProblem(parameter: name, message: message))
      }
    }
    guard problems.isEmpty else { throw ParameterProblems(problems: problems) }
    var values = configuration
    var missing: [String] = []
    for spec in definition.parameters where values[spec.name] == nil {
      if let d = spec.defaultValue, !(definition.requiresConfiguration && spec.required) {
        values[spec.name] = d
      } else if spec.required {
        missing.append(spec.name)
      }
    }
    self.kind = definition.kind
    self.configuration = configuration
    self.values = values
    self.missing = missing
  }

  /// Builds an instance from a JSON `configuration` object (configuration file, socket request,
  /// state store). Every problem is reported, keyed by parameter name, in the object's order.
  public init(definition: ControlDefinition, configuration json: JSONObject) throws(ParameterProblems) {
    var typed: [String: ParameterValue] = [:]
    var problems: [ParameterProblem] = []
    for name in json.duplicateKeys {
      problems.append(ParameterProblem(parameter: name, message: "given more than once"))
    }
    for (name, value) in json {
      guard let spec = definition.parameter(named: name) else {
        problems.append(ParameterProblem(parameter: name, message: ControlInstance.unknownMessage(name, definition)))
        continue
      }
      guard let v = ParameterValue(json: value) else {
        problems.append(ParameterProblem(parameter: name, message: typeMessage(spec)))
        continue
      }
      if let message = spec.check(v)
        ?? (definition.pathParameters.contains(name) ? ParameterSubstitution.pathComponentProblem(v.text) : nil)
      {
        problems.append(ParameterProblem(parameter: name, message: message))
        continue
      }
      typed[name] = v
    }
    guard problems.isEmpty else { throw ParameterProblems(problems: problems) }
    try self.init(definition: definition, configuration: typed)
  }

  private static func unknownMessage(_ name: String, _ definition: ControlDefinition) -> String {
    let known = definition.parameters.map(\.name)
    if known.isEmpty { return "unknown parameter: \(definition.kind) takes no parameters" }
    var m = "unknown parameter of \(definition.kind)"
    if let s = closestMatch(to: name, in: known) { m += " (did you mean \(s)?)" }
    return m + "; known: " + known.joined(separator: ", ")
  }

  static func escape(_ s: String) -> String {
    var out = ""
    for c in s {
      if c == "\\" || c == "," || c == "=" || c == "{" || c == "}" { out.append("\\") }
      out.append(c)
    }
    return out
  }
}

private func typeMessage(_ spec: ParameterSpec) -> String {
  switch spec.type {
  case .string, .choice: return "must be a string"
  case .integer: return "must be an integer"
  case .boolean: return "must be a boolean"
  }
}

/// One problem with a parameter value of a control instance.
public struct ParameterProblem: Hashable, Sendable, CustomStringConvertible {
  public var parameter: String
  public var message: String
  public init(parameter: String, message: String) {
    self.parameter = parameter
    self.message = message
  }
  public var description: String { "\(parameter): \(message)" }
}

/// Every problem found while building a `ControlInstance`.
public struct ParameterProblems: Error, Hashable, Sendable, CustomStringConvertible {
  public var problems: [ParameterProblem]
  public init(problems: [ParameterProblem]) { self.problems = problems }
  public var description: String { problems.map(\.description).joined(separator: "; ") }
}

/// Parameter placeholders in argv elements, paths and environment values.
///
/// `${name}` is replaced by the parameter's text (`ParameterValue.text`); the result stays
/// *one* argv element whatever it contains: there is no shell, no word splitting, no
/// globbing, no quote removal. So `["systemctl", "start", "${unit}"]` with
/// `unit = "a b;rm -rf /"` runs systemctl with exactly three arguments. A placeholder may
/// be part of a longer element (`--unit=${unit}`, `/sys/class/leds/${led}/brightness`).
/// `$${` stands for a literal `${`; any other `$` is literal (`$HOME` stays `$HOME`:
/// nothing expands environment variables).
public enum ParameterSubstitution {
  /// A malformed template or a placeholder without a value.
  public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
  }

  /// The parameter names a template refers to, in order of appearance (with repeats).
  public static func placeholders(in template: String) throws(Failure) -> [String] {
    var names: [String] = []
    try scan(template) { (piece: Piece) in
      if case .placeholder(let n) = piece { names.append(n) }
    }
    return names
  }

  /// The template with every `${name}` replaced by `values[name].text`.
  public static func substitute(_ template: String, values: [String: ParameterValue]) throws(Failure) -> String {
    try substitute(template, values: values, inPath: false)
  }

  /// Like `substitute(_:values:)` for a file system path (a write or file path, a working
  /// directory): each value must be one path component (`pathComponentProblem`), so a
  /// parameter can pick *which* LED but never lead the path elsewhere (`../../etc/shadow`).
  public static func substitutePath(_ template: String, values: [String: ParameterValue]) throws(Failure) -> String {
    try substitute(template, values: values, inPath: true)
  }

  /// Why a value cannot stand for one path component (empty, `.`, `..`, contains `/` or NUL), or nil.
  public static func pathComponentProblem(_ value: String) -> String? {
    if value.isEmpty { return "must not be empty (it is used in a path)" }
    if value == "." || value == ".." { return "must not be . or .. (it is used in a path)" }
    if value.contains("/") { return "must not contain / (it is used in a path as one component)" }
    if value.utf8.contains(0) { return "must not contain a NUL character" }
    return nil
  }

  private static func substitute(
    _ template: String, values: [String: ParameterValue], inPath: Bool
  ) throws(Failure) -> String {
    // Most templates name no parameter: one byte scan, and they stand as written. This runs
    // for every element of a hold's command at each key-down (actiond-bench's hold turn).
    guard mayHavePlaceholder(template) else { return template }
    var out = ""
    var failure: String?
    try scan(template) { (piece: Piece) in
      switch piece {
      case .literal(let s): out += s
      case .placeholder(let n):
        guard let v = values[n] else {
          if failure == nil { failure = "parameter \(n) has no value" }
          return
        }
        if inPath, failure == nil, let problem = pathComponentProblem(v.text) {
          failure = "parameter \(n) \(problem)"
        }
        out += v.text
      }
    }
    if let failure { throw Failure(message: failure) }
    return out
  }

  /// False when `template` has no `$`, so that substituting leaves it as it is.
  static func mayHavePlaceholder(_ template: String) -> Bool {
    template.utf8.contains(UInt8(ascii: "$"))
  }

  enum Piece {
    case literal(Substring)
    case placeholder(String)
  }

  private static func scan(_ template: String, _ body: (Piece) -> Void) throws(Failure) {
    var rest = Substring(template)
    while let dollar = rest.firstIndex(of: "$") {
      let afterDollar = rest.index(after: dollar)
      if rest[afterDollar...].hasPrefix("${") {
        // `$${`: a literal `${`.
        body(.literal(rest[..<dollar]))
        body(.literal("${"))
        rest = rest[rest.index(afterDollar, offsetBy: 2)...]
      } else if rest[afterDollar...].hasPrefix("{") {
        body(.literal(rest[..<dollar]))
        let nameStart = rest.index(after: afterDollar)
        guard let close = rest[nameStart...].firstIndex(of: "}") else {
          throw Failure(message: "unterminated ${ (write $${ for a literal ${)")
        }
        let name = String(rest[nameStart..<close])
        guard ParameterSpec.isValidName(name) else {
          throw Failure(message: "${\(name)} is not a parameter name (lower-case letters, digits and _)")
        }
        body(.placeholder(name))
        rest = rest[rest.index(after: close)...]
      } else {
        body(.literal(rest[...dollar]))
        rest = rest[afterDollar...]
      }
    }
    body(.literal(rest))
  }
}

extension ControlDefinition {
  /// Parameters used in a file system path (write or file `path`, `workingDirectory`):
  /// their values must be single path components.
  public var pathParameters: Set<String> {
    var templates: [String] = []
    switch intent {
    case .exec(let e): templates += e.workingDirectory.map { [$0] } ?? []
    case .write(let path, _, _): templates.append(path)
    case .state, .provider: break
    }
    switch value {
    case .exec(let e)?: templates += e.workingDirectory.map { [$0] } ?? []
    case .file(let path, _)?: templates.append(path)
    default: break
    }
    var names = Set<String>()
    for t in templates {
      // Validated definitions have well-formed templates; a malformed one contributes nothing.
      if let found = try? ParameterSubstitution.placeholders(in: t) { names.formUnion(found) }
    }
    return names
  }
}

extension ExecSpec {
  /// The spec with parameter values substituted into argv, working directory and environment values.
  public func substituting(_ values: [String: ParameterValue]) throws(ParameterSubstitution.Failure) -> ExecSpec {
    // Without a `$` anywhere the spec is its own result: no new argv array, no environment
    // rebuilt key by key (hashing each) for every press.
    guard
      argv.contains(where: ParameterSubstitution.mayHavePlaceholder)
        || workingDirectory.map(ParameterSubstitution.mayHavePlaceholder) == true
        || environment.values.contains(where: ParameterSubstitution.mayHavePlaceholder)
    else { return self }
    var copy = self
    copy.argv = []
    for element in argv { copy.argv.append(try ParameterSubstitution.substitute(element, values: values)) }
    if let w = workingDirectory { copy.workingDirectory = try ParameterSubstitution.substitutePath(w, values: values) }
    for (k, v) in environment { copy.environment[k] = try ParameterSubstitution.substitute(v, values: values) }
    return copy
  }
}

extension IntentSpec {
  /// The intent with parameter values substituted (argv, working directory, environment, write path).
  public func substituting(_ values: [String: ParameterValue]) throws(ParameterSubstitution.Failure) -> IntentSpec {
    switch self {
    case .exec(let e): return .exec(try e.substituting(values))
    case .write(let path, let on, let off):
      return .write(path: try ParameterSubstitution.substitutePath(path, values: values), on: on, off: off)
    case .state, .provider: return self
    }
  }
}

extension ValueProviderSpec {
  /// The provider with parameter values substituted (argv, working directory, environment, file path).
  public func substituting(
    _ values: [String: ParameterValue]
  ) throws(ParameterSubstitution.Failure) -> ValueProviderSpec {
    switch self {
    case .exec(let e): return .exec(try e.substituting(values))
    case .file(let path, let on):
      return .file(path: try ParameterSubstitution.substitutePath(path, values: values), on: on)
    case .store, .provider: return self
    }
  }
}

/// The closest of `candidates` to `word`, for "did you mean" hints: equal ignoring case,
/// else within a small edit distance (a third of the word's length, at least 1, at most 2; a swap of two
/// neighbours counts as one edit), else the only candidate the word is a prefix of (`warn`).
func closestMatch(to word: String, in candidates: [String]) -> String? {
  let lw = Array(word.lowercased().utf8)
  guard !lw.isEmpty else { return nil }
  if let exact = candidates.first(where: { Array($0.lowercased().utf8) == lw }) { return exact }
  let limit = min(2, max(1, lw.count / 3))
  var best: (String, Int, Bool)?
  // The edit distance costs the product of both lengths: a typo of a name is short, so a
  // longer word is not compared at all, and a candidate only when its length is within
  // the limit of the word's (the distance is at least the difference). An 8 KiB key
  // compared with every key name used to take seconds.
  for c in candidates where lw.count <= maxSuggestionLength {
    let lc = Array(c.lowercased().utf8)
    guard abs(lc.count - lw.count) <= limit else { continue }
    let d = editDistance(lw, lc)
    guard d <= limit && d < lw.count else { continue }
    // On a tie, prefer a candidate the word begins (`of` → `off`, not `on`).
    let isPrefix = lc.starts(with: lw)
    if best == nil || d < best!.1 || (d == best!.1 && isPrefix && !best!.2) { best = (c, d, isPrefix) }
  }
  if let best { return best.0 }
  if lw.count >= 3 {
    let prefixed = candidates.filter { $0.lowercased().utf8.starts(with: lw) }
    if prefixed.count == 1 { return prefixed[0] }
  }
  return nil
}

/// Words longer than this (in bytes) get no edit-distance suggestion.
let maxSuggestionLength = 128

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
/// adjacent characters each cost 1 (typos are mostly these).
func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
  if a.isEmpty { return b.count }
  if b.isEmpty { return a.count }
  var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
  for i in 0...a.count { d[i][0] = i }
  for j in 0...b.count { d[0][j] = j }
  for i in 1...a.count {
    for j in 1...b.count {
      let cost = a[i - 1] == b[j - 1] ? 0 : 1
      d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
        d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
      }
    }
  }
  return d[a.count][b.count]
}
