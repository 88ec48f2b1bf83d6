// SPDX-License-Identifier: Apache-2.0
// actiond-mqtt: reads its command line and configuration, then hands over to the bridge.
import ActiondCore
import ActiondLinux
import ActiondMQTT
import Glibc

signal(SIGPIPE, SIG_IGN)
let options: BridgeOptions
do { options = try BridgeOptions.parse(Array(CommandLine.arguments.dropFirst())) } catch {
  printError("actiond-mqtt: \(error.message)\n\n\(BridgeOptions.usage)")
  exit(2)
}
switch options.mode {
case .help:
  print(BridgeOptions.usage)
  exit(0)
case .version:
  print("actiond-mqtt \(ActiondVersion.string)")
  exit(0)
case .run, .checkConfig:
  break
}

let environment = ProcessEnvironment.current()
var settings = BridgeSettings()
let configPath = options.configPath ?? BridgeSettings.defaultConfigPath
if options.configPath != nil || access(configPath, F_OK) == 0 {
  do {
    settings = try BridgeSettings.load(ConfigurationSource(name: configPath, text: ConfigurationFiles.read(configPath)))
  } catch let error as ConfigurationError {
    printError(error.report)
    exit(1)
  } catch {
    printError("actiond-mqtt: \(error)")
    exit(1)
  }
}
do { settings = try options.apply(to: settings) } catch {
  printError("actiond-mqtt: \(error.message)")
  exit(2)
}
if options.mode == .checkConfig {
  print("\(options.configPath ?? configPath): OK (broker \(settings.host):\(settings.effectivePort))")
  exit(0)
}

/// The first line of a file, nil when it does not exist; exits when it cannot be read.
func firstLine(_ path: String, what: String, required: Bool) -> String? {
  guard required || access(path, F_OK) == 0 else { return nil }
  do {
    let text = try ConfigurationFiles.read(path)
    return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
  } catch {
    printError("actiond-mqtt: \(what): \(error)")
    exit(1)
  }
}

var password: String?
if let file = settings.passwordFile {
  password = firstLine(file, what: "password file", required: true)
} else if let credentials = environment["CREDENTIALS_DIRECTORY"] {
  password = firstLine("\(credentials)/\(BridgeSettings.passwordCredential)", what: "credential", required: false)
}
var hostName = [CChar](repeating: 0, count: 256)
gethostname(&hostName, hostName.count - 1)
let machineID = firstLine("/etc/machine-id", what: "machine id", required: false).flatMap { $0.isEmpty ? nil : $0 }

let logger = Logger(
  minimumLevel: settings.logLevel,
  sink: StreamLogSink(syslogPrefixes: environment["JOURNAL_STREAM"] != nil || environment["INVOCATION_ID"] != nil))
do {
  let bridge = try Bridge(
    settings: settings,
    host: Bridge.Host(
      name: String(decoding: hostName.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
      machineID: machineID, password: password),
    logger: logger)
  try bridge.run()
} catch {
  printError("actiond-mqtt: \(error)")
  exit(1)
}
