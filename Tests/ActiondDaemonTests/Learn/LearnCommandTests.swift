// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// `actiond learn` and `actionctl learn` run as the built binaries: help, usage errors,
/// the redirect, and (on a machine without input devices, as the build host is) the
/// no-device message and its exit status. The VM tier proves the rest on real devices.
@Suite struct LearnCommandTests {
  private func run(_ argv: [String]) throws -> ChildProcess {
    let child = try ChildProcess(argv)
    var fds: [pollfd] = []
    while !child.poll() {
      fds = child.openDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      _ = Glibc.poll(&fds, nfds_t(fds.count), 100)
    }
    return child
  }

  @Test func helpAndUsageErrors() throws {
    let actiond = try builtExecutablePath("actiond")
    let help = try run([actiond, "learn", "--help"])
    #expect(help.exitStatus == 0)
    #expect(help.output == LearnOptions.usage + "\n")
    for bad in [["--bogus"], ["--timeout"], ["--json", "--configuration"], ["--name", "a b"]] {
      let child = try run([actiond, "learn"] + bad)
      #expect(child.exitStatus == 2, "\(bad)")
      #expect(child.errorOutput.hasPrefix("actiond: "), "\(bad)")
      #expect(child.errorOutput.contains("Usage: actiond learn"), "\(bad)")
      #expect(child.output.isEmpty)
    }
  }

  @Test func withoutInputDevicesItSaysSoAndExits3() throws {
    let nodes = InputAccessProbe.eventNodes()
    // With a readable device, learn would wait for a key: that is the VM tier's case (5x-learn).
    guard !nodes.contains(where: \.isReadable) else { return }
    let actiond = try builtExecutablePath("actiond")
    let child = try run([actiond, "learn", "--timeout", "30"])
    #expect(child.exitStatus == 3)
    if nodes.isEmpty {
      #expect(child.errorOutput.hasPrefix("actiond learn: no input device: /dev/input has no event* node."))
      #expect(child.errorOutput.contains("run `\(actiond) learn` again"))
    } else {
      #expect(child.errorOutput.hasPrefix("actiond learn: no input device is readable by "))
    }
    #expect(child.output.isEmpty)
  }

  @Test func actionctlLearnSaysWhereToGo() throws {
    let child = try run([try actionctlPath(), "learn"])
    #expect(child.exitStatus == 2)
    #expect(
      child.errorOutput.hasPrefix(
        "actionctl: learn reads input devices itself, without the daemon: run `actiond learn`"))
  }
}
