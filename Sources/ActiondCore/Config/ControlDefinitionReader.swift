// SPDX-License-Identifier: Apache-2.0
extension ConfigurationLoader {
  static let controlKeys = [
    "kind", "type", "displayName", "title", "description", "valueText", "symbol", "tint", "actionHint", "intent",
    "value", "previewValue", "parameters", "requiresConfiguration",
  ]
  static let parameterKeys = [
    "name", "type", "choices", "default", "required", "title", "description", "minimum", "maximum",
  ]
  static let execKeys = ["type", "argv", "timeoutMs", "workingDirectory", "user", "environment"]
  /// Exec timeouts: 100 ms...1 h.
  public static let execTimeoutRangeMs: ClosedRange<Int64> = 100...3_600_000
  /// Named tints; anything else must be `#rgb` or `#rrggbb`.
  public static let tintNames = [
    "red", "orange", "yellow", "green", "mint", "teal", "cyan", "blue", "indigo", "purple", "pink", "brown", "gray",
    "white", "black",
  ]

  /// Reads one control definition; adds it to `set` only when it has no problem.
  static func readControl(
    _ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader, into set: inout DefinitionSet
  ) {
    let before = r.problems.count
    guard let o = r.object(value, path, allowed: controlKeys, what: "a control definition object") else { return }

    var kind = ""
    if let v = r.requireMember(o, "kind", path, "a reverse-DNS identifier such as \"org.example.timer\""),
      let k = r.string(v, path / "kind")
    {
      kind = k
      set.attempted.insert(k)
      if !ControlDefinition.isValidKind(k) {
        r.report(
          path / "kind",
          "must be a reverse-DNS identifier such as \"org.example.timer\" (dot-separated labels of letters, digits, - and _), got \(JSONEncoding.quoted(k))"
        )
      } else if let origin = set.origins[k] {
        let at = origin.line.map { "\(origin.file):\($0)" } ?? origin.file
        r.report(path / "kind", "duplicate kind \(k): already defined in \(at)")
      } else {
        set.origins[k] = (r.file, r.line(of: path))
      }
    }
    let typeValue = r.requireMember(o, "type", path, "\"button\" or \"toggle\"")
    let type = typeValue.flatMap { r.word($0, path / "type", ControlType.allCases.map { ($0.rawValue, $0) }) }
    // With a missing or unknown type, toggle-only fields are not also reported as misplaced.
    let isToggle = type != .button

    var displayName = ""
    if let v = r.requireMember(o, "displayName", path, "the name lists and hints show"),
      let s = r.string(v, path / "displayName", maxLength: 100)
    {
      displayName = s
    }
    let title = r.string(in: o, "title", path)
    let description = r.string(in: o, "description", path)

    var valueText: OnOff<String>?
    if let v = o["valueText"] {
      if !isToggle {
        r.report(path / "valueText", "only toggles have a value text (a button has no state)")
      } else if let vo = r.object(v, path / "valueText", allowed: ["on", "off"]) {
        valueText = OnOff(
          on: r.string(in: vo, "on", path / "valueText", allowEmpty: false) ?? ControlDefinition.defaultValueText.on,
          off: r.string(in: vo, "off", path / "valueText", allowEmpty: false) ?? ControlDefinition.defaultValueText.off)
      }
    }
    let symbol = o["symbol"].flatMap { readPair($0, path / "symbol", r, isToggle: isToggle, field: "symbol") }
    var tint: String?
    if let v = o["tint"], let t = r.string(v, path / "tint") {
      if isValidTint(t) {
        tint = t
      } else {
        r.report(
          path / "tint",
          "must be a colour name (\(tintNames.joined(separator: ", "))) or #rrggbb, got \(JSONEncoding.quoted(t))")
      }
    }
    var actionHint: OnOff<String>?
    if let v = o["actionHint"] {
      actionHint = readPair(v, path / "actionHint", r, isToggle: isToggle, field: "actionHint")
      if let h = actionHint {
        // A plain string is both sides; an {on, off} pair reports the side that is wrong.
        let hintPath = path / "actionHint"
        let isPair = v.objectValue != nil
        let sides: [(verb: String, path: JSONPath)] = [
          (h.on, isPair ? hintPath / "on" : hintPath),
          (h.off, isPair ? hintPath / "off" : hintPath),
        ]
        for (verb, p) in sides where verb.lowercased().hasPrefix("hold to") {
          r.report(p, "write only the verb (\"Start\"): the daemon always says \"Hold to <verb>\"")
          break
        }
      }
    }

    var parameters: [ParameterSpec] = []
    if let v = o["parameters"] { parameters = readParameters(v, path / "parameters", r) }

    var intent: IntentSpec?
    if let v = r.requireMember(o, "intent", path, "what a hold does: {type: \"exec\"|\"write\"|\"state\"|\"provider\"}")
    {
      intent = readIntent(v, path / "intent", r, type: type)
    }
    var provider: ValueProviderSpec?
    if let v = o["value"] {
      if !isToggle {
        r.report(path / "value", "only toggles have a value provider (a button has no state)")
      } else {
        provider = readValueProvider(v, path / "value", r)
      }
    }
    var previewValue = false
    if o["previewValue"] != nil {
      if !isToggle {
        r.report(path / "previewValue", "only toggles have a preview value (a button has no state)")
      } else if let b = r.bool(in: o, "previewValue", path) {
        previewValue = b
      }
    }
    let requiresConfiguration = r.bool(in: o, "requiresConfiguration", path) ?? false
    // Looks at the raw parameters too, so a broken parameter does not also trigger this.
    let declaresRequired = o["parameters"]?.arrayValue?.contains { $0["required"] == .bool(true) } ?? false
    if requiresConfiguration && !declaresRequired {
      r.report(
        path / "requiresConfiguration",
        "needs at least one required parameter (requiresConfiguration means: cannot run until they are chosen)")
    }

    if case .state? = intent {
      if type == .button {
        r.report(path / "intent" / "type", "a state intent needs a toggle (a button has no state to change)")
      } else if let provider, provider.typeName != "store" {
        r.report(
          path / "intent" / "type",
          "a state intent only changes the daemon's store, so value.type must be \"store\", not \"\(provider.typeName)\""
        )
      }
    }

    checkPlaceholders(o, path, r, parameters: parameters)

    guard r.problems.count == before, let type, let intent else { return }
    let definition = ControlDefinition(
      kind: kind, type: type, displayName: displayName, title: title, description: description,
      valueText: valueText, symbol: symbol, tint: tint, actionHint: actionHint, intent: intent, value: provider,
      previewValue: previewValue, parameters: parameters, requiresConfiguration: requiresConfiguration,
      source: r.file)
    // A default used in a path must be one path component, like any value given later.
    let pathParameters = definition.pathParameters
    for (i, spec) in parameters.enumerated() where pathParameters.contains(spec.name) {
      if let d = spec.defaultValue, let problem = ParameterSubstitution.pathComponentProblem(d.text) {
        r.report(path / "parameters" / i / "default", problem)
      }
      for (j, choice) in spec.choices.enumerated() {
        if let problem = ParameterSubstitution.pathComponentProblem(choice) {
          r.report(path / "parameters" / i / "choices" / j, problem)
        }
      }
    }
    guard r.problems.count == before else { return }
    set.definitions.append(definition)
  }

