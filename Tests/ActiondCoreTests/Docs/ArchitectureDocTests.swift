// SPDX-License-Identifier: Apache-2.0
import ActiondTesting
import Testing

/// docs/architecture.md is what the code is: every file it names exists, its list of
/// the effects and their order names every case of `EngineEffect` (read from
/// Sources/ActiondCore/Engine/EngineIO.swift), and its tables of modules and of test targets
/// are Package.swift's.
@Suite struct ArchitectureDocTests {
  /// The repository's top directory.
  static let root = repositoryPath()

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

extension ArchitectureDocTests {
  /// Package.swift's targets and products, read from its text: each `name: "..."` with the
  /// kind written before it (`target`, `executableTarget`, `testTarget`, `systemLibrary`,
  /// `executable` for a product) and the names in its `dependencies: [...]` or `targets: [...]`.
  static func manifestEntries() throws -> [(kind: String, name: String, uses: [String])] {
    let manifest = try #require(readFile(root + "/Package.swift"))
    let pieces = manifest.components(separatedBy: "name: \"")
    var entries: [(kind: String, name: String, uses: [String])] = []
    for (index, piece) in pieces.enumerated().dropFirst() {
      let before = pieces[index - 1]
      let call = before.split(separator: ".").last.map { $0.prefix { $0 != "(" } } ?? ""
      let name = String(piece.prefix { $0 != "\"" })
      var uses: [String] = []
      for key in ["dependencies: [", "targets: ["] {
        guard let list = piece.components(separatedBy: key).dropFirst().first else { continue }
        uses += quotedStrings(list.components(separatedBy: "]")[0])
      }
      entries.append((String(call), name, uses))
    }
    return entries
  }

  static func quotedStrings(_ text: String) -> [String] {
    text.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
      .map { String($0.element) }
  }

  /// The rows of the doc's tables of modules and of test targets: name → what it depends on.
  static func documentedModules() throws -> [String: Set<String>] {
    let doc = try #require(readFile(root + "/docs/architecture.md"))
    let section = try #require(doc.components(separatedBy: "## The modules").dropFirst().first)
      .components(separatedBy: "\n## ")[0]
    var rows: [String: Set<String>] = [:]
    for line in section.split(separator: "\n") where line.hasPrefix("| `") {
      let cells = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
      guard cells.count > 3, let module = quoted(cells[1]).first else { continue }
      rows[module] = Set(quoted(cells[2]))
    }
    return rows
  }

  @Test func theTableOfModulesIsPackageSwifts() throws {
    let entries = try Self.manifestEntries()
    let rows = try Self.documentedModules()
    let targets = entries.filter { ["target", "executableTarget", "testTarget"].contains($0.kind) }
    let products = entries.filter { $0.kind == "executable" }
    #expect(products.count == 3)
    // Every product, every Swift library (not the C shims) and every test target has its row.
    let libraries = targets.filter { $0.kind == "target" && $0.name.hasPrefix("Action") }.map(\.name)
    #expect(libraries.count >= 6)
    let tests = targets.filter { $0.kind == "testTarget" }.map(\.name)
    #expect(tests.count >= 6)
    for name in libraries + products.map(\.name) + tests { #expect(rows[name] != nil, "\(name) has no row") }
    for (module, documented) in rows {
      let target = targets.first { $0.name == module }
      #expect(target != nil, "\(module) is not a target")
      #expect(Set(target?.uses ?? []) == documented, "\(module)")
    }
  }

  /// The testing module is linked by tests only: no product reaches it, and the engine's
  /// module depends on nothing of the project's.
  @Test func noProductLinksTheTestingModule() throws {
    let entries = try Self.manifestEntries()
    var uses: [String: [String]] = [:]
    for entry in entries where entry.kind != "executable" && entry.kind != "testTarget" {
      uses[entry.name] = entry.uses
    }
    let products = entries.filter { $0.kind == "executable" }
    #expect(products.count == 3)
    for product in products {
      var reached = Set<String>()
      var next = product.uses
      while let name = next.popLast() {
        if reached.insert(name).inserted { next += uses[name] ?? [] }
      }
      #expect(reached.contains(product.name))
      #expect(!reached.contains("ActiondTesting"), "\(product.name) links ActiondTesting")
    }
    #expect(uses["ActiondCore"] == [])
    #expect(entries.contains { $0.kind == "testTarget" && $0.uses.contains("ActiondTesting") })
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
