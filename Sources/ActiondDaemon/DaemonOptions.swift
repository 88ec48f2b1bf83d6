// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// The daemon's command line, parsed without Foundation.
public struct DaemonOptions: Equatable, Sendable {
  /// What the invocation asks for.
  public enum Mode: Equatable, Sendable {
    /// Run the daemon in the foreground.
    case run
    /// Validate a configuration (the given file, or the one `run` would use) and exit.
    case checkConfig(file: String?)
    /// `actiond learn`: wait for the next key-down and print what binds it.
    case learn(LearnOptions)
    case version
    case help
  }

  public static let defaultConfigPath = "/etc/actiond/actiond.json"
  public static let defaultSocketPath = "/run/actiond/actiond.sock"
  public static let defaultStateDirectory = "/var/lib/actiond"

  public var mode: Mode = .run
  /// nil: the default path, falling back to the embedded configuration when it does not exist.
  public var configPath: String?
  /// Overrides the configuration's socket path.
  public var socketPath: String?
  /// Overrides the configuration's state directory.
  public var stateDirectory: String?
  /// nil: the configuration's `logLevel` (default info).
  public var logLevel: LogLevel?

  public init() {}

  public static let usage = """
    Usage: actiond [OPTIONS]
           actiond learn [--json | --configuration] [--timeout SECONDS] [--name BUTTON] [--uaccess]

    The Action button daemon: a short press announces the hint of the control
    assigned to a button, a hold performs the control's intent once.

    Options:
      --config FILE         main configuration file (default \(defaultConfigPath);
                            the embedded default configuration is used when it does not exist)
      --socket PATH         control socket (default \(defaultSocketPath))
      --state-dir DIR       state directory (default \(defaultStateDirectory))
      --log-level LEVEL     debug, info, notice, warning or error (default info)
      --check-config [FILE] validate the configuration, print every problem, exit
      learn                 wait for the next key-down on any readable input device and print
                            the device, the key, its configuration and udev rule (learn --help)
      --version             print the version and exit
      --help                print this help and exit

    Signals: SIGHUP reloads the configuration (an invalid one is rejected and the
    running one kept); SIGTERM and SIGINT stop cleanly.
    """

  /// Parses arguments (without the program name). Accepts `--opt value` and `--opt=value`.
  public static func parse(_ arguments: [String]) throws(UsageError) -> DaemonOptions {
    var options = DaemonOptions()
    // `learn` is a command of its own with its own options (it does not run the daemon).
    if arguments.first == "learn" {
      options.mode = .learn(try LearnOptions.parse(Array(arguments.dropFirst())))
      return options
    }
    var scan = OptionScanner(arguments)
    while try scan.next() {
      switch scan.name {
      case "--config", "-c":
        options.configPath = try scan.value()
      case "--socket":
        options.socketPath = try scan.value()
      case "--state-dir":
        options.stateDirectory = try scan.value()
      case "--log-level":
        let v = try scan.value()
        guard let level = LogLevel(name: v) else {
          throw UsageError(message: "unknown log level '\(v)' (use debug, info, notice, warning or error)")
        }
        options.logLevel = level
      case "--check-config":
        // The file is optional: the next argument only when it is not another option.
        options.mode = .checkConfig(file: scan.optionalValue())
      case "--version", "-V":
        options.mode = .version
      case "--help", "-h":
        options.mode = .help
      default:
        throw UsageError(message: "unknown argument '\(scan.argument)'")
      }
    }
    try scan.finish()
    return options
  }
}
