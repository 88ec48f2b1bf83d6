// SPDX-License-Identifier: Apache-2.0
/// The command line of `actiond learn`, parsed without Foundation so it is testable in the core.
public struct LearnOptions: Equatable, Sendable {
  /// Print the JSON object (docs/keyboard-key.md) instead of the report.
  public var json = false
  /// Print a whole configuration (the embedded default on the learned button) on
  /// standard output, the report on standard error.
  public var configuration = false
  /// How long to wait for the key-down; nil waits until one comes.
  public var timeout: TimeSpan?
  /// The button's name in the snippet and the udev rule.
  public var buttonName = "action"
  /// The udev rule also adds `TAG+="uaccess"`.
  public var uaccess = false
  public var help = false

  public init() {}

  /// Documented exit statuses (also in `actiond learn --help`, actiond(8) and docs/keyboard-key.md).
  public enum ExitStatus: Int32, CaseIterable {
    /// A key-down was learned and printed.
    case learned = 0
    /// Discovery could not start (libudev, epoll).
    case failed = 1
    case usage = 2
    /// No input device can be read (none present, or permissions): nothing to wait on.
    case nothingReadable = 3
    /// `--timeout` passed without a key-down.
    case timedOut = 5
  }

  public static let usage = """
    Usage: actiond learn [--json | --configuration] [--timeout SECONDS] [--name BUTTON] [--uaccess]

    Waits for the next key-down on any input device you can read (devices plugged in
    meanwhile count), then prints the device, the key, a button for the configuration and
    a udev rule that tags exactly that device. Reads nothing after that one key.

    Options:
      --json             one JSON object instead of the report
      --configuration    a whole configuration on standard output (the embedded default's
                         Work Timer on the learned button; the report goes to standard error)
      --timeout SECONDS  give up after this long (default: wait until a key goes down)
      --name BUTTON      the button's name (default action)
      --uaccess          the udev rule also lets the desktop's active user read the device
      --help             print this help and exit

    Exit status: 0 learned, 1 discovery failed, 2 usage error, 3 no input device is
    readable (the message says why), 5 timed out.
    """

  /// Parses the arguments after `learn`. Accepts `--opt value` and `--opt=value`.
  public static func parse(_ arguments: [String]) throws(UsageError) -> LearnOptions {
    var options = LearnOptions()
    var scan = OptionScanner(arguments)
    while try scan.next() {
      switch scan.name {
      case "--json":
        options.json = true
      case "--configuration":
        options.configuration = true
      case "--uaccess":
        options.uaccess = true
      case "--timeout":
        let text = try scan.value()
        guard let seconds = Double(text), seconds > 0, seconds < 1e9 else {
          throw UsageError(message: "--timeout needs a positive number of seconds, got \"\(text)\"")
        }
        options.timeout = TimeSpan(nanoseconds: Int64(seconds * 1e9))
      case "--name":
        let v = try scan.value()
        guard ButtonConfig.isValidName(v) else {
          throw UsageError(
            message: "invalid button name \"\(v)\" (letters, digits, -, _, ., starting with a letter or digit, ≤ 64)")
        }
        options.buttonName = v
      case "--help", "-h":
        options.help = true
      default:
        throw UsageError(message: "unknown argument '\(scan.argument)' for learn")
      }
    }
    try scan.finish()
    if options.json && options.configuration {
      throw UsageError(message: "--json and --configuration exclude each other")
    }
    return options
  }
}
