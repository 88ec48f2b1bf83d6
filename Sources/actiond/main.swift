// SPDX-License-Identifier: Apache-2.0
// actiond: parses the command line and hands over to the library; nothing else.
import ActiondCore
import ActiondDaemon
import ActiondLinux
import Glibc

let options: DaemonOptions
do {
  options = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
  let learning = CommandLine.arguments.dropFirst().first == "learn"
  printError("actiond: \(error.message)\n\n\(learning ? LearnOptions.usage : DaemonOptions.usage)")
  exit(2)
}

switch options.mode {
case .help:
  print(DaemonOptions.usage)
case .version:
  print("actiond \(ActiondVersion.string) (protocol \(ProtocolVersion.current))")
case .checkConfig(let file):
  do {
    let configuration = try ConfigurationFiles.load(mainPath: file ?? options.configPath)
    print(
      "\(file ?? options.configPath ?? "configuration"): OK (\(configuration.buttons.count) button(s), "
        + "\(configuration.controls.count) control(s), \(configuration.assignmentCount) assignment(s))")
  } catch let error as ConfigurationError {
    printError(error.report)
    exit(1)
  } catch {
    printError("actiond: \(error)")
    exit(1)
  }
case .learn(let learnOptions):
  exit(LearnCommand.run(learnOptions, program: CommandLine.arguments.first ?? "actiond"))
case .run:
  do {
    let daemon = try Daemon(
      settings: Daemon.Settings(
        configPath: options.configPath, socketPath: options.socketPath, stateDirectory: options.stateDirectory,
        logLevel: options.logLevel, program: CommandLine.arguments.first ?? "actiond"))
    try daemon.run()
  } catch {
    printError("actiond: \(error)")
    exit(1)
  }
}
