// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// The shipped examples/controls.d definitions and examples/bin helpers do what
/// examples/controls.d/README.md says: in the real daemon, and (for the helpers) against
/// fake `systemctl`, `amixer` and `fswebcam` programs that record their arguments.
@Suite struct ExampleControlsTests {
  /// The repository's top directory.
  private static let top = repositoryPath()

  private static let exampleNames = [
    "flashlight.json", "mute.json", "photo.json", "run-script.json", "systemd-unit.json", "work-timer.json",
  ]

  @Test func shippedDefinitionsRunInTheDaemon() throws {
    let h = try DaemonHarness()
    for name in Self.exampleNames {
      let text = try #require(readFile(Self.top + "/examples/controls.d/" + name), "examples/controls.d/\(name)")
      try h.directory.write("controls.d/" + name, text)
    }
    try h.start()
    let c = try h.connect()
    try h.subscribe(c)
    let kinds = try h.request(c, #""request":"list""#).controls?.map(\.kind) ?? []
    #expect(
      kinds == [
        "org.actiond.example.flashlight", "org.actiond.example.mute", "org.actiond.example.photo",
        "org.actiond.example.run-script", "org.actiond.example.unit", "org.actiond.example.work-timer",
      ])

    // Work Timer: Hold to Start → Running → Hold to Stop.
    #expect(
      try h.request(c, #""request":"assign","button":"action","kind":"org.actiond.example.work-timer""#).failure
        == nil)
    func hint() throws -> String? {
      let seen = c.events.count
      _ = try h.request(c, #""request":"press","button":"action""#)
      let e = try h.waitForEvent(c, "released", after: seen) {
        if case .released = $0 { return true } else { return false }
      }
      guard case .released(_, _, let hint, _, _, _) = e else { return nil }
      return hint
    }
    #expect(try hint() == "Hold to Start")
    #expect(try h.request(c, #""request":"perform","button":"action""#).control?.valueText == "Running")
    #expect(try hint() == "Hold to Stop")
    // Every announcement is also a log line, with its hint or result.
    try h.waitForLog("button action pressed: Hold to Start event=pressed")
    try h.waitForLog("button action short press (0 ms): Hold to Start event=released")
    try h.waitForLog("Work Timer: Running event=performed kind=org.actiond.example.work-timer")

    // Run Script: unconfigured until `path` is given, then runs it with the contract.
    #expect(
      try h.request(c, #""request":"assign","button":"action","kind":"org.actiond.example.run-script""#).failure
        == nil)
    #expect(try hint() == "Configure Run Script: choose path")
    let refused = try h.request(c, #""request":"perform","button":"action""#)
    #expect(refused.failure == ProtocolError(.notConfigured, "Configure Run Script: choose path"))
    let out = h.directory.file("hello.env")
    let hello = try h.script("my script", "echo hello\nexec /usr/bin/env > '\(out)'")
    #expect(
      try h.request(
        c,
        #""request":"assign","button":"action","kind":"org.actiond.example.run-script","configuration":{"path":"\#(hello)"}"#
      ).failure == nil)
    #expect(try hint() == "Hold to Run Script")
    #expect(try h.request(c, #""request":"perform","button":"action""#).failure == nil)
    let env = environmentDump(readFile(out) ?? "")
    #expect(env["ACTIOND_PARAM_PATH"] == hello)
    #expect(env["ACTIOND_BUTTON"] == "action")
    #expect(env["ACTIOND_KIND"] == "org.actiond.example.run-script")
    #expect(h.log.contains("[org.actiond.example.run-script] hello"))

    // Flashlight on an LED that does not exist: unavailable, with the reason.
    let led = try h.request(
      c, #""request":"perform","kind":"org.actiond.example.flashlight","configuration":{"led":"actiond-test-no-led"}"#)
    #expect(led.failure?.code == .unavailable, "\(led)")
    #expect(led.failure?.message.contains("/sys/class/leds/actiond-test-no-led/brightness") == true)
    // The systemd unit needs its unit.
    let unit = try h.request(c, #""request":"perform","kind":"org.actiond.example.unit""#)
    #expect(unit.failure == ProtocolError(.notConfigured, "Configure Service: choose unit"))
  }

  // MARK: - Helper scripts against fakes

  /// A directory with fake programs that append their arguments to `calls` and print
  /// `$FAKE_OUTPUT`, exiting with `$FAKE_STATUS`.
  private final class Fakes {
    let directory: TemporaryDirectory
    let bin: String
    let calls: String

    init(_ programs: [String]) throws {
      directory = try TemporaryDirectory("actiond-fakes")
      guard mkdir(directory.file("bin"), 0o755) == 0 else { throw Errno.current }
      bin = directory.file("bin")
      calls = directory.file("calls")
      for program in programs {
        try directory.write(
          "bin/" + program,
          """
          #!/bin/sh
          echo "\(program) $*" >> '\(calls)'
          [ -n "${FAKE_OUTPUT:-}" ] && printf '%s\\n' "$FAKE_OUTPUT"
          exit "${FAKE_STATUS:-0}"
          """, mode: 0o755)
      }
    }

    /// Runs `examples/bin/<helper> arguments` with the fakes first in PATH.
    func run(_ helper: String, _ arguments: [String], _ environment: [String: String] = [:]) throws -> ChildProcess {
      let child = try ChildProcess(
        [ExampleControlsTests.top + "/examples/bin/" + helper] + arguments,
        environment: environment.merging(["PATH": bin + ":/usr/bin:/bin"]) { $1 })
      var fds: [pollfd] = []
      while !child.poll() {
        fds = child.openDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        _ = Glibc.poll(&fds, nfds_t(fds.count), 100)
      }
      return child
    }

    /// The recorded calls, and forgets them.
    func takeCalls() -> [String] {
      defer { unlink(calls) }
      return (readFile(calls) ?? "").split(separator: "\n").map(String.init)
    }
  }

  @Test func unitHelperStartsStopsAndMapsIsActive() throws {
    let f = try Fakes(["systemctl"])
    #expect(try f.run("actiond-unit", ["toggle", "kiosk.service"], ["ACTIOND_VALUE": "1"]).exitStatus == 0)
    #expect(try f.run("actiond-unit", ["toggle", "kiosk.service"], ["ACTIOND_VALUE": "0"]).exitStatus == 0)
    #expect(f.takeCalls() == ["systemctl start -- kiosk.service", "systemctl stop -- kiosk.service"])
    // A failed start is the intent's failure.
    #expect(
      try f.run("actiond-unit", ["toggle", "kiosk.service"], ["ACTIOND_VALUE": "1", "FAKE_STATUS": "5"]).exitStatus
        == 5)
    #expect(f.takeCalls() == ["systemctl start -- kiosk.service"])
    // Without a requested value, or with an option for a name, nothing runs.
    #expect(try f.run("actiond-unit", ["toggle", "kiosk.service"]).exitStatus == 2)
    #expect(try f.run("actiond-unit", ["toggle", "--now"], ["ACTIOND_VALUE": "1"]).exitStatus == 2)
    #expect(try f.run("actiond-unit", ["toggle"]).exitStatus == 2)
    #expect(f.takeCalls().isEmpty)

    // is-active: 0 → on (0), 3 → off (1), anything else → unavailable (2).
    for (status, expected) in [("0", Int32(0)), ("3", 1), ("4", 2), ("1", 2)] {
      let child = try f.run("actiond-unit", ["is-active", "kiosk.service"], ["FAKE_STATUS": status])
      #expect(child.exitStatus == expected, "systemctl exit \(status)")
    }
    #expect(f.takeCalls().allSatisfy { $0 == "systemctl is-active --quiet -- kiosk.service" })
  }

  @Test func muteHelperSetsAndReadsTheSwitch() throws {
    let f = try Fakes(["amixer"])
    #expect(try f.run("actiond-mute", ["set", "1", "Speaker"], ["ACTIOND_VALUE": "1"]).exitStatus == 0)
    #expect(try f.run("actiond-mute", ["set", "1", "Speaker"], ["ACTIOND_VALUE": "0"]).exitStatus == 0)
    #expect(f.takeCalls() == ["amixer -q -c 1 sset Speaker mute", "amixer -q -c 1 sset Speaker unmute"])
    #expect(try f.run("actiond-mute", ["set", "1", "Speaker"]).exitStatus == 2)

    let stereo = { (left: String, right: String) in
      """
      Simple mixer control 'Master',0
        Capabilities: pvolume pswitch
        Front Left: Playback 65536 [100%] [\(left)]
        Front Right: Playback 65536 [100%] [\(right)]
      """
    }
    let cases: [(String, String, Int32)] = [
      (stereo("off", "off"), "0", 0),  // muted
      (stereo("on", "on"), "0", 1),  // sound on
      (stereo("on", "off"), "0", 1),  // one channel still plays: not muted
      ("Simple mixer control 'Capture',0\n  Mono: Capture 5 [50%]", "0", 2),  // no playback switch
      ("", "1", 2),  // no such card or control
    ]
    for (output, status, expected) in cases {
      let child = try f.run("actiond-mute", ["get", "0", "Master"], ["FAKE_OUTPUT": output, "FAKE_STATUS": status])
      #expect(child.exitStatus == expected, "\(output)")
    }
    #expect(f.takeCalls().allSatisfy { $0 == "amixer -c 0 sget Master" })
  }

  @Test func photoHelperSavesDistinctFiles() throws {
    let f = try Fakes([])
    // A fake fswebcam that writes its last argument, like the real one.
    try f.directory.write(
      "bin/fswebcam",
      """
      #!/bin/sh
      echo "fswebcam $*" >> '\(f.calls)'
      for last; do :; done
      echo jpeg > "$last"
      """, mode: 0o755)
    let photos = f.directory.file("photos")
    guard mkdir(photos, 0o755) == 0 else { throw Errno.current }
    let first = try f.run("actiond-photo", [photos, "/dev/video7", "640x480"])
    let second = try f.run("actiond-photo", [photos, "/dev/video7", "640x480"])
    #expect(first.exitStatus == 0, "\(first.errorOutput)")
    #expect(second.exitStatus == 0, "\(second.errorOutput)")
    #expect(first.output.hasPrefix("saved \(photos)/photo-"))
    let files = try directoryEntries(photos)
    #expect(files.count == 2, "\(files)")
    #expect(files.allSatisfy { $0.hasPrefix("photo-") && $0.hasSuffix(".jpg") })
    #expect(f.takeCalls().allSatisfy { $0.hasPrefix("fswebcam -q --no-banner --skip 5 -d /dev/video7 -r 640x480 ") })
    // No such directory: a failure, and the camera is not touched.
    #expect(try f.run("actiond-photo", [f.directory.file("nope"), "/dev/video7", "640x480"]).exitStatus == 1)
    #expect(f.takeCalls().isEmpty)
  }
}
