// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// actiond-mqtt's settings: its configuration file (JSON5, like actiond's) with the command
/// line on top. See docs/home-assistant.md, "Configuration".
public struct BridgeSettings: Hashable, Sendable {
  public struct TLS: Hashable, Sendable {
    /// PEM file of the certificate authorities that sign the broker's certificate.
    public var caFile: String
    /// A client certificate and its key (both or neither), for brokers that ask for one.
    public var certFile: String?
    public var keyFile: String?
    public init(caFile: String, certFile: String? = nil, keyFile: String? = nil) {
      self.caFile = caFile
      self.certFile = certFile
      self.keyFile = keyFile
    }
  }

  public static let defaultConfigPath = "/etc/actiond/mqtt.json5"
  /// The systemd credential (`LoadCredential=mqtt-password:…`) read when no password file is set.
  public static let passwordCredential = "mqtt-password"

  public var host = "localhost"
  /// nil: 1883, or 8883 with TLS.
  public var port: Int?
  /// MQTT keepalive: the bridge pings the broker after this long without a packet from it
  /// and drops the connection after as long again without the answer; the broker drops
  /// the bridge (and publishes its Last Will) after 1.5 × this without a packet from it.
  public var keepaliveSeconds = 60
  /// The keepalives libmosquitto accepts (it refuses 1 to 4 s; 0, none, would leave a
  /// silently cut connection up forever).
  public static let keepaliveRange: ClosedRange<Int64> = 5...3600
  /// nil: `actiond-mqtt-<node>`. Fixed, with a persistent session, so the broker keeps
  /// QoS 1 commands for the bridge across reconnects.
  public var clientID: String?
  public var username: String?
  /// The password's file (its first line). nil: `$CREDENTIALS_DIRECTORY/mqtt-password` when
  /// that exists, else no password.
  public var passwordFile: String?
  public var tls: TLS?
  public var discoveryPrefix = "homeassistant"
  /// nil: the host name's first label.
  public var nodeID: String?
  /// nil: `/etc/machine-id`.
  public var deviceID: String?
  /// nil: the node id.
  public var deviceName: String?
  /// nil: `actiond/<node>`.
  public var baseTopic: String?
  public var socketPath = SocketSettings.defaultPath
  public var logLevel = LogLevel.info

  public init() {}

  public var effectivePort: Int { port ?? (tls == nil ? 1883 : 8883) }

