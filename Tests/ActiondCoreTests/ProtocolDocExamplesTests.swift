import Glibc
import Testing

@testable import ActiondCore

/// Every JSON line in docs/protocol.md is what the codec reads and writes, so an example
/// cannot drift from the code (issue 14, item 1): a line a client sends must decode as a
/// client message; a line the daemon sends must decode and encode back to the same text.
@Suite struct ProtocolDocExamplesTests {
  static func exampleLines() throws -> [String] {
    // Tests/ActiondCoreTests/ThisFile.swift → the repository's docs/protocol.md.
    let here = #filePath
    let root = here.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
    let text = try #require(readTextFile(root + "/docs/protocol.md"), "docs/protocol.md not found from \(here)")
    var lines: [String] = []
    var inJSON = false
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix("```") {
        inJSON = !inJSON && line == "```json"
        continue
      }
      if inJSON && !line.allSatisfy(\.isWhitespace) { lines.append(String(line)) }
    }
    return lines
  }

  @Test func everyExampleLineMatchesTheCodec() throws {
    let lines = try Self.exampleLines()
    #expect(lines.count >= 50, "the examples were not found")
    for (index, line) in lines.enumerated() {
      let asClient = ClientMessage.decode(line: line)
      if case .success = asClient { continue }
      if let message = try? ServerMessage.decode(line: line) {
        let encoded = String(decoding: message.line.dropLast(), as: UTF8.self)
        #expect(encoded == line, "the daemon writes this line differently")
        continue
      }
      // A request shown with its error: the next line is exactly the error the codec gives.
      guard case .failure(let failure) = asClient, index + 1 < lines.count,
        let next = try? ServerMessage.decode(line: lines[index + 1])
      else {
        Issue.record("neither a client nor a daemon message: \(line)")
        continue
      }
      #expect(next == .error(id: failure.id, failure.error), "the error shown after \(line)")
    }
  }
}

/// The file's text, or nil; the core tests read files without Foundation.
private func readTextFile(_ path: String) -> String? {
  guard let file = fopen(path, "r") else { return nil }
  defer { fclose(file) }
  var bytes: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 65536)
  while true {
    let n = fread(&buffer, 1, buffer.count, file)
    if n <= 0 { break }
    bytes += buffer[0..<n]
  }
  return String(decoding: bytes, as: UTF8.self)
}
