// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import FoundationEssentials
import Testing

@testable import ActiondMQTT

/// docs/home-assistant.md must say what actiond-mqtt does: its configuration example loads,
/// its error example is what the loader prints, its discovery payload is what the bridge
/// publishes for the embedded default configuration, and its topic table names the topics.
@Suite struct HomeAssistantDocTests {
  /// The repository's top directory.
  private static let top = repositoryPath()

  private static let doc: String = {
    (try? String(contentsOfFile: top + "/docs/home-assistant.md", encoding: .utf8)) ?? ""
  }()

  /// The fenced block after `<!-- example: KIND -->` (and, with `following`, the one after it).
  private func blocks(_ kind: String) -> [String] {
    let lines = Self.doc.split(separator: "\n", omittingEmptySubsequences: false).map {
      $0.trimmingPrefix(while: { $0 == " " })
    }
    var out: [String] = []
    var i = 0
    var wanted = 0
    while i < lines.count {
      if lines[i] == "<!-- example: \(kind) -->" { wanted = kind == "mqtt-error" ? 2 : 1 }
      if wanted > 0 && lines[i].hasPrefix("```") {
        var j = i + 1
        while j < lines.count && !lines[j].hasPrefix("```") { j += 1 }
        out.append(lines[(i + 1)..<j].map(String.init).joined(separator: "\n"))
        wanted -= 1
        i = j
      }
      i += 1
    }
    return out
  }

  /// Every key the configuration file takes is in the guide and in `--help`, with its flag,
  /// and the list is the loader's: each key is known to it, and a flag the parser takes.
  @Test func everyConfigurationKeyIsInTheGuideAndInHelp() throws {
    for (key, flag) in BridgeSettings.keys {
      #expect(Self.doc.contains("`\(key)`"), "docs/home-assistant.md does not name \(key)")
      #expect(BridgeOptions.usage.contains(key), "--help does not name \(key)")
      if let flag {
        #expect(BridgeOptions.usage.contains(flag + " "), "--help does not list \(flag)")
        #expect(Self.doc.contains("`\(flag)`"), "docs/home-assistant.md does not name \(flag)")
        #expect((try? BridgeOptions.parse([flag, "x"])) != nil, "\(flag) is not a flag")
      }
      // The key in a document of its own: never "unknown key" (a wrong value is fine here).
      let path = key.split(separator: ".")
      var text = "1"
      for part in path.reversed() { text = "{ \(part): \(text) }" }
      do {
        _ = try BridgeSettings.load(ConfigurationSource(name: "k.json5", text: text))
      } catch {
        #expect(!error.description.contains("unknown key"), "\(key): \(error.description)")
      }
    }
  }

  @Test func configurationExampleLoads() throws {
    let examples = blocks("mqtt-config")
    #expect(examples.count == 1)
    for text in examples {
      let s = try BridgeSettings.load(ConfigurationSource(name: "mqtt.json5", text: text))
      #expect(s.host == "homeassistant.lan" && s.nodeID == "kitchen-pi")
    }
  }

