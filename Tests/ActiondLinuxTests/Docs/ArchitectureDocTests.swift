// SPDX-License-Identifier: Apache-2.0
import Testing

/// docs/architecture.md is what the code is: every file it names exists, and its list of
/// the effects and their order names every case of `EngineEffect` (read from
/// Sources/ActiondCore/Engine/EngineIO.swift).
@Suite struct ArchitectureDocTests {
  static let root: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(4)  // Tests/ActiondLinuxTests/Docs/<file>
    return parts.joined(separator: "/")
  }()

  /// The backquoted spans of `text`.
  static func quoted(_ text: String) -> [String] {
    text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
      .map { String($0.element) }
  }

  @Test func everyFileItNamesExists() throws {
    let doc = try #require(readFile(Self.root + "/docs/architecture.md"))
    let paths = Self.quoted(doc).flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: " ") } }
      .filter { $0.hasPrefix("Sources/") || $0.hasPrefix("Tests/") }
    #expect(paths.count > 20)
    for path in paths {
      #expect(readFile(Self.root + "/" + path) != nil || !listDirectory(Self.root + "/" + path).isEmpty, "\(path)")
    }
  }

  @Test func theEffectsAndTheirOrderNameEveryEffect() throws {
    let doc = try #require(readFile(Self.root + "/docs/architecture.md"))
    let section = try #require(doc.components(separatedBy: "## The effects and their order").dropFirst().first)
      .components(separatedBy: "\n## ")[0]
    let source = try #require(readFile(Self.root + "/Sources/ActiondCore/Engine/EngineIO.swift"))
    let body = try #require(source.components(separatedBy: "public enum EngineEffect").dropFirst().first)
      .components(separatedBy: "\n}\n")[0]
    let cases = body.split(separator: "\n").compactMap { line -> String? in
      let trimmed = line.drop { $0 == " " }
      guard trimmed.hasPrefix("case ") else { return nil }
      return String(trimmed.dropFirst(5).prefix { $0.isLetter })
    }
    #expect(cases.count >= 11)
    let named = Set(Self.quoted(section))
    for name in cases { #expect(named.contains(name), "\(name) is not in the effects' order") }
  }
}

extension String {
  fileprivate func trimmingCharacters(in set: String) -> String {
    String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
  }
}

extension Substring {
  fileprivate func trimmingCharacters(in set: String) -> String { String(self).trimmingCharacters(in: set) }
}