  /// A topic prefix as configured: non-empty, no wildcards, no NUL, no leading or trailing `/`.
  public static func topicProblem(_ s: String) -> String? {
    if s.isEmpty { return "must not be empty" }
    // On the bytes: String's substring search would link the regex modules into the bridge.
    if s.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }) {
      return "must not contain the wildcards + or #"
    }
    if s.utf8.contains(0) { return "must not contain a NUL character" }
    if s.hasPrefix("/") || s.hasSuffix("/") { return "must not start or end with /" }
    if zip(s.utf8, s.utf8.dropFirst()).contains(where: { $0 == UInt8(ascii: "/") && $1 == $0 }) {
      return "must not contain an empty level (//)"
    }
    return nil
  }

  /// Reads a configuration file over `base`, reporting every problem with its path and line.
  public static func load(
    _ source: ConfigurationSource, over base: BridgeSettings = BridgeSettings()
  )
    throws(ConfigurationError) -> BridgeSettings
  {
    let document: JSONDocument
    do { document = try JSONParser.parse(source.text, options: .configuration) } catch {
      throw ConfigurationError(problems: [
        ConfigurationProblem(
          file: source.name, path: nil, line: error.location.line, column: error.location.column,
          message: error.message)
      ])
    }
    let r = ConfigurationReader(file: source.name, document: document)
    var s = base
    let root = JSONPath.root
    guard
      let top = r.object(
        document.root, root, allowed: allowed(under: ""))
    else { throw ConfigurationError(problems: r.problems) }
    if let v = top["broker"], let b = r.object(v, root / "broker", allowed: allowed(under: "broker")) {
      let p = root / "broker"
      if let host = r.string(in: b, "host", p) { s.host = host }
      if let port = r.integer(in: b, "port", p, range: 1...65535) { s.port = Int(port) }
      if let k = r.integer(in: b, "keepalive", p, range: keepaliveRange, unit: " s") { s.keepaliveSeconds = Int(k) }
      if let id = r.string(in: b, "clientId", p) {
        if id.utf8.count > 23 {
          r.report(p / "clientId", "must be at most 23 bytes (MQTT 3.1.1)")
        } else {
          s.clientID = id
        }
      }
      if let u = r.string(in: b, "username", p) { s.username = u }
      if let f = r.absolutePath(in: b, "passwordFile", p) { s.passwordFile = f }
      if let v = b["tls"], let t = r.object(v, p / "tls", allowed: allowed(under: "broker.tls")) {
        let tp = p / "tls"
        let ca = r.absolutePath(in: t, "caFile", tp)
        if t["caFile"] == nil { r.report(tp / "caFile", "missing (the certificate authorities' PEM file)") }
        let cert = r.absolutePath(in: t, "certFile", tp)
        let key = r.absolutePath(in: t, "keyFile", tp)
        if (t["certFile"] == nil) != (t["keyFile"] == nil) {
          r.report(tp / (t["certFile"] == nil ? "certFile" : "keyFile"), "missing (certFile and keyFile go together)")
        }
        if let ca { s.tls = TLS(caFile: ca, certFile: cert, keyFile: key) }
      }
    }
    if let v = top["homeAssistant"],
      let h = r.object(v, root / "homeAssistant", allowed: allowed(under: "homeAssistant"))
    {
      let p = root / "homeAssistant"
      if let prefix = r.string(in: h, "discoveryPrefix", p) {
        if let problem = topicProblem(prefix) {
          r.report(p / "discoveryPrefix", problem)
        } else {
          s.discoveryPrefix = prefix
        }
      }
      if let node = r.string(in: h, "nodeId", p) {
        if BridgeTopics.isValidID(node) {
          s.nodeID = node
        } else {
          r.report(p / "nodeId", "must consist of letters, digits, _ and - only, got \(JSONEncoding.quoted(node))")
        }
      }
      if let id = r.string(in: h, "deviceId", p) { s.deviceID = id }
      if let name = r.string(in: h, "deviceName", p) { s.deviceName = name }
    }
    if let topic = top["baseTopic"].flatMap({ r.string($0, root / "baseTopic") }) {
      if let problem = topicProblem(topic) { r.report(root / "baseTopic", problem) } else { s.baseTopic = topic }
    }
    if let path = r.absolutePath(in: top, "socket", root) { s.socketPath = path }
    if let v = top["logLevel"],
      let level = r.word(v, root / "logLevel", LogLevel.allCases.map { ($0.name, $0) })
    {
      s.logLevel = level
    }
    if !r.problems.isEmpty { throw ConfigurationError(problems: r.problems) }
    return s
  }

  /// The keys an object of the file takes (`""`: the top level), from ``keys``: the loader
  /// accepts exactly the keys the guide and `--help` list.
  static func allowed(under parent: String) -> [String] {
    var out: [String] = []
    for (key, _) in keys {
      let rest: Substring
      if parent.isEmpty {
        rest = Substring(key)
      } else {
        guard key.hasPrefix(parent + ".") else { continue }
        rest = key.dropFirst(parent.count + 1)
      }
      let name = String(rest.prefix { $0 != "." })
      if !out.contains(name) { out.append(name) }
    }
    return out
  }

  /// Every key of the configuration file with the flag that overrides it (nil: none): the
  /// guide (docs/home-assistant.md) and `--help` list each one (HomeAssistantDocTests).
  public static let keys: [(key: String, flag: String?)] = [
    ("broker.host", "--host"), ("broker.port", "--port"), ("broker.keepalive", "--keepalive"),
    ("broker.clientId", "--client-id"), ("broker.username", "--username"),
    ("broker.passwordFile", "--password-file"), ("broker.tls.caFile", "--ca-file"),
    ("broker.tls.certFile", "--cert-file"), ("broker.tls.keyFile", "--key-file"),
    ("homeAssistant.discoveryPrefix", "--discovery-prefix"), ("homeAssistant.nodeId", "--node-id"),
    ("homeAssistant.deviceId", "--device-id"), ("homeAssistant.deviceName", "--device-name"),
    ("baseTopic", "--base-topic"), ("socket", "--socket"), ("logLevel", "--log-level"),
  ]

  /// The topics for a host name (used when no node id is configured).
  public func topics(hostName: String) -> BridgeTopics {
    let node = nodeID ?? BridgeTopics.nodeID(fromHostName: hostName)
    return BridgeTopics(discoveryPrefix: discoveryPrefix, nodeID: node, base: baseTopic ?? "actiond/\(node)")
  }
}

