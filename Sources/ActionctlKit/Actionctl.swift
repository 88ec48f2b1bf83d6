// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import Glibc

/// `actionctl`: the command-line client of the daemon's socket. The executable only
/// calls ``Actionctl/main(arguments:environment:)``; everything else is here so tests
/// can drive it.
public enum Actionctl {
  /// Documented exit statuses (also in docs/protocol.md and `actionctl --help`).
  public enum ExitStatus: Int32 {
    case ok = 0
    /// The daemon answered with an error (or check-config found problems).
    case failed = 1
    case usage = 2
    case cannotConnect = 3
    /// The connection broke or the daemon sent something unreadable.
    case protocolError = 4
    case timedOut = 5
  }

  public static let defaultSocket = "/run/actiond/actiond.sock"

  public static let usage = """
    usage: actionctl [--socket PATH] [--json] [--timeout SECONDS] COMMAND [ARGS]

    commands:
      status [BUTTON]                      buttons, each gesture's control, state and hint
      list                                 every control
      get KIND                             one control's instances
      assign BUTTON KIND [NAME=VALUE...] [--gesture hold|doublePress|longHold] [--momentary]
                                           assign a control to a gesture (default hold); configuration
                                           as NAME=VALUE or one JSON object; --momentary: a toggle's
                                           hold is on while held, off at the release
      set KIND on|off [NAME=VALUE...]      set a store-backed toggle's value
      perform [BUTTON | KIND | --kind KIND [NAME=VALUE...]]
                                           perform as a hold would; waits for the result
      press [BUTTON] [--hold MS | --double]
                                           press the button without hardware: a short press (the
                                           hint), a hold of MS milliseconds (0-120000; holds, long
                                           holds, momentary toggles) or a double press, recognized
                                           like the key; the daemon releases it, no need to wait
      reload [KIND]                        re-read values and announce changes
      devices                              bound input devices
      watch [--button B]... [--kind K]... [--events E,E...] [--notify]
                                           follow announcements; --notify: as desktop
                                           notifications (notify-send), one per button
      check-config [FILE]                  validate a configuration locally (no daemon needed)
      version                              daemon and client versions

    options:
      --socket PATH      the daemon's socket (default $ACTIOND_SOCKET or /run/actiond/actiond.sock)
      --json             print raw protocol lines instead of text
      --timeout SECONDS  how long to wait for an answer (default 60; 0 waits forever)

    exit status: 0 ok, 1 the request failed, 2 usage error, 3 cannot connect,
                 4 connection lost or unreadable answer, 5 timed out
    """

  struct Options {
    var socket: String
    var json = false
    var timeout: TimeSpan? = .seconds(60)
    var command = ""
    var arguments: [String] = []
    /// actionctl's environment, for the programs it runs (`watch --notify`).
    var environment: [String: String] = [:]
  }

  struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
  }

  /// Runs one invocation; returns the exit status.
  public static func main(arguments: [String], environment: [String: String]) -> Int32 {
    let out = Terminal(fd: 1)
    let err = Terminal(fd: 2)
    let options: Options
    do {
      guard let parsed = try parse(arguments, environment: environment) else {
        out.line(usage)
        return ExitStatus.ok.rawValue
      }
      options = parsed
    } catch {
      err.line("actionctl: \(error.message)\n\(usage)")
      return ExitStatus.usage.rawValue
    }
    do {
      return try run(options, out: out, err: err).rawValue
    } catch let error as UsageError {
      err.line("actionctl: \(error.message)\n\(usage)")
      return ExitStatus.usage.rawValue
    } catch let error as ControlClient.Failure {
      err.line("actionctl: \(error)")
      switch error {
      case .cannotConnect: return ExitStatus.cannotConnect.rawValue
      case .timedOut: return ExitStatus.timedOut.rawValue
      case .closed, .malformed, .io: return ExitStatus.protocolError.rawValue
      }
    } catch {
      err.line("actionctl: \(error)")
      return ExitStatus.failed.rawValue
    }
  }

  /// nil for `--help`.
  static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Options? {
    var options = Options(socket: environment["ACTIOND_SOCKET"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultSocket)
    options.environment = environment
    var rest: [String] = []
    var i = 0
    var literal = false
    while i < arguments.count {
      let a = arguments[i]
      if literal {
        rest.append(a)
      } else if a == "--" {
        literal = true
      } else if a == "--json" {
        options.json = true
      } else if a == "-h" || a == "--help" {
        return nil
      } else if let socket = try optionValue("--socket", arguments, &i, missing: "--socket needs a value") {
        options.socket = socket
        if options.socket.isEmpty { throw UsageError("--socket needs a path") }
      } else if let text = try optionValue("--timeout", arguments, &i, missing: "--timeout needs a value") {
        guard let seconds = Double(text), seconds >= 0, seconds < 1e9 else {
          throw UsageError("--timeout needs a number of seconds, got \"\(text)\"")
        }
        options.timeout = seconds == 0 ? nil : TimeSpan(nanoseconds: Int64(seconds * 1e9))
      } else if a == "--version" {
        rest = ["version"]
        break
      } else {
        rest.append(a)
      }
      i += 1
    }
    guard let command = rest.first else { throw UsageError("a command is needed") }
    options.command = command
    options.arguments = Array(rest.dropFirst())
    return options
  }

  /// `NAME=VALUE` pairs (values that are JSON literals are taken as JSON, anything else
  /// as a string) or a single JSON object.
  static func configuration(_ args: ArraySlice<String>) throws(UsageError) -> JSONObject {
    if args.count == 1, let only = args.first, only.hasPrefix("{") {
      guard let object = (try? JSONParser.parse(only))?.root.objectValue else {
        throw UsageError("the configuration \(only) is not a JSON object")
      }
      return object
    }
    var object = JSONObject()
    for arg in args {
      guard let eq = arg.firstIndex(of: "="), eq != arg.startIndex else {
        throw UsageError("expected NAME=VALUE, got \"\(arg)\"")
      }
      let name = String(arg[..<eq])
      let text = String(arg[arg.index(after: eq)...])
      guard object[name] == nil else { throw UsageError("\(name) is given twice") }
      object[name] = (try? JSONParser.parse(text))?.root ?? .string(text)
    }
    return object
  }

  /// `assign BUTTON KIND [NAME=VALUE...] [--gesture G] [--momentary]`; the options may
  /// stand anywhere after the command.
  static func assignBody(_ arguments: [String]) throws(UsageError) -> Request.Body {
    var positional: [String] = []
    var gesture: Gesture?
    var momentary = false
    var i = 0
    while i < arguments.count {
      let arg = arguments[i]
      if arg == "--momentary" {
        momentary = true
      } else if let name = try optionValue(
        "--gesture", arguments, &i, missing: "--gesture needs one of \(Gesture.names)")
      {
        guard gesture == nil else { throw UsageError("--gesture is given twice") }
        guard let g = Gesture(rawValue: name) else {
          var message = "--gesture takes one of \(Gesture.names), got \"\(name)\""
          if let s = Gesture.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) {
            message += " (did you mean \(s)?)"
          }
          throw UsageError(message)
        }
        gesture = g
      } else if arg.hasPrefix("-") {
        // Button names and kinds start with a letter or digit, and configuration is
        // NAME=VALUE: a dash here is a mistyped option, not an argument.
        throw UsageError("assign has no option \"\(arg)\" (its options: --gesture G, --momentary)")
      } else {
        positional.append(arg)
      }
      i += 1
    }
    guard positional.count >= 2 else { throw UsageError("assign needs BUTTON and KIND") }
    if momentary, let gesture, gesture != .hold {
      throw UsageError("--momentary is only for the hold, not --gesture \(gesture)")
    }
    return .assign(
      button: positional[0], kind: positional[1], configuration: try configuration(positional[2...]),
      gesture: gesture ?? .hold, momentary: momentary)
  }

  /// `press [BUTTON] [--hold MS | --double]`; the options may come before or after BUTTON.
  static func pressArguments(_ arguments: [String]) throws(UsageError) -> (String?, VirtualPress) {
    var positional: [String] = []
    var hold: TimeSpan?
    var double = false
    var i = 0
    while i < arguments.count {
      let arg = arguments[i]
      if arg == "--double" {
        double = true
      } else if let text = try optionValue("--hold", arguments, &i, missing: "--hold needs a number of milliseconds") {
        let max = VirtualPress.maxHold.milliseconds
        guard let ms = Int64(text), ms >= 0, ms <= max else {
          throw UsageError("--hold takes whole milliseconds from 0 to \(max), got \"\(text)\"")
        }
        guard hold == nil else { throw UsageError("--hold is given twice") }
        hold = .milliseconds(ms)
      } else if arg.hasPrefix("-") {
        throw UsageError("press has no option \"\(arg)\" (its options: --hold MS, --double)")
      } else {
        positional.append(arg)
      }
      i += 1
    }
    guard positional.count <= 1 else { throw UsageError("press takes at most one BUTTON, got \(positional.count)") }
    if double, hold != nil { throw UsageError("press takes --hold MS or --double, not both") }
    return (positional.first, hold.map(VirtualPress.hold) ?? (double ? .double : .short))
  }

  /// The value of option `name` when `arguments[i]` is that option: what follows its `=`,
  /// or the next argument (`i` moves on to it; `missing` is the error when there is none).
  /// Nil when the argument is something else.
  private static func optionValue(
    _ name: String, _ arguments: [String], _ i: inout Int, missing: @autoclosure () -> String
  ) throws(UsageError) -> String? {
    let arg = arguments[i]
    if arg.hasPrefix(name + "=") { return String(arg.dropFirst(name.count + 1)) }
    guard arg == name else { return nil }
    i += 1
    guard i < arguments.count else { throw UsageError(missing()) }
    return arguments[i]
  }

  static func expectCount(_ o: Options, _ range: ClosedRange<Int>) throws(UsageError) {
    guard range.contains(o.arguments.count) else {
      let expected =
        range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
      throw UsageError("\(o.command) takes \(expected) argument(s), got \(o.arguments.count)")
    }
  }

  static func run(_ o: Options, out: Terminal, err: Terminal) throws -> ExitStatus {
    let body: Request.Body
    let a = o.arguments
    switch o.command {
    case "status":
      try expectCount(o, 0...1)
      body = .status(button: a.first)
    case "list":
      try expectCount(o, 0...0)
      body = .list
    case "get":
      try expectCount(o, 1...1)
      body = .get(kind: a[0])
    case "assign":
      body = try assignBody(a)
    case "set":
      guard a.count >= 2 else { throw UsageError("set needs KIND and on|off") }
      let value: Bool
      switch a[1].lowercased() {
      case "on", "true", "1", "yes": value = true
      case "off", "false", "0", "no": value = false
      default: throw UsageError("set takes on or off, got \"\(a[1])\"")
      }
      let config = try configuration(a[2...])
      body = .set(kind: a[0], value: value, configuration: config.isEmpty ? nil : config)
    case "perform":
      if a.first == "--kind" {
        guard a.count >= 2 else { throw UsageError("--kind needs a KIND") }
        let config = try configuration(a[2...])
        body = .perform(.control(kind: a[1], configuration: config.isEmpty ? nil : config))
      } else {
        try expectCount(o, 0...1)
        guard let name = a.first else {
          body = .perform(.button(nil))
          break
        }
        // A button name or a kind: the daemon's button list decides.
        let client = try ControlClient(path: o.socket, timeout: o.timeout)
        let isButton = client.hello.buttons.contains { $0.name == name }
        return try perform(
          client, isButton ? .perform(.button(name)) : .perform(.control(kind: name, configuration: nil)), o, out, err)
      }
    case "press":
      let (name, press) = try pressArguments(a)
      let client = try ControlClient(path: o.socket, timeout: o.timeout)
      let button: String
      if let b = name {
        button = b
      } else {
        guard client.hello.buttons.count == 1, let only = client.hello.buttons.first else {
          let names = client.hello.buttons.map(\.name).joined(separator: ", ")
          throw UsageError("press needs a BUTTON (the daemon has: \(names.isEmpty ? "none" : names))")
        }
        button = only.name
      }
      // An unknown button is the daemon's to say (`unknown-button`, exit 1): it alone
      // knows its buttons, and a script gets the same answer as from the socket.
      return try perform(client, .press(button: button, press), o, out, err)
    case "reload":
      try expectCount(o, 0...1)
      body = .reload(kind: a.first)
    case "devices":
      try expectCount(o, 0...0)
      body = .devices
    case "version":
      try expectCount(o, 0...0)
      body = .version
    case "ping":
      try expectCount(o, 0...0)
      body = .ping
    case "watch":
      return try Watch(options: o, out: out, err: err).run()
    case "check-config":
      try expectCount(o, 0...1)
      return checkConfig(o.arguments.first, json: o.json, out: out, err: err)
    case "learn":
      // A natural guess: learning reads input devices, which is the daemon's side (see
      // LearnCommand), so it is `actiond learn`; this client only talks to the socket.
      err.line(
        "actionctl: learn reads input devices itself, without the daemon: run `actiond learn` "
          + "(press the button; it prints the device, the key, its configuration and udev rule)")
      return .usage
    default:
      throw UsageError("unknown command \"\(o.command)\"")
    }
    return try perform(try ControlClient(path: o.socket, timeout: o.timeout), body, o, out, err)
  }

  /// Validates a configuration with the daemon's own loader, printing every problem.
  static func checkConfig(_ file: String?, json: Bool, out: Terminal, err: Terminal) -> ExitStatus {
    do {
      let config = try ConfigurationFiles.load(mainPath: file)
      let summary =
        "\(config.buttons.count) button(s), \(config.controls.count) control(s), \(config.assignmentCount) assignment(s)"
      if json {
        out.line(
          JSONEncoding.compact([
            // `problems` is always there, so a script can read it without checking `valid` first.
            "valid": true, "problems": [], "buttons": .integer(Int64(config.buttons.count)),
            "controls": .integer(Int64(config.controls.count)),
            "assignments": .integer(Int64(config.assignmentCount)),
          ]))
      } else {
        out.line("\(file ?? "configuration") is valid: \(summary)")
      }
      return .ok
    } catch let error as ConfigurationError {
      if json {
        let problems: [JSONValue] = error.problems.map { p in
          var o = JSONObject()
          o["file"] = .string(p.file)
          if let line = p.line { o["line"] = .integer(Int64(line)) }
          if let column = p.column { o["column"] = .integer(Int64(column)) }
          if let path = p.path, !path.components.isEmpty { o["path"] = .string(path.description) }
          o["message"] = .string(p.message)
          return .object(o)
        }
        out.line(JSONEncoding.compact(["valid": false, "problems": .array(problems)]))
      } else {
        out.line(error.description)
        err.line("actionctl: \(error.problems.count) problem(s) found")
      }
      return .failed
    } catch {
      err.line("actionctl: \(error)")
      return .failed
    }
  }

  static func perform(
    _ client: ControlClient, _ body: Request.Body, _ o: Options, _ out: Terminal, _ err: Terminal
  ) throws -> ExitStatus {
    let (message, line) = try client.request(body, timeout: o.timeout)
    switch message {
    case .reply(let reply):
      if o.json {
        out.line(line)
      } else {
        out.line(Render.reply(reply, hello: client.hello))
      }
      return .ok
    case .error(_, let error):
      if o.json {
        out.line(line)
      } else {
        err.line("actionctl: \(error.message) (\(error.code))")
      }
      return .failed
    default:
      throw ControlClient.Failure.malformed(line)
    }
  }
}
