// SPDX-License-Identifier: Apache-2.0
/// Who the daemon thinks a client is, as told in `hello`.
public struct ClientAccess: Hashable, Sendable {
  public var uid: UInt32
  public var gid: UInt32
  public var pid: Int32
  /// True when the client may send mutating requests.
  public var control: Bool
  public init(uid: UInt32, gid: UInt32, pid: Int32, control: Bool) {
    self.uid = uid
    self.gid = gid
    self.pid = pid
    self.control = control
  }
}

/// The first line the daemon sends on every connection.
public struct Hello: Hashable, Sendable {
  public var protocolVersion: Int64
  public var daemonVersion: String
  public var client: ClientAccess
  /// The snapshot: every button with its assigned control and current state and hint.
  public var buttons: [ButtonStatus]

  public init(
    protocolVersion: Int64 = ProtocolVersion.current, daemonVersion: String = ActiondVersion.string,
    client: ClientAccess, buttons: [ButtonStatus]
  ) {
    self.protocolVersion = protocolVersion
    self.daemonVersion = daemonVersion
    self.client = client
    self.buttons = buttons
  }

  public var json: JSONValue {
    var c = ObjectBuilder()
    c.set("uid", Int64(client.uid))
    c.set("gid", Int64(client.gid))
    c.set("pid", Int64(client.pid))
    c.set("control", client.control)
    var b = ObjectBuilder("type", "hello")
    b.set("protocol", protocolVersion)
    b.set("daemon", daemonVersion)
    b.set("client", c.value)
    b.set("buttons", .array(buttons.map(\.json)))
    return b.value
  }

  public init(json: JSONValue) throws(ProtocolError) {
    var r = try FieldReader(json, context: "hello")
    protocolVersion = try r.integer("protocol")
    daemonVersion = try r.optionalString("daemon") ?? ""
    var c = try FieldReader(r.raw("client") ?? [:], context: "hello client")
    client = ClientAccess(
      uid: UInt32(truncatingIfNeeded: try c.optionalInteger("uid") ?? 0),
      gid: UInt32(truncatingIfNeeded: try c.optionalInteger("gid") ?? 0),
      pid: Int32(truncatingIfNeeded: try c.optionalInteger("pid") ?? 0), control: try c.optionalBool("control") ?? false
    )
    buttons = try decodeArray(try r.optionalArray("buttons") ?? [], "buttons") { v throws(ProtocolError) in
      try ButtonStatus(json: v)
    }
  }
}

/// The result of a successful request, typed by what was asked.
public enum ReplyResult: Hashable, Sendable {
  /// `status`: `{"buttons":[...]}`.
  case buttons([ButtonStatus])
  /// `list`, `get`, `reload`: `{"controls":[...]}`.
  case controls([ControlSnapshot])
  /// `set`, `perform`: `{"control":{...}}`, the resulting state.
  case control(ControlSnapshot)
  /// `assign`, `press`: `{"button":{...}}`.
  case button(ButtonStatus)
  /// `devices`: `{"devices":[...]}`.
  case devices([DeviceSnapshot])
  /// `subscribe`: the effective filter.
  case subscribed(SubscriptionFilter)
  /// `register`: `{"kinds":[...]}`, the kinds this connection now provides.
  case registered(kinds: [String])
  /// `version`.
  case version(protocolVersion: Int64, daemonVersion: String)
  /// `ping`, `unsubscribe`: `{}`.
  case empty

  public var json: JSONValue {
    switch self {
    case .buttons(let b): return ["buttons": .array(b.map(\.json))]
    case .controls(let c): return ["controls": .array(c.map(\.json))]
    case .control(let c): return ["control": c.json]
    case .button(let b): return ["button": b.json]
    case .devices(let d): return ["devices": .array(d.map(\.json))]
    case .subscribed(let f): return f.json
    case .registered(let kinds): return ["kinds": .array(kinds.map { .string($0) })]
    case .version(let p, let d): return ["protocol": .integer(p), "daemon": .string(d)]
    case .empty: return [:]
    }
  }

