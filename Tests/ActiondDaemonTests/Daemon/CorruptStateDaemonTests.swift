// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// docs/configuration.md (state file), on the real daemon: the copies of corrupt state
/// files are bounded to the newest three, each removal logged by name.
@Suite struct CorruptStateDaemonTests {
  static let timers = #"[{ kind: "org.test.timer", type: "toggle", displayName: "Timer", intent: { type: "state" } }]"#

  @Test func twentyStartsOnACorruptStateKeepTheNewestThree() throws {
    let h = try DaemonHarness(controls: Self.timers, assignments: #"{ action: "org.test.timer" }"#)
    guard mkdir(h.stateDirectory, 0o755) == 0 else { throw Errno.current }
    for i in 1...20 {
      try h.directory.write("state/state.json", "{\"version\": 1, \"start\": \(i), [trunc")
      try h.start()
      let log = h.log
      #expect(log.contains("event=state-corrupt "), "start \(i)")
      let removed = log.split(separator: "\n").filter { $0.contains("event=state-corrupt-removed ") }
      if i <= 3 {
        #expect(removed.isEmpty, "start \(i): \(removed)")
      } else {
        #expect(removed.count == 1, "start \(i): \(removed)")
        // As docs/configuration.md shows it: `event=state-corrupt-removed path=…`.
        #expect(
          removed.first?.hasSuffix(
            " event=state-corrupt-removed path=\(h.stateDirectory)/state.json.corrupt-\(i - 3)") == true,
          "\(removed)")
      }
      let exit = try h.stop()
      #expect(exit == 0)
    }
    let kept = listDirectory(h.stateDirectory).filter { $0.contains("corrupt") }
    #expect(kept == ["state.json.corrupt-18", "state.json.corrupt-19", "state.json.corrupt-20"])
    for i in 18...20 {
      #expect(readFile(h.stateDirectory + "/state.json.corrupt-\(i)") == "{\"version\": 1, \"start\": \(i), [trunc")
    }
  }

  /// A state directory the daemon may write but not list (mode 0300, as uid 65534): the
  /// corrupt file is still moved aside, nothing is removed, and the log says why.
  @Test func anUnlistableStateDirectoryRemovesNothingAndSaysSo() throws {
    let h = try DaemonHarness(controls: Self.timers, assignments: #"{ action: "org.test.timer" }"#)
    guard mkdir(h.stateDirectory, 0o755) == 0 else { throw Errno.current }
    for n in 1...5 { try h.directory.write("state/state.json.corrupt-\(n)", "old \(n)") }
    try h.directory.write("state/state.json", "garbage {")
    for path in [h.directory.path, h.configPath, h.controlsDirectory, h.stateDirectory] {
      #expect(chown(path, 65534, 65534) == 0, "chown \(path): \(Errno.current)")
    }
    #expect(chmod(h.stateDirectory, 0o300) == 0)
    h.commandPrefix = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    try h.start()
    let log = h.log
    let failure = log.split(separator: "\n").first { $0.contains("event=state-corrupt-cleanup-failed") }
    #expect(failure?.contains("path=\(h.stateDirectory)") == true, "\(log)")
    #expect(failure?.contains("EACCES") == true, "\(log)")
    #expect(!log.contains("event=state-corrupt-removed"))
    let exit = try h.stop()
    #expect(exit == 0)
    #expect(chmod(h.stateDirectory, 0o755) == 0)
    // Every old copy is there, and the new one took the first free number.
    for n in 1...5 { #expect(readFile(h.stateDirectory + "/state.json.corrupt-\(n)") == "old \(n)") }
    #expect(readFile(h.stateDirectory + "/state.json.corrupt-6") == "garbage {")
  }
}
