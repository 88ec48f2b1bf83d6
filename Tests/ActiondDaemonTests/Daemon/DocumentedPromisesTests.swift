// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// What docs/configuration.md and actiond(8) promise about who may act and which file is
/// read, checked on the real daemon binary (issue 13, items 1 and 9).
@Suite struct DocumentedPromisesTests {
  /// configuration.md: the daemon's own user may change things. A daemon running as
  /// uid 65534 with no control users or group is driven by `actionctl` as uid 65534.
  @Test func theDaemonsOwnUserMayAct() throws {
    let h = try DaemonHarness(
      controls: #"[{ kind: "org.example.t", type: "toggle", displayName: "T", intent: { type: "state" } }]"#)
    for path in [h.directory.path, h.configPath, h.controlsDirectory] {
      #expect(chown(path, 65534, 65534) == 0, "chown \(path): \(Errno.current)")
    }
    let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    h.commandPrefix = nobody
    try h.start()
    let perform = try ChildProcess(
      nobody + [try actionctlPath(), "--socket", h.socketPath, "--json", "perform", "--kind", "org.example.t"])
    try h.wait("actionctl perform") { perform.poll() }
    #expect(perform.exitStatus == 0, "\(perform.output)\(perform.errorOutput)")
    #expect(perform.output.hasPrefix(#"{"type":"reply","id":1,"request":"perform""#), "\(perform.output)")
    // Another unprivileged uid still may only read (the socket is made reachable for it).
    #expect(chmod(h.socketPath, 0o666) == 0 && chmod(h.directory.path, 0o755) == 0)
    let other = ["/usr/bin/setpriv", "--reuid=65533", "--regid=65533", "--clear-groups"]
    let denied = try ChildProcess(
      other + [try actionctlPath(), "--socket", h.socketPath, "--json", "perform", "--kind", "org.example.t"])
    try h.wait("actionctl perform as 65533") { denied.poll() }
    #expect(denied.exitStatus == 1)
    #expect(denied.output.contains(#"only root, uid 65534 (actiond's own) may act"#), "\(denied.output)")
    #expect(try h.stop() == 0)
  }

  /// actiond(8) and configuration.md: only the default main file may be missing (then the
  /// embedded default applies); a `--config` file that does not exist stops the start, so
  /// a typo never runs a different configuration.
  @Test func aMissingConfigFileNamedOnTheCommandLineIsAnError() throws {
    let directory = try TemporaryDirectory("actiond-missing-config")
    let missing = directory.file("missing.json")
    let child = try ChildProcess([
      try builtExecutablePath("actiond"), "--config", missing, "--socket", directory.file("s.sock"), "--state-dir",
      directory.file("state"),
    ])
    var fds: [pollfd] = []
    while !child.poll() {
      fds = child.openDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      _ = Glibc.poll(&fds, nfds_t(fds.count), 100)
    }
    #expect(child.exitStatus == 1)
    #expect(child.errorOutput == "actiond: cannot read \(missing): ENOENT (No such file or directory)\n")
    #expect(access(directory.file("s.sock"), F_OK) != 0 && access(directory.file("state"), F_OK) != 0)
  }

  /// docs/protocol.md with its line breaks and runs of spaces folded to single spaces.
  private static func protocolText() throws -> String {
    let text = try #require(readFile(repositoryPath("docs/protocol.md")), "docs/protocol.md")
    return text.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
  }

  /// protocol.md's fairness bullet gives the clients' quiet around a deadline in figures:
  /// they are the code's (EffectInterpreter.ClientQuiet.standard, EventLoop.maximumQuiet).
  @Test func theClientsQuietAroundADeadlineIsDocumentedWithTheCodesFigures() throws {
    let text = try Self.protocolText()
    let quiet = EffectInterpreter.ClientQuiet.standard
    let maximum = try EventLoop().maximumQuiet
    for promise in [
      "from \(quiet.before.milliseconds) ms before a pending deadline",
      "for at most \(quiet.after.milliseconds) ms more, the daemon reads, accepts and answers no client",
      "may take up to about \((quiet.before + quiet.after).milliseconds) ms longer",
      "clients are served at least once every \(maximum.milliseconds) ms",
    ] {
      #expect(text.contains(promise), "docs/protocol.md does not say: \(promise)")
    }
  }
  /// protocol.md's fairness bullet gives the clients' rate limits in figures: they are the
  /// code's (ClientRateLimits.standard, the server's default).
  @Test func theClientsRateLimitsAreDocumentedWithTheCodesFigures() throws {
    let text = try Self.protocolText()
    let limits = ClientRateLimits.standard
    #expect(ServerConfiguration().rateLimits == limits)
    func kib(_ bytes: Int) -> String { "\(bytes / 1024) KiB" }
    let requests = limits.requestBucket(at: .zero)
    let bytes = limits.byteBucket(at: .zero)
    let accepts = limits.acceptBucket(at: .zero)
    let server = ServerConfiguration()
    for promise in [
      "count: \(limits.requestBurst) at once, then \(limits.requestsPerSecond) per second",
      "Bytes read from a connection count too: \(kib(limits.byteBurst)) at once, then \(kib(limits.bytesPerSecond)) per second",
      "back to a quarter of what it may send at once (\(limits.resumeLevel(of: requests)) requests, \(kib(limits.resumeLevel(of: bytes))))",
      "New connections, per user: \(limits.acceptBurst) at once, then \(limits.acceptsPerSecond) per second",
      "(from when \(limits.resumeLevel(of: accepts)) are allowed again)",
      "At most \(server.maxDeferredPerUser) connections of one user, and \(server.maxDeferred) of all users, wait",
      "At most \(server.acceptsPerTurn) new connections are greeted (and \(4 * server.acceptsPerTurn) accepted) per turn",
    ] {
      #expect(text.contains(promise), "docs/protocol.md does not say: \(promise)")
    }
    #expect(limits.resumeFraction == 4, "protocol.md says \"a quarter\"")
  }
}