  /// Reads the `result` of a reply to a request named `request`.
  public init(json: JSONValue, for request: RequestName) throws(ProtocolError) {
    var r = try FieldReader(json, context: "result of \"\(request.rawValue)\"")
    switch request {
    case .status:
      self = .buttons(
        try decodeArray(try r.array("buttons"), "buttons") { v throws(ProtocolError) in try ButtonStatus(json: v) })
    case .list, .get, .reload:
      self = .controls(
        try decodeArray(try r.array("controls"), "controls") { v throws(ProtocolError) in
          try ControlSnapshot(json: v)
        })
    case .set, .perform:
      self = .control(try ControlSnapshot(json: .object(try r.object("control"))))
    case .assign, .press:
      self = .button(try ButtonStatus(json: .object(try r.object("button"))))
    case .devices:
      self = .devices(
        try decodeArray(try r.array("devices"), "devices") { v throws(ProtocolError) in try DeviceSnapshot(json: v) })
    case .subscribe:
      self = .subscribed(try SubscriptionFilter(json: json))
    case .register:
      self = .registered(kinds: try r.stringArray("kinds"))
    case .version:
      self = .version(protocolVersion: try r.integer("protocol"), daemonVersion: try r.optionalString("daemon") ?? "")
    case .ping, .unsubscribe:
      self = .empty
    }
  }
}

/// A request the daemon sends to a registered provider client.
public struct ProviderRequest: Hashable, Sendable {
  public enum Body: Hashable, Sendable {
    /// Perform the intent. `value` is the target value of a toggle, nil for a button.
    case perform(kind: String, configuration: JSONObject, value: Bool?)
    /// Report the current value of a toggle: reply `{"value": true|false}`.
    case value(kind: String, configuration: JSONObject)
  }
  /// Daemon-chosen id (`"p17"`), echoed by the provider's reply or error.
  public var id: String
  public var body: Body

  public init(id: String, _ body: Body) {
    self.id = id
    self.body = body
  }

  public var kind: String {
    switch body {
    case .perform(let k, _, _), .value(let k, _): return k
    }
  }

  public var json: JSONValue {
    var b = ObjectBuilder("type", "request")
    b.set("id", id)
    switch body {
    case .perform(let kind, let configuration, let value):
      b.set("request", "perform")
      b.set("kind", kind)
      b.set("configuration", .object(configuration))
      b.set("value", value)
    case .value(let kind, let configuration):
      b.set("request", "value")
      b.set("kind", kind)
      b.set("configuration", .object(configuration))
    }
    return b.value
  }

  public init(json: JSONValue) throws(ProtocolError) {
    var r = try FieldReader(json, context: "provider request")
    id = try r.string("id")
    let name = try r.string("request")
    let kind = try r.string("kind")
    let configuration = try r.optionalObject("configuration") ?? [:]
    switch name {
    case "perform": body = .perform(kind: kind, configuration: configuration, value: try r.optionalBool("value"))
    case "value": body = .value(kind: kind, configuration: configuration)
    default: throw ProtocolError(.unknownRequest, "unknown provider request \"\(name)\"")
    }
  }
}

/// A provider's answer to a `ProviderRequest`.
public struct ProviderReply: Hashable, Sendable {
  public var id: String
  /// The provider's `result` object, or the error it reported.
  public var outcome: Result<JSONObject, ProtocolError>

  public init(id: String, outcome: Result<JSONObject, ProtocolError>) {
    self.id = id
    self.outcome = outcome
  }

  /// The reported toggle value: `result.value` when it is a boolean.
  public var value: Bool? {
    if case .success(let o) = outcome { return o["value"]?.boolValue }
    return nil
  }

  public var json: JSONValue {
    switch outcome {
    case .success(let result): return ["type": "reply", "id": .string(id), "result": .object(result)]
    case .failure(let e):
      return ["type": "error", "id": .string(id), "code": .string(e.code.rawValue), "message": .string(e.message)]
    }
  }
}

/// Everything a client sends.
public enum ClientMessage: Hashable, Sendable {
  case request(Request)
  /// A provider answering a daemon request (`type` `reply` or `error`).
  case providerReply(ProviderReply)

  public var json: JSONValue {
    switch self {
    case .request(let r): return r.json
    case .providerReply(let p): return p.json
    }
  }

  /// Why a client line was rejected, with the id to echo when one could be read.
  public struct DecodingFailure: Error, Hashable, Sendable {
    public var id: RequestID?
    public var error: ProtocolError
  }

