// SPDX-License-Identifier: Apache-2.0
import ActionctlKit
import ActiondLinux
import Glibc

/// The executable only wires the process to the library (see `Actionctl`).
@main
struct ActionctlMain {
  static func main() {
    // A daemon that goes away must be an error message, not a SIGPIPE death.
    signal(SIGPIPE, SIG_IGN)
    exit(Actionctl.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current()))
  }
}