  /// A string for both states, or (toggles) `{on, off}` with both present.
  private static func readPair(
    _ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader, isToggle: Bool, field: String
  ) -> OnOff<String>? {
    if value.objectValue != nil {
      guard isToggle else {
        r.report(path, "a button has no on/off state: give \(field) as one string")
        return nil
      }
      guard let o = r.object(value, path, allowed: ["on", "off"]) else { return nil }
      let on = r.requireMember(o, "on", path, "the \(field) while on").flatMap { r.string($0, path / "on") }
      let off = r.requireMember(o, "off", path, "the \(field) while off").flatMap { r.string($0, path / "off") }
      guard let on, let off else { return nil }
      return OnOff(on: on, off: off)
    }
    guard value.stringValue != nil else {
      r.report(path, "must be a string\(isToggle ? " or {on, off}" : ""), got \(value.typeName)")
      return nil
    }
    return r.string(value, path, maxLength: 100).map { OnOff(both: $0) }
  }

  static func isValidTint(_ t: String) -> Bool {
    if tintNames.contains(t) { return true }
    let u = Array(t.utf8)
    guard u.first == UInt8(ascii: "#"), u.count == 4 || u.count == 7 else { return false }
    return u.dropFirst().allSatisfy { $0.isASCIIDigit || (($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x66) }
  }

  // MARK: Parameters

  private static func readParameters(_ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader) -> [ParameterSpec]
  {
    guard let array = value.arrayValue else {
      r.report(path, "must be an array of parameters, got \(value.typeName)")
      return []
    }
    var result: [ParameterSpec] = []
    var names: [String: Int] = [:]
    for (i, element) in array.enumerated() {
      let p = path / i
      guard let o = r.object(element, p, allowed: parameterKeys) else { continue }
      let before = r.problems.count
      var name = ""
      if let v = r.requireMember(o, "name", p, "a lower-case identifier such as \"led\""),
        let n = r.string(v, p / "name")
      {
        name = n
        if !ParameterSpec.isValidName(n) {
          r.report(
            p / "name",
            "must be lower-case letters, digits and _, starting with a letter (at most 64), got \(JSONEncoding.quoted(n))"
          )
        } else if let first = names[n] {
          r.report(p / "name", "duplicate parameter name \(n) (also parameters[\(first)])")
        } else {
          names[n] = i
        }
      }
      let type = r.requireMember(o, "type", p, "string, integer, boolean or choice").flatMap {
        r.word($0, p / "type", ParameterType.allCases.map { ($0.rawValue, $0) })
      }
      var spec = ParameterSpec(name: name, type: type ?? .string)
      spec.title = r.string(in: o, "title", p)
      spec.description = r.string(in: o, "description", p)
      spec.required = r.bool(in: o, "required", p) ?? false
      if let v = o["choices"] {
        if type != .choice {
          r.report(p / "choices", "only choice parameters have choices")
        } else if let a = v.arrayValue {
          var seen = Set<String>()
          for (j, c) in a.enumerated() {
            guard let s = r.string(c, p / "choices" / j) else { continue }
            if !seen.insert(s).inserted { r.report(p / "choices" / j, "duplicate choice \(JSONEncoding.quoted(s))") }
            spec.choices.append(s)
          }
          if a.isEmpty { r.report(p / "choices", "must not be empty") }
        } else {
          r.report(p / "choices", "must be an array of strings, got \(v.typeName)")
        }
      } else if type == .choice {
        r.report(p / "choices", "missing (a choice parameter needs its choices)")
      }
      for bound in ["minimum", "maximum"] where o[bound] != nil {
        if type != .integer {
          r.report(p / bound, "only integer parameters have a \(bound)")
        } else if let b = r.integer(in: o, bound, p, range: Int64.min...Int64.max) {
          if bound == "minimum" { spec.minimum = b } else { spec.maximum = b }
        }
      }
      if let lo = spec.minimum, let hi = spec.maximum, lo > hi {
        r.report(p / "maximum", "must not be less than minimum (\(lo))")
      }
      if let v = o["default"], type != nil, r.problems.count == before {
        if let d = ParameterValue(json: v), spec.check(d) == nil {
          spec.defaultValue = d
        } else {
          let message = ParameterValue(json: v).flatMap { spec.check($0) } ?? "does not fit the parameter's type"
          r.report(p / "default", message)
        }
      }
      if r.problems.count == before { result.append(spec) }
    }
    return result
  }

  // MARK: Intents and value providers

  private static func readIntent(
    _ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader, type: ControlType?
  ) -> IntentSpec? {
    guard let typeName = readTypeTag(value, path, r, ["exec", "write", "state", "provider"]) else { return nil }
    switch typeName {
    case "exec":
      return readExec(value, path, r).map { .exec($0) }
    case "write":
      guard let o = r.object(value, path, allowed: ["type", "path", "on", "off"]) else { return nil }
      let file = r.requireMember(o, "path", path, "the file to write, e.g. /sys/class/leds/<led>/brightness")
        .flatMap { r.absolutePath($0, path / "path") }
      let on = o["on"].map { r.string($0, path / "on", allowEmpty: true) } ?? "1"
      var off: String? = "0"
      if let v = o["off"] {
        if type == .button {
          r.report(path / "off", "a button writes only `on` (it has no off state)")
        }
        off = r.string(v, path / "off", allowEmpty: true)
      }
      guard let file, let on, let off else { return nil }
      return .write(path: file, on: on, off: off)
    case "state":
      _ = r.object(value, path, allowed: ["type"])
      return .state
    default:
      _ = r.object(value, path, allowed: ["type"])
      return .provider
    }
  }

  private static func readValueProvider(
    _ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader
  )
    -> ValueProviderSpec?
  {
    guard let typeName = readTypeTag(value, path, r, ["store", "exec", "file", "provider"]) else { return nil }
    switch typeName {
    case "store":
      guard let o = r.object(value, path, allowed: ["type", "initial"]) else { return nil }
      return .store(initial: r.bool(in: o, "initial", path) ?? false)
    case "exec":
      return readExec(value, path, r).map { .exec($0) }
    case "file":
      guard let o = r.object(value, path, allowed: ["type", "path", "on"]) else { return nil }
      let file = r.requireMember(o, "path", path, "the file to read").flatMap { r.absolutePath($0, path / "path") }
      let on = r.string(in: o, "on", path)
      guard let file else { return nil }
      return .file(path: file, on: on)
    default:
      _ = r.object(value, path, allowed: ["type"])
      return .provider
    }
  }

  /// The `type` member of an intent or value provider object; reports and returns nil when absent or unknown.
  private static func readTypeTag(
    _ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader, _ names: [String]
  ) -> String? {
    guard let o = value.objectValue else {
      r.report(path, "must be an object with a type (\(names.joined(separator: ", "))), got \(value.typeName)")
      return nil
    }
    guard let t = r.requireMember(o, "type", path, names.joined(separator: ", ")) else { return nil }
    return r.word(t, path / "type", names.map { ($0, $0) })
  }

  private static func readExec(_ value: JSONValue, _ path: JSONPath, _ r: ConfigurationReader) -> ExecSpec? {
    guard let o = r.object(value, path, allowed: execKeys) else { return nil }
    let before = r.problems.count
    var spec = ExecSpec(argv: [])
    if let v = r.requireMember(
      o, "argv", path, "the program and its arguments, e.g. [\"/usr/bin/systemctl\", \"start\", \"x\"]")
    {
      if let a = v.arrayValue {
        if a.isEmpty { r.report(path / "argv", "must not be empty") }
        spec.argv = a.enumerated().compactMap { i, e in
          // Arguments may be empty strings; the program name may not.
          r.string(e, path / "argv" / i, allowEmpty: i > 0)
        }
        // A relative path with a slash would depend on the working directory.
        if let program = a.first?.stringValue, program.contains("/"), !program.hasPrefix("/") {
          r.report(
            path / "argv" / 0,
            "must be an absolute path or a program name looked up in PATH, got \(JSONEncoding.quoted(program))")
        }
      } else {
        r.report(path / "argv", "must be an array of strings (no shell is involved), got \(v.typeName)")
      }
    }
    if let ms = r.integer(in: o, "timeoutMs", path, range: execTimeoutRangeMs, unit: " ms") {
      spec.timeout = .milliseconds(ms)
    }
    spec.workingDirectory = r.absolutePath(in: o, "workingDirectory", path)
    if let v = o["user"], let u = r.account(v, path / "user") {
      if u == .name("root") || u == .id(0) {
        r.report(path / "user", "must be an unprivileged user (leave user out to run as the daemon's own user)")
      } else {
        spec.user = u
      }
    }
    if let v = o["environment"],
      let env = r.object(v, path / "environment", allowed: nil, what: "an object of NAME: value")
    {
      for (name, ev) in env {
        let p = path / "environment" / name
        let u = Array(name.utf8)
        let valid =
          !u.isEmpty && !u[0].isASCIIDigit
          && u.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == UInt8(ascii: "_") }
        if !valid {
          r.report(p, "is not a valid environment variable name (letters, digits and _, not starting with a digit)")
        } else if name.hasPrefix("ACTIOND_") {
          r.report(p, "ACTIOND_* variables are set by the daemon")
        } else if let s = r.string(ev, p, allowEmpty: true) {
          spec.environment[name] = s
        }
      }
    }
    return r.problems.count == before ? spec : nil
  }

