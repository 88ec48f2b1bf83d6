// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore
@testable import ActiondMQTT

private func load(_ text: String) throws(ConfigurationError) -> BridgeSettings {
  try BridgeSettings.load(ConfigurationSource(name: "mqtt.json5", text: text))
}

private func problems(_ text: String) -> [String] {
  do {
    _ = try load(text)
    return []
  } catch { return error.problems.map(\.description) }
}

@Suite struct BridgeSettingsTests {
  @Test func everyKey() throws {
    let s = try load(
      """
      // JSON5, like actiond's own configuration.
      {
        broker: {
          host: "mqtt.lan", port: 8884, keepalive: 30, clientId: "pi-bridge", username: "pi",
          passwordFile: "/etc/actiond/mqtt-password",
          tls: { caFile: "/etc/ssl/ca.pem", certFile: "/etc/actiond/pi.pem", keyFile: "/etc/actiond/pi.key" },
        },
        homeAssistant: { discoveryPrefix: "ha", nodeId: "kitchen-pi", deviceId: "abc", deviceName: "Kitchen" },
        baseTopic: "home/actiond/kitchen",
        socket: "/run/actiond/actiond.sock",
        logLevel: "debug",
      }
      """)
    #expect(s.host == "mqtt.lan" && s.effectivePort == 8884 && s.keepaliveSeconds == 30)
    #expect(s.clientID == "pi-bridge" && s.username == "pi" && s.passwordFile == "/etc/actiond/mqtt-password")
    #expect(
      s.tls
        == BridgeSettings.TLS(
          caFile: "/etc/ssl/ca.pem", certFile: "/etc/actiond/pi.pem", keyFile: "/etc/actiond/pi.key"))
    #expect(s.discoveryPrefix == "ha" && s.nodeID == "kitchen-pi" && s.deviceID == "abc" && s.deviceName == "Kitchen")
    #expect(s.logLevel == .debug)
    let t = s.topics(hostName: "ignored")
    #expect(t.discovery == "ha/device/kitchen-pi/config")
    #expect(t.controlCommand("x") == "home/actiond/kitchen/control/x/set")
  }

  @Test func defaults() throws {
    let s = try load("{}")
    #expect(s.host == "localhost" && s.effectivePort == 1883 && s.tls == nil && s.keepaliveSeconds == 60)
    var tls = s
    tls.tls = BridgeSettings.TLS(caFile: "/ca")
    #expect(tls.effectivePort == 8883)
    let t = s.topics(hostName: "raspberrypi.local")
    #expect(t.nodeID == "raspberrypi" && t.base == "actiond/raspberrypi")
    #expect(t.discovery == "homeassistant/device/raspberrypi/config")
    #expect(BridgeTopics.nodeID(fromHostName: "my pi") == "my_pi")
  }

  @Test func everyProblemWithItsPathAndLine() {
    let found = problems(
      """
      {
        broker: { hots: "x", port: 0, keepalive: 2, clientId: "a-client-id-longer-than-23", passwordFile: "rel",
          tls: { certFile: "/c" } },
        homeAssistant: { nodeId: "a.b", discoveryPrefix: "ha/#" },
        baseTopic: "/lead",
        logLevel: "loud",
        extra: 1,
      }
      """)
    #expect(
      found == [
        "mqtt.json5:7: extra: unknown key",
        "mqtt.json5:2: broker.hots: unknown key (did you mean host?)",
        "mqtt.json5:2: broker.port: must be between 1 and 65535, got 0",
        "mqtt.json5:2: broker.keepalive: must be between 5 and 3600 s, got 2",
        "mqtt.json5:2: broker.clientId: must be at most 23 bytes (MQTT 3.1.1)",
        "mqtt.json5:2: broker.passwordFile: must be an absolute path (starting with /), got \"rel\"",
        "mqtt.json5:3: broker.tls.caFile: missing (the certificate authorities' PEM file)",
        "mqtt.json5:3: broker.tls.keyFile: missing (certFile and keyFile go together)",
        "mqtt.json5:4: homeAssistant.discoveryPrefix: must not contain the wildcards + or #",
        "mqtt.json5:4: homeAssistant.nodeId: must consist of letters, digits, _ and - only, got \"a.b\"",
        "mqtt.json5:5: baseTopic: must not start or end with /",
        "mqtt.json5:6: logLevel: must be one of debug, info, notice, warning, error, got \"loud\"",
      ], "\(found)")
    #expect(problems("{ broker: ").count == 1)
    #expect(problems("[]") == ["mqtt.json5:1: must be an object, got array"])
  }

  @Test func flagsOverTheFile() throws {
    let o = try BridgeOptions.parse([
      "--config", "/etc/x.json5", "--host=broker", "--port", "1884", "--node-id", "n2", "--base-topic", "b/n2",
      "--ca-file", "/ca.pem", "--cert-file", "/c.pem", "--key-file", "/k.pem", "--log-level", "warning",
      "--keepalive", "5",
    ])
    #expect(o.configPath == "/etc/x.json5" && o.mode == .run)
    let s = try o.apply(to: BridgeSettings())
    #expect(s.host == "broker" && s.port == 1884 && s.nodeID == "n2" && s.baseTopic == "b/n2")
    #expect(s.tls == BridgeSettings.TLS(caFile: "/ca.pem", certFile: "/c.pem", keyFile: "/k.pem"))
    #expect(s.logLevel == .warning && s.keepaliveSeconds == 5)
    #expect(try BridgeOptions.parse(["--check-config"]).mode == .checkConfig)
  }

  @Test func flagMistakes() {
    func message(_ args: [String]) -> String? {
      do {
        _ = try BridgeOptions.parse(args).apply(to: BridgeSettings())
        return nil
      } catch { return error.message }
    }
    #expect(message(["--bogus"]) == "unknown option --bogus")
    #expect(message(["--host"]) == "option --host needs a value")
    // The next option is not a value: this once connected to a host named "--port".
    #expect(message(["--host", "--port", "1883"]) == "option --host needs a value")
    #expect(message(["--check-config=yes"]) == "option --check-config takes no value (got '--check-config=yes')")
    #expect(message(["--port", "x"]) == "--port must be a number from 1 to 65535, got x")
    // libmosquitto refuses a keepalive of 1 to 4 s; 0 (none) would never notice a silent cut.
    #expect(message(["--keepalive", "4"]) == "--keepalive must be a number of seconds from 5 to 3600, got 4")
    #expect(message(["--keepalive", "0"]) == "--keepalive must be a number of seconds from 5 to 3600, got 0")
    #expect(message(["--keepalive", "3601"]) == "--keepalive must be a number of seconds from 5 to 3600, got 3601")
    #expect(message(["--keepalive", "1.5"]) == "--keepalive must be a number of seconds from 5 to 3600, got 1.5")
    #expect(message(["--node-id", "a/b"]) == "--node-id must consist of letters, digits, _ and - only, got a/b")
    #expect(message(["--base-topic", "a/+/b"]) == "--base-topic must not contain the wildcards + or #")
    #expect(message(["--base-topic", "a/#"]) == "--base-topic must not contain the wildcards + or #")
    #expect(message(["--base-topic", "a//b"]) == "--base-topic must not contain an empty level (//)")
    #expect(message(["--base-topic", "/a"]) == "--base-topic must not start or end with /")
    #expect(message(["--base-topic", "a/b/c"]) == nil)
    #expect(message(["--socket", "rel"]) == "--socket must be an absolute path, got rel")
    #expect(message(["--cert-file", "/c"]) == "--cert-file and --key-file go together")
    #expect(message(["--cert-file", "/c", "--key-file", "/k"]) == "--cert-file needs TLS (--ca-file or broker.tls)")
    #expect(message(["--log-level", "loud"]) == "--log-level must be debug, info, notice, warning or error, got loud")
  }

  @Test func commandTopics() {
    let t = BridgeTopics(discoveryPrefix: "homeassistant", nodeID: "n", base: "a/n")
    #expect(t.commandTarget(of: "a/n/control/x/set") == .control(id: "x"))
    #expect(t.commandTarget(of: "a/n/button/b/assignment/set") == .assignment(button: "b"))
    #expect(t.commandTarget(of: "a/n/control/x/state") == nil)
    #expect(t.commandTarget(of: "a/nn/control/x/set") == nil)
    #expect(
      t.subscriptions == [
        "a/n/control/+/set", "a/n/button/+/assignment/set", "homeassistant/status", "homeassistant/device/n/config",
      ])
  }
}
