// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// docs/configuration.md's table of how a command ends and how it is reported (issue 30
/// item 2) is what the daemon reports: each row's code and `reason` are those
/// ``EffectInterpreter/performOutcome(_:timeout:)`` gives that end, and the table names every
/// code a command's end can have, no other.
@Suite struct CommandEndDocTests {
  static func rows() throws -> [(code: String, reason: String?)] {
    let path = repositoryPath("docs/configuration.md")
    let docs = try #require(readFile(path), "docs/configuration.md")
    let section = try #require(docs.components(separatedBy: "**How a command ends").dropFirst().first)
    let table = try #require(section.components(separatedBy: "\n\n").dropFirst().first)
    return table.split(separator: "\n").dropFirst(2).map { row in
      let cells = row.split(separator: "|", omittingEmptySubsequences: false).map {
        String($0.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
      }
      // A code cell is `code`, or (exit status 0) `success: `performed``; a reason cell is
      // `reason` or empty.
      func quoted(_ cell: String) -> String? {
        guard cell.hasPrefix("`") else { return nil }
        return String(cell.dropFirst().prefix { $0 != "`" })
      }
      return (quoted(cells[2]) ?? "success", quoted(cells[3]))
    }
  }

  @Test func theTableOfCommandEndsIsWhatTheDaemonReports() throws {
    let rows = try Self.rows()
    let ends: [ProcessOutcome] = [
      .exited(0), .exited(3), .signaled(9),
      .spawnFailed(SpawnFailure(step: "execve /usr/bin/x", errnoName: "ENOENT", message: "No such file or directory")),
      .timedOut, .stopped,
    ]
    #expect(rows.count == ends.count, "\(rows)")
    var reported: Set<String> = []
    for (end, row) in zip(ends, rows) {
      switch EffectInterpreter.performOutcome(end, timeout: .milliseconds(5000)) {
      case .succeeded:
        reported.insert("success")
        #expect(row.code == "success" && row.reason == nil, "\(end): \(row)")
      case .failed(let code, let reason):
        reported.insert(code.rawValue)
        #expect(row.code == code.rawValue, "\(end): \(row)")
        // The documented reason is the reported one (a failed start's example ends in `...`).
        let documented = row.reason ?? ""
        #expect(
          reason == documented || (documented.hasSuffix("(...)") && reason.hasPrefix(documented.dropLast(5))),
          "\(end): reported \"\(reason)\", documented \"\(documented)\"")
      }
    }
    #expect(Set(rows.map(\.code)) == reported)
    // A stop is never a timeout.
    #expect(reported.contains(ProtocolErrorCode.stopped.rawValue))
  }
}