/// actiond-mqtt's command line.
public struct BridgeOptions: Equatable, Sendable {
  public enum Mode: Equatable, Sendable {
    case run
    /// Read the configuration, print every problem, exit.
    case checkConfig
    case version
    case help
  }

  public var mode = Mode.run
  /// nil: ``BridgeSettings/defaultConfigPath`` when it exists, else the defaults.
  public var configPath: String?
  /// Flags given, applied over the file in ``apply(to:)``.
  public var flags: [(String, String)] = []

  public static func == (a: BridgeOptions, b: BridgeOptions) -> Bool {
    a.mode == b.mode && a.configPath == b.configPath && a.flags.elementsEqual(b.flags, by: { $0 == $1 })
  }

  public init() {}

  public static let usage = """
    Usage: actiond-mqtt [OPTIONS]

    Bridges actiond to an MQTT broker with Home Assistant discovery: every button's
    gestures become device triggers and an event entity, every control a switch or a
    button, every button's hold assignment a select.

    Options (each overrides the configuration file's setting):
      --config FILE           configuration (default \(BridgeSettings.defaultConfigPath), if it exists)
      --host HOST             broker host (default localhost)
      --port PORT             broker port (default 1883, 8883 with TLS)
      --keepalive SECONDS     MQTT keepalive, 5 to 3600 (default 60)
      --username NAME         broker user name
      --password-file FILE    the password's file (default: the credential mqtt-password)
      --ca-file FILE          enable TLS, trusting these certificate authorities
      --cert-file FILE        client certificate (with --key-file)
      --key-file FILE         client certificate's key
      --client-id ID          MQTT client id, at most 23 bytes (default actiond-mqtt-<node id>)
      --node-id ID            discovery node id (default: the host name)
      --device-id ID          device identifier (default: /etc/machine-id)
      --device-name NAME      the device's name in Home Assistant (default: the node id)
      --discovery-prefix P    Home Assistant's discovery prefix (default homeassistant)
      --base-topic TOPIC      the node's topics (default actiond/<node id>)
      --socket PATH           actiond's socket (default \(SocketSettings.defaultPath))
      --log-level LEVEL       debug, info, notice, warning or error (default info)
      --check-config          validate the configuration and exit
      --version, --help

    Configuration file keys (JSON5; docs/home-assistant.md), each with its flag:
    \(keyList)
    """

  static let keyList = BridgeSettings.keys.map { "  \($0.key)\($0.flag.map { " (\($0))" } ?? "")" }.joined(
    separator: "\n")

  static let valueFlags = [
    "host", "port", "keepalive", "client-id", "username", "password-file", "ca-file", "cert-file", "key-file",
    "node-id", "device-id", "device-name", "discovery-prefix", "base-topic", "socket", "log-level",
  ]