  /// Decodes one line (without its newline) strictly: RFC 8259 JSON, known fields only.
  public static func decode(line: UnsafeBufferPointer<UInt8>) -> Result<ClientMessage, DecodingFailure> {
    let value: JSONValue
    do {
      value = try JSONParser.parseValue(line)
    } catch {
      return .failure(DecodingFailure(id: nil, error: ProtocolError(.badJSON, error.description)))
    }
    return decode(value)
  }

  public static func decode(line: String) -> Result<ClientMessage, DecodingFailure> {
    var copy = line
    return copy.withUTF8 { decode(line: $0) }
  }

  public static func decode(_ value: JSONValue) -> Result<ClientMessage, DecodingFailure> {
    guard let object = value.objectValue else {
      return .failure(
        DecodingFailure(id: nil, error: .badRequest("a message must be a JSON object, got \(value.typeName)")))
    }
    // Read the id first so every later error can echo it.
    var id: RequestID?
    do {
      id = try object["id"].flatMap { v throws(ProtocolError) in try RequestID(json: v) }
    } catch {
      return .failure(DecodingFailure(id: nil, error: error))
    }
    // Before anything else is read, so a duplicate member gets the same answer at every
    // depth (protocol.md, Framing): deep in a `configuration` it would otherwise reach
    // the engine, which answers `invalid-configuration` or keeps the last value.
    if let duplicate = firstDuplicateMember(in: .object(object), at: .root) {
      let message =
        duplicate.path.components.isEmpty
        ? "message has field \"\(duplicate.key)\" more than once"
        : "field \"\(duplicate.path)\" of \(describe(object)) has field \"\(duplicate.key)\" more than once"
      return .failure(DecodingFailure(id: id, error: .badRequest(message)))
    }
    do throws(ProtocolError) {
      var r = try FieldReader(object, context: "message", strict: true)
      _ = r.raw("id")
      let type = try r.optionalString("type") ?? "request"
      switch type {
      case "request":
        guard let n = try r.optionalString("request") else {
          throw ProtocolError.badRequest("message is missing field \"request\"")
        }
        guard let name = RequestName(rawValue: n) else {
          throw ProtocolError(.unknownRequest, "unknown request \"\(n)\"")
        }
        r = try FieldReader(object, context: "request \"\(n)\"", strict: true)
        _ = r.raw("id")
        _ = r.raw("type")
        _ = r.raw("request")
        let body = try Request.body(name, &r)
        try r.rejectUnknown()
        return .success(.request(Request(id: id, body)))
      case "reply", "error":
        guard case .string(let pid)? = id else {
          throw ProtocolError.badRequest("a provider \(type) needs the string \"id\" of the daemon's request")
        }
        r = try FieldReader(object, context: "provider \(type)")
        _ = r.raw("id")
        _ = r.raw("type")
        let outcome: Result<JSONObject, ProtocolError>
        if type == "reply" {
          outcome = .success(try r.optionalObject("result") ?? [:])
        } else {
          let code = try r.string("code")
          outcome = .failure(ProtocolError(ProtocolErrorCode(code), try r.optionalString("message") ?? ""))
        }
        try r.rejectUnknown()
        return .success(.providerReply(ProviderReply(id: pid, outcome: outcome)))
      default:
        throw ProtocolError.badRequest(
          "field \"type\" must be \"request\", \"reply\" or \"error\", got \(JSONEncoding.quoted(type))")
      }
    } catch {
      return .failure(DecodingFailure(id: id, error: error))
    }
  }
}

extension ClientMessage {
  /// The first key that occurs twice in one object anywhere in `value` (depth first, in
  /// document order), with the path of that object.
  static func firstDuplicateMember(in value: JSONValue, at path: JSONPath) -> (path: JSONPath, key: String)? {
    switch value {
    case .object(let object):
      if let key = object.duplicateKeys.first { return (path, key) }
      for member in object {
        if let found = firstDuplicateMember(in: member.value, at: path / member.key) { return found }
      }
      return nil
    case .array(let elements):
      for (i, element) in elements.enumerated() {
        if let found = firstDuplicateMember(in: element, at: path / i) { return found }
      }
      return nil
    default:
      return nil
    }
  }

