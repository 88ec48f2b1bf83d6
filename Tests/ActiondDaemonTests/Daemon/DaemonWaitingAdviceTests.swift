// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

/// At start, a button no device matches is logged with what is missing and the command
/// that fixes it (`make run` as a normal user on a desktop): learned from what the daemon
/// may read, here a fake of /dev/input.
@Suite struct DaemonWaitingAdviceTests {
  private func start(access: InputAccessReport?, bound: Bool = false) throws -> (RecordingLogSink, Int) {
    let directory = try TemporaryDirectory("actiond-advice")
    let config = try WiredDaemon.writeConfiguration(directory)
    let input = RecordingInputSource()
    if bound {
      input.buttonDevices["action"] = InputDeviceInfo(syspath: "/sys/x/event9", devnode: "/dev/input/event9", name: "k")
    }
    let log = RecordingLogSink()
    var asked = 0
    let settings = Daemon.Settings(
      configPath: config, logLevel: .debug, environment: [:], program: "/src/.build/debug/actiond",
      inputAccess: {
        asked += 1
        return access ?? InputAccessReport(user: "root", isRoot: true, nodes: [])
      })
    let daemon = try Daemon(settings: settings, input: input, runner: RecordingProcessRunner(), logSink: log)
    try daemon.start()
    daemon.shutdown(reason: "test")
    return (log, asked)
  }

  @Test func permissionDeniedSaysWhichGroupAndWhatToRun() throws {
    let nodes = (0..<4).map {
      InputNodeAccess(path: "/dev/input/event\($0)", error: "EACCES", group: "input", mode: 0o660)
    }
    let (log, asked) = try start(access: InputAccessReport(user: "alice", isRoot: false, nodes: nodes))
    #expect(asked == 1)
    let message = try #require(log.records(event: "button-waiting").first?.message)
    #expect(
      message
        == "button action: no device with KEY_PROG1 matches (devnode=\"/dev/input/event9\") yet, it binds when one "
        + "appears; 4 of 4 input devices (/dev/input/event*) belong to group input (mode 0660) and alice is not in "
        + "it: run `sudo /src/.build/debug/actiond learn --uaccess` and press the button, then install the udev rule "
        + "it prints (or `sudo usermod -aG input alice` and log in again)")
  }

  @Test func readableDevicesWithoutAMatchSayToLearn() throws {
    let nodes = [InputNodeAccess(path: "/dev/input/event0"), InputNodeAccess(path: "/dev/input/event1")]
    let (log, _) = try start(access: InputAccessReport(user: "actiond", isRoot: false, nodes: nodes))
    let message = try #require(log.records(event: "button-waiting").first?.message)
    #expect(
      message.hasSuffix(
        "2 of 2 input devices are readable, and none matches: run `/src/.build/debug/actiond learn` and press the "
          + "button: it prints the configuration and the udev rule that bind it"))
  }

  @Test func aBoundButtonNeedsNoAdvice() throws {
    let (log, asked) = try start(access: nil, bound: true)
    #expect(log.records(event: "button-waiting").isEmpty)
    #expect(asked == 0)
  }
}