  // MARK: Placeholders

  /// Every `${name}` in argv, working directories, environment values and paths must name
  /// a declared parameter that always has a value (required, or with a default).
  private static func checkPlaceholders(
    _ o: JSONObject, _ path: JSONPath, _ r: ConfigurationReader, parameters: [ParameterSpec]
  ) {
    var templates: [(String, JSONPath)] = []
    for section in ["intent", "value"] {
      guard let so = o[section]?.objectValue else { continue }
      let sp = path / section
      if let argv = so["argv"]?.arrayValue {
        for (i, e) in argv.enumerated() { if let s = e.stringValue { templates.append((s, sp / "argv" / i)) } }
      }
      for key in ["workingDirectory", "path"] {
        if let s = so[key]?.stringValue { templates.append((s, sp / key)) }
      }
      if let env = so["environment"]?.objectValue {
        for (k, v) in env { if let s = v.stringValue { templates.append((s, sp / "environment" / k)) } }
      }
    }
    let declared = parameters.map(\.name)
    // Parameters written but invalid were reported already; a placeholder naming one is not.
    let written = Set((o["parameters"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue })
    for (template, p) in templates {
      let names: [String]
      do {
        names = try ParameterSubstitution.placeholders(in: template)
      } catch {
        r.report(p, error.message)
        continue
      }
      for name in names {
        guard let spec = parameters.first(where: { $0.name == name }) else {
          if written.contains(name) { continue }
          var message = "${\(name)} names no parameter of this control"
          if let s = closestMatch(to: name, in: declared) { message += " (did you mean ${\(s)}?)" }
          r.report(p, message)
          continue
        }
        if !spec.required && spec.defaultValue == nil {
          r.report(p, "${\(name)} may have no value: give parameter \(name) a default or make it required")
        }
      }
    }
  }
}
