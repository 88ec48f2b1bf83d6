// SPDX-License-Identifier: Apache-2.0
/// One configuration file's name and text, as read by the caller (the core does no file I/O).
public struct ConfigurationSource: Hashable, Sendable {
  /// How messages name the file: a path (`/etc/actiond/actiond.json`) or a short name.
  public var name: String
  public var text: String
  public init(name: String, text: String) {
    self.name = name
    self.text = text
  }
}

/// One thing wrong with the configuration, located as precisely as the text allows.
///
/// Rendered like a compiler message, so editors can jump to it:
/// `actiond.json:14: controls[2].intent.argv: must not be empty`.
public struct ConfigurationProblem: Hashable, Sendable, CustomStringConvertible {
  /// The file's name as given in its `ConfigurationSource`.
  public var file: String
  /// Where in the document; nil for problems with the file as a whole (syntax errors).
  public var path: JSONPath?
  /// The line of the value (or, for a missing member, of the object that lacks it).
  public var line: Int?
  public var column: Int?
  public var message: String

  public init(file: String, path: JSONPath?, line: Int?, column: Int? = nil, message: String) {
    self.file = file
    self.path = path
    self.line = line
    self.column = column
    self.message = message
  }

  public var description: String {
    var out = file
    if let line { out += ":\(line)" }
    out += ": "
    if let path, !path.components.isEmpty { out += "\(path): " }
    return out + message
  }
}

/// Every problem found in a configuration. `description` is one problem per line.
public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
  public var problems: [ConfigurationProblem]
  public init(problems: [ConfigurationProblem]) { self.problems = problems }
  public var description: String { problems.map(\.description).joined(separator: "\n") }

  /// The problems, one a line, then how many were found: what a program that checks a
  /// configuration prints (`actiond --check-config`, actiond-mqtt).
  public var report: String { description + "\n" + Self.count(problems.count) + " found" }

  /// `1 problem`, `3 problems`: every message that counts problems says it so.
  public static func count(_ n: Int) -> String { "\(n) problem\(n == 1 ? "" : "s")" }
}
