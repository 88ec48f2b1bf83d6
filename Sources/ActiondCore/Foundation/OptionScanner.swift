// SPDX-License-Identifier: Apache-2.0
/// Reads the command line of actiond's programs (`actiond`, `actiond learn`, `actiond-mqtt`)
/// one option at a time, the same way for all of them: `--name value` and `--name=value` for
/// an option that takes a value, `--name` alone for a flag, one-letter aliases (`-c FILE`) as
/// names of their own.
///
/// What it refuses, so that a mistyped command line is an error and not a surprise: a value
/// that is missing or is the next option (`--host --port 1883` does not connect to a host
/// named "--port"), and a value given to a flag (`--json=no` does not mean `--json`).
public struct OptionScanner {
  private let arguments: [String]
  private var index = 0
  /// The `=value` part of the current argument, until ``value()`` takes it.
  private var inline: String?

  /// The current option as written before any `=` (`--socket`, `-c`); set by ``next()``.
  public private(set) var name = ""
  /// The current argument as written, for messages.
  public private(set) var argument = ""

  public init(_ arguments: [String]) {
    self.arguments = arguments
  }

  /// Moves to the next argument. Returns false after the last one. Throws when the option
  /// before took no value but was given one with `=`.
  public mutating func next() throws(UsageError) -> Bool {
    try finishCurrent()
    guard index < arguments.count else { return false }
    argument = arguments[index]
    index += 1
    name = argument
    inline = nil
    if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
      name = String(argument[..<eq])
      inline = String(argument[argument.index(after: eq)...])
    }
    return true
  }

  /// The current option's value: after its `=`, or the next argument, which must not be
  /// another option.
  public mutating func value() throws(UsageError) -> String {
    if let inline {
      self.inline = nil
      return inline
    }
    guard index < arguments.count, !Self.looksLikeOption(arguments[index]) else {
      throw UsageError(message: "option \(name) needs a value")
    }
    index += 1
    return arguments[index - 1]
  }

  /// The current option's value if it has one (`--check-config [FILE]`): after its `=`, or
  /// the next argument when that is not another option; nil otherwise.
  public mutating func optionalValue() -> String? {
    if let inline {
      self.inline = nil
      return inline
    }
    guard index < arguments.count, !Self.looksLikeOption(arguments[index]) else { return nil }
    index += 1
    return arguments[index - 1]
  }

  /// Checks that the last option was not given a value it does not take. Call it once the
  /// loop over ``next()`` is done (``next()`` does it for every option but the last).
  public mutating func finish() throws(UsageError) {
    try finishCurrent()
  }

  /// `--anything` or a one-letter alias (`-c`); not `-` or a negative number, which are
  /// values (and get their own message from the option that reads them).
  static func looksLikeOption(_ text: String) -> Bool {
    if text.hasPrefix("--") { return true }
    let u = Array(text.utf8)
    return u.count == 2 && u[0] == UInt8(ascii: "-")
      && ((u[1] >= UInt8(ascii: "a") && u[1] <= UInt8(ascii: "z"))
        || (u[1] >= UInt8(ascii: "A") && u[1] <= UInt8(ascii: "Z")))
  }

  private mutating func finishCurrent() throws(UsageError) {
    if inline != nil {
      inline = nil
      throw UsageError(message: "option \(name) takes no value (got '\(argument)')")
    }
  }
}

/// A command-line mistake, reported with the usage hint and exit status 2.
public struct UsageError: Error, Equatable, CustomStringConvertible {
  public var message: String
  public var description: String { message }

  public init(message: String) { self.message = message }
}
