// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Writes text to a file descriptor (stdout or stderr), whole lines at a time.
package final class Terminal {
  package let fd: Int32
  package let isTTY: Bool
  package init(fd: Int32) {
    self.fd = fd
    isTTY = isatty(fd) == 1
  }
  package func write(_ text: String) {
    // A closed pipe (`actionctl watch | head`) must end the program, not loop.
    do { try Syscall.writeAll(fd, Array(text.utf8)) } catch { exit(error == .brokenPipe ? 0 : 1) }
  }
  package func line(_ text: String) { write(text.hasSuffix("\n") ? text : text + "\n") }
}

/// A command-line program's error message on stderr, as one line. A failed write is
/// ignored: there is nowhere left to report it, and the caller exits with its own status.
/// write(2), not the C `stderr` global, which Swift 6 rejects as shared mutable state.
package func printError(_ message: String) {
  try? Syscall.writeAll(STDERR_FILENO, Array((message.hasSuffix("\n") ? message : message + "\n").utf8))
}
