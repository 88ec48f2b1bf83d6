// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import ActiondTesting
import Glibc
import Testing

@Suite struct ConfigurationFilesTests {
  /// Invalid UTF-8 in a string is reported with the file and line, never replaced by
  /// U+FFFD and taken as a different value.
  @Test func invalidUTF8IsAProblemWithItsLine() throws {
    let dir = try TemporaryDirectory()
    let main = dir.file("actiond.json")
    let fd = try Syscall.open(main, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
    let text = "{\n  buttons: [{ name: \"action\", key: \"KEY_PROG1\" }],\n  logLevel: \"in\u{FF}fo\",\n}\n"
    // U+00FF is written as the single byte 0xFF: not UTF-8.
    try Syscall.writeAll(fd, text.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) })
    Syscall.close(fd)
    do {
      _ = try ConfigurationFiles.load(mainPath: main)
      Issue.record("a file with invalid UTF-8 was accepted")
    } catch let error as ConfigurationError {
      let problem = try #require(error.problems.first)
      #expect(error.problems.count == 1)
      #expect(problem.file == main)
      #expect(problem.line == 3)
      #expect(problem.column == 16)
      #expect(problem.description.hasPrefix("\(main):3: not valid UTF-8 (byte 0xff at column 16)"), "\(problem)")
    }
  }
}