  @Test func errorExampleIsWhatTheLoaderPrints() throws {
    let pair = blocks("mqtt-error")
    try #require(pair.count == 2)
    #expect(throws: ConfigurationError.self) {
      _ = try BridgeSettings.load(ConfigurationSource(name: "mqtt.json5", text: pair[0]))
    }
    do {
      _ = try BridgeSettings.load(ConfigurationSource(name: "mqtt.json5", text: pair[0]))
    } catch {
      #expect(error.description == pair[1])
    }
  }

  private func canonical(_ v: JSONValue) -> JSONValue {
    switch v {
    case .object(let o):
      return .object(JSONObject(o.members.sorted { $0.key < $1.key }.map { ($0.key, canonical($0.value)) }))
    case .array(let a): return .array(a.map(canonical))
    default: return v
    }
  }

  @Test func discoveryPayloadIsTheBridgesForTheDefaultConfiguration() throws {
    let documented = try #require(blocks("discovery").first)
    let config = try ConfigurationLoader.load(main: nil)
    let controls = config.controls.map {
      ControlSnapshot(
        kind: $0.kind, displayName: $0.displayName, type: $0.type == .toggle ? .toggle : .button, hint: "")
    }
    let buttons = config.buttons.map { b in
      ButtonStatus(
        name: b.name, key: b.keyName, devices: [], holdThreshold: b.holdThreshold,
        control: controls.first { $0.kind == config.assignments[b.name]?[.hold]?.instance.kind })
    }
    var model = BridgeModel(
      topics: BridgeTopics(discoveryPrefix: "homeassistant", nodeID: "pi", base: "actiond/pi"),
      // The documented payload shows version 0.1.0, whatever this build is.
      identity: BridgeIdentity(deviceID: "0123456789abcdef0123456789abcdef", deviceName: "pi", softwareVersion: "0.1.0")
    )
    model.load(buttons: buttons, controls: controls)
    let published = try JSONParser.parse(model.discovery().text).root
    let doc = try JSONParser.parse(documented).root
    #expect(canonical(published) == canonical(doc), "\(JSONEncoding.pretty(published))")
  }

  @Test func topicTableNamesTheTopics() {
    let t = BridgeTopics(discoveryPrefix: "homeassistant", nodeID: "<node>", base: "<base>")
    for topic in [
      t.discovery, t.bridgeAvailability, t.daemonAvailability, t.buttonEvent("<b>"), t.assignment("<b>"),
      t.assignmentCommand("<b>"), t.controlState("<c>"), t.controlAvailability("<c>"), t.controlCommand("<c>"),
    ] {
      #expect(Self.doc.contains("| `\(topic)` |"), "docs/home-assistant.md's table lacks \(topic)")
    }
    for event in BridgeGesture.allCases { #expect(Self.doc.contains("`\(event.rawValue)`")) }
  }

  /// The reliability figures the guide and the man page give are the code's: the broker
  /// backoff, the keepalive's default and range. (What happens in a network cut is
  /// test-mqtt's scenario network-cut; name resolution, its scenario name-resolution.)
  @Test func reliabilityFiguresAreTheCodes() throws {
    // Whitespace made single spaces: the sentences wrap anywhere.
    func flat(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
    let doc = flat(Self.doc)
    let man = flat(try String(contentsOfFile: Self.top + "/docs/man/actiond-mqtt.8.md", encoding: .utf8))
    func says(
      _ text: String, _ name: String, _ sentence: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
      let found = text.contains(sentence)
      #expect(found, "\(name) does not say: \(sentence)", sourceLocation: sourceLocation)
    }
    let backoff = Backoff()
    func seconds(_ t: TimeSpan) -> String {
      t.nanoseconds % 1_000_000_000 == 0
        ? "\(t.nanoseconds / 1_000_000_000) s" : "\(Double(t.nanoseconds) / 1e9) s"
    }
    let doubling = "\(seconds(backoff.initial)) doubling to \(seconds(backoff.maximum))"
    let guide = "docs/home-assistant.md"
    let page = "docs/man/actiond-mqtt.8.md"
    says(doc, guide, "(\(doubling), back to \(seconds(backoff.initial)) once connected)")
    says(man, page, "backoff (\(doubling) for the broker")
    let range = BridgeSettings.keepaliveRange
    let keepalive = BridgeSettings().keepaliveSeconds
    says(doc, guide, "`--keepalive`, \(range.lowerBound) to \(range.upperBound) s, default \(keepalive);")
    says(doc, guide, "keepalive: \(keepalive), // seconds, \(range.lowerBound) to \(range.upperBound)")
    says(man, page, "The MQTT keepalive, \(range.lowerBound) to \(range.upperBound) s. Default: \(keepalive).")
  }

  /// The Home Assistant releases the page says the payloads were checked against, and the
  /// minimum it names, are those the checker (Tests/mqtt/homeassistant.py) was written from;
  /// the range it names is the one `make test-ha` runs (mk/ha.mk's HA_VERSIONS, oldest first).
  @Test func checkedReleasesAreTheCheckers() throws {
    let checker = try String(contentsOfFile: Self.top + "/Tests/mqtt/homeassistant.py", encoding: .utf8)
    let wheels = checker.matches(of: #/homeassistant-(\d+\.\d+\.\d+)-py3-none-any\.whl/#).map { String($0.output.1) }
    #expect(wheels.count >= 2)
    for version in wheels { #expect(Self.doc.contains(version), "docs/home-assistant.md does not name \(version)") }
    let sha = try #require(checker.firstMatch(of: #/sha256 ([0-9a-f]{64})/#)).output.1
    #expect(Self.doc.contains(String(sha)))
    let first = try #require(
      checker.firstMatch(of: #/homeassistant-(\d+\.\d+\.\d+)-py3-none-any\.whl, the first release with device-based/#)
    ).output.1
    let tier = try String(contentsOfFile: Self.top + "/mk/ha.mk", encoding: .utf8)
    let pinned = try #require(tier.firstMatch(of: #/\nHA_VERSIONS \?= ([^\n]+)/#)).output.1
      .split(separator: " ").map { String($0.split(separator: ":")[0]) }
    #expect(pinned.first == String(first), "make test-ha's oldest Home Assistant is not the documented minimum")
    let newest = pinned.last ?? ""
    #expect(Self.doc.contains("Home Assistant **\(first) to \(newest)**"))
  }

  /// actiond-mqtt(8) documents exactly the options the bridge's usage lists.
  @Test func manPageNamesEveryOption() throws {
    let man = try String(contentsOfFile: Self.top + "/docs/man/actiond-mqtt.8.md", encoding: .utf8)
    let usage = Set(BridgeOptions.usage.matches(of: #/--[a-z][a-z-]*/#).map { String($0.output) })
    let documented = Set(man.matches(of: #/\*\*(--[a-z][a-z-]*)\*\*/#).map { String($0.output.1) })
    #expect(usage.count > 10)
    #expect(usage.subtracting(documented).isEmpty, "missing from actiond-mqtt.8.md: \(usage.subtracting(documented))")
    #expect(documented.subtracting(usage).isEmpty, "not actiond-mqtt's: \(documented.subtracting(usage))")
    #expect(man.contains(BridgeSettings.defaultConfigPath))
  }

  /// "What commands do" names the bridge's own limits on waiting commands.
  @Test func commandLimitsAreTheCodes() {
    let doc = Self.doc.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    let wait = "most \(BridgeModel.maxHeld) wait, over all controls"
    #expect(doc.contains(wait), "docs/home-assistant.md does not say: \(wait)")
    let limit = "each at most \(BridgeModel.holdLimit.milliseconds / 1000) s"
    #expect(doc.contains(limit), "docs/home-assistant.md does not say: \(limit)")
    #expect(doc.contains("one at a time per control"))
  }
}