  /// How an error names a client message whose members were not read yet: like the
  /// request decoder does (`request "assign"`), or `provider reply`, or `message`.
  private static func describe(_ object: JSONObject) -> String {
    switch object["type"]?.stringValue ?? "request" {
    case "request":
      if let n = object["request"]?.stringValue, RequestName(rawValue: n) != nil { return "request \"\(n)\"" }
      return "message"
    case let type where type == "reply" || type == "error": return "provider \(type)"
    default: return "message"
    }
  }
}

/// A reply to a client's request.
public struct Reply: Hashable, Sendable {
  public var id: RequestID?
  public var request: RequestName
  public var result: ReplyResult
  public init(id: RequestID?, request: RequestName, result: ReplyResult) {
    self.id = id
    self.request = request
    self.result = result
  }
}

/// Everything the daemon sends.
public enum ServerMessage: Hashable, Sendable {
  case hello(Hello)
  case reply(Reply)
  /// An error reply (to a request, with its id) or a connection-level error (id nil).
  case error(id: RequestID?, ProtocolError)
  case event(Event)
  /// A request to a provider client.
  case providerRequest(ProviderRequest)
  /// An event this version does not know, named `name` (a newer daemon's): clients
  /// ignore it (protocol.md, Versioning) instead of failing. `json` is the message as
  /// read, so a client that passes events on can pass this one on too.
  case unknownEvent(name: String, json: JSONValue)

  public var json: JSONValue {
    switch self {
    case .hello(let h): return h.json
    case .reply(let r):
      var b = ObjectBuilder("type", "reply")
      b.set("id", r.id?.json ?? .null)
      b.set("request", r.request.rawValue)
      b.set("result", r.result.json)
      return b.value
    case .error(let id, let e):
      var b = ObjectBuilder("type", "error")
      b.set("id", id?.json ?? .null)
      b.set("code", e.code.rawValue)
      b.set("message", e.message)
      return b.value
    case .event(let e): return e.json
    case .providerRequest(let p): return p.json
    case .unknownEvent(_, let json): return json
    }
  }

  /// The message as one wire line, newline included: the form the server queues and
  /// broadcasts (encoded once, shared by every subscriber).
  public var line: [UInt8] {
    var bytes: [UInt8] = []
    // A `pressed` with its hints is over 256 bytes: one allocation, no regrowth.
    bytes.reserveCapacity(512)
    JSONEncoding.compact(json, into: &bytes)
    bytes.append(UInt8(ascii: "\n"))
    return bytes
  }

  /// Reads one daemon line (leniently, for clients: members this version does not know
  /// are ignored, and an event it does not know is ``unknownEvent(name:json:)``). Replies
  /// need the name of the request they answer, which the daemon includes as `request`.
  public static func decode(line: String) throws(ProtocolError) -> ServerMessage {
    let value: JSONValue
    do {
      value = try JSONParser.parse(line).root
    } catch {
      throw ProtocolError(.badJSON, error.description)
    }
    return try decode(value)
  }

  public static func decode(_ value: JSONValue) throws(ProtocolError) -> ServerMessage {
    var r = try FieldReader(value, context: "daemon message")
    let type = try r.string("type")
    switch type {
    case "hello": return .hello(try Hello(json: value))
    case "event":
      let name = try r.string("event")
      guard EventName(rawValue: name) != nil else { return .unknownEvent(name: name, json: value) }
      // An assignment to a gesture this version does not know (a newer daemon's) cannot be
      // placed on its button: it is passed on like an event this version does not know.
      if name == EventName.assigned.rawValue, let g = value["gesture"]?.stringValue, Gesture(rawValue: g) == nil {
        return .unknownEvent(name: name, json: value)
      }
      return .event(try Event(json: value))
    case "error":
      let id = try r.raw("id").flatMap { v throws(ProtocolError) in try RequestID(json: v) }
      return .error(
        id: id, ProtocolError(ProtocolErrorCode(try r.string("code")), try r.optionalString("message") ?? ""))
    case "reply":
      let id = try r.raw("id").flatMap { v throws(ProtocolError) in try RequestID(json: v) }
      let n = try r.string("request")
      guard let name = RequestName(rawValue: n) else { throw .badRequest("reply to unknown request \"\(n)\"") }
      return .reply(Reply(id: id, request: name, result: try ReplyResult(json: r.raw("result") ?? [:], for: name)))
    case "request": return .providerRequest(try ProviderRequest(json: value))
    default: throw .badRequest("unknown message type \(JSONEncoding.quoted(type))")
    }
  }
}