  public static func parse(_ arguments: [String]) throws(UsageError) -> BridgeOptions {
    var o = BridgeOptions()
    var scan = OptionScanner(arguments)
    while try scan.next() {
      let name = scan.name
      switch name {
      case "--help", "-h": o.mode = .help
      case "--version": o.mode = .version
      case "--check-config": o.mode = .checkConfig
      case "--config": o.configPath = try scan.value()
      case _ where name.hasPrefix("--") && valueFlags.contains(String(name.dropFirst(2))):
        o.flags.append((String(name.dropFirst(2)), try scan.value()))
      default:
        throw .init(message: "unknown option \(scan.argument)")
      }
    }
    try scan.finish()
    return o
  }

  /// The settings with the flags applied.
  public func apply(to settings: BridgeSettings) throws(UsageError) -> BridgeSettings {
    var s = settings
    var cert: String?
    var key: String?
    for (flag, value) in flags {
      func absolute() throws(UsageError) -> String {
        guard value.hasPrefix("/") else { throw .init(message: "--\(flag) must be an absolute path, got \(value)") }
        return value
      }
      switch flag {
      case "host":
        guard !value.isEmpty else { throw .init(message: "--host must not be empty") }
        s.host = value
      case "port":
        guard let p = Int(value), (1...65535).contains(p) else {
          throw .init(message: "--port must be a number from 1 to 65535, got \(value)")
        }
        s.port = p
      case "keepalive":
        guard let k = Int64(value), BridgeSettings.keepaliveRange.contains(k) else {
          throw .init(
            message: "--keepalive must be a number of seconds from \(BridgeSettings.keepaliveRange.lowerBound) to "
              + "\(BridgeSettings.keepaliveRange.upperBound), got \(value)")
        }
        s.keepaliveSeconds = Int(k)
      case "client-id":
        // MQTT 3.1.1 (3.1.3.1): a server must accept 1 to 23 bytes; longer ones it may refuse.
        guard !value.isEmpty, value.utf8.count <= 23 else {
          throw .init(message: "--client-id must be 1 to 23 bytes (MQTT 3.1.1), got \(value)")
        }
        s.clientID = value
      case "username": s.username = value
      case "password-file": s.passwordFile = try absolute()
      case "ca-file":
        s.tls = BridgeSettings.TLS(caFile: try absolute(), certFile: s.tls?.certFile, keyFile: s.tls?.keyFile)
      case "cert-file": cert = try absolute()
      case "key-file": key = try absolute()
      case "node-id":
        guard BridgeTopics.isValidID(value) else {
          throw .init(message: "--node-id must consist of letters, digits, _ and - only, got \(value)")
        }
        s.nodeID = value
      case "device-id":
        guard !value.isEmpty else { throw .init(message: "--device-id must not be empty") }
        s.deviceID = value
      case "device-name":
        guard !value.isEmpty else { throw .init(message: "--device-name must not be empty") }
        s.deviceName = value
      case "discovery-prefix", "base-topic":
        if let problem = BridgeSettings.topicProblem(value) { throw .init(message: "--\(flag) \(problem)") }
        if flag == "base-topic" { s.baseTopic = value } else { s.discoveryPrefix = value }
      case "socket": s.socketPath = try absolute()
      case "log-level":
        guard let level = LogLevel(name: value) else {
          throw .init(message: "--log-level must be debug, info, notice, warning or error, got \(value)")
        }
        s.logLevel = level
      default: throw .init(message: "unknown option --\(flag)")
      }
    }
    if cert != nil || key != nil {
      guard let cert, let key else { throw .init(message: "--cert-file and --key-file go together") }
      guard let tls = s.tls else { throw .init(message: "--cert-file needs TLS (--ca-file or broker.tls)") }
      s.tls = BridgeSettings.TLS(caFile: tls.caFile, certFile: cert, keyFile: key)
    }
    return s
  }
}
