// SPDX-License-Identifier: Apache-2.0
// Control definitions back to their configuration syntax: for clients that show what a
// control offers (parameters, symbols) and for `actionctl` to print a definition. The
// output is itself a valid definition: loading it gives the same definition again.

extension ControlDefinition {
  /// The definition in configuration syntax, every default written out.
  public var json: JSONValue {
    var o = JSONObject()
    o["kind"] = .string(kind)
    o["type"] = .string(type.rawValue)
    o["displayName"] = .string(displayName)
    if let title { o["title"] = .string(title) }
    if let description { o["description"] = .string(description) }
    if type == .toggle, let valueText { o["valueText"] = Self.pair(valueText, toggle: true) }
    if let symbol { o["symbol"] = Self.pair(symbol, toggle: type == .toggle) }
    if let tint { o["tint"] = .string(tint) }
    o["actionHint"] = Self.pair(actionHint, toggle: type == .toggle)
    var intentJSON = intent.json
    if type == .button, case .object(var io) = intentJSON {
      io["off"] = nil  // a button writes only `on`
      intentJSON = .object(io)
    }
    o["intent"] = intentJSON
    if type == .toggle {
      if let value { o["value"] = value.json }
      o["previewValue"] = .bool(previewValue)
    }
    if !parameters.isEmpty { o["parameters"] = .array(parameters.map(\.json)) }
    o["requiresConfiguration"] = .bool(requiresConfiguration)
    return .object(o)
  }

  private static func pair(_ p: OnOff<String>, toggle: Bool) -> JSONValue {
    toggle ? ["on": .string(p.on), "off": .string(p.off)] : .string(p.on)
  }
}

extension ExecSpec {
  /// The `exec` members (without `type`).
  var members: JSONObject {
    var o = JSONObject()
    o["argv"] = .array(argv.map { .string($0) })
    o["timeoutMs"] = .integer(timeout.milliseconds)
    if let workingDirectory { o["workingDirectory"] = .string(workingDirectory) }
    switch user {
    case .name(let n)?: o["user"] = .string(n)
    case .id(let i)?: o["user"] = .integer(Int64(i))
    case nil: break
    }
    if !environment.isEmpty {
      o["environment"] = .object(
        JSONObject(environment.keys.sorted().map { (key: $0, value: .string(environment[$0]!)) }))
    }
    return o
  }
}

extension IntentSpec {
  /// The intent in configuration syntax.
  public var json: JSONValue {
    switch self {
    case .exec(let e):
      var o: JSONObject = ["type": "exec"]
      for m in e.members { o[m.key] = m.value }
      return .object(o)
    case .write(let path, let on, let off):
      return ["type": "write", "path": .string(path), "on": .string(on), "off": .string(off)]
    case .state: return ["type": "state"]
    case .provider: return ["type": "provider"]
    }
  }
}

extension ValueProviderSpec {
  /// The value provider in configuration syntax.
  public var json: JSONValue {
    switch self {
    case .store(let initial): return ["type": "store", "initial": .bool(initial)]
    case .exec(let e):
      var o: JSONObject = ["type": "exec"]
      for m in e.members { o[m.key] = m.value }
      return .object(o)
    case .file(let path, let on):
      var o: JSONObject = ["type": "file", "path": .string(path)]
      if let on { o["on"] = .string(on) }
      return .object(o)
    case .provider: return ["type": "provider"]
    }
  }
}

extension ParameterSpec {
  /// The parameter in configuration syntax.
  public var json: JSONValue {
    var o: JSONObject = ["name": .string(name), "type": .string(type.rawValue)]
    if type == .choice { o["choices"] = .array(choices.map { .string($0) }) }
    if let defaultValue { o["default"] = defaultValue.json }
    o["required"] = .bool(required)
    if let minimum { o["minimum"] = .integer(minimum) }
    if let maximum { o["maximum"] = .integer(maximum) }
    if let title { o["title"] = .string(title) }
    if let description { o["description"] = .string(description) }
    return .object(o)
  }
}
