// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Glibc
import Testing

@testable import ActiondDaemon
@testable import ActiondLinux

@Suite struct DaemonFeedbackTests {
  /// The keyboard example (Caps Lock as the tick) and the Pi example (ACT as the state
  /// indicator) on one button: the hold writes the tick in the same loop turn that
  /// decides the hold, the tick ends 60 ms later, the indicator follows the value, and
  /// a stop gives every light back.
  @Test func aHoldTicksOnTheConfiguredLEDAndTheIndicatorFollowsTheValue() throws {
    let lights = RecordingFeedbackLights()
    let wired = try WiredDaemon(
      feedback: #"[{ led: "LED_CAPSL", on: ["held"] }, { sysfs: "ACT", indicator: true, on: ["failed"] }]"#,
      lights: lights)
    #expect(lights.writes == ["sysfs ACT@action off"], "the indicator shows the value read at start")
    #expect(!wired.daemon.feedback.isTimerArmed)

    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    #expect(lights.writes == ["sysfs ACT@action off"], "a press is not shown on these outputs")
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    // The loop turn that decided the hold (and started its command) wrote the tick.
    #expect(lights.writes == ["sysfs ACT@action off", "led LED_CAPSL@action on"])
    #expect(wired.daemon.feedback.isTimerArmed)
    try wired.turn(until: "the tick's end") { lights.writes.count == 3 }
    #expect(lights.writes.last == "led LED_CAPSL@action release")
    #expect(!wired.daemon.feedback.isTimerArmed, "nothing shown, no timer")

    wired.runner.complete(with: .exited(0))
    try wired.turn(until: "performed") { !wired.log.records(event: "performed").isEmpty }
    #expect(lights.writes.last == "sysfs ACT@action on", "the indicator shows the new value")

    wired.daemon.shutdown(reason: "test")
    #expect(lights.writes.suffix(1) == ["sysfs ACT@action release"])
  }

  /// In the loop turn that decides a hold, `held` is sent, then the tick is written on the
  /// light taken at the key-down (one quick write), then the hold's command starts: the
  /// LED does not wait for the spawn's milliseconds (the child's exec).
  @Test func theTickOnALightTakenAtTheKeyDownIsWrittenBeforeTheHoldsCommandStarts() throws {
    let lights = RecordingFeedbackLights()
    let wired = try WiredDaemon(feedback: #"[{ sysfs: "ACT", on: ["held"] }]"#, lights: lights)
    let client = try wired.connect()
    _ = try wired.request(client, id: 1, #""request":"subscribe""#)
    var runsAtTick: Int?
    var heldSentAtTick: Bool?
    lights.onWrite = { write in
      guard write == "sysfs ACT@action on" else { return }
      runsAtTick = wired.runner.runs.count
      client.readAvailable()
      heldSentAtTick = client.events.contains { $0.name == .held }
    }
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    #expect(lights.writes == ["sysfs ACT@action on"], "the tick is written in the turn that started the command")
    #expect(runsAtTick == 0, "the tick was written before the command started")
    #expect(heldSentAtTick == true, "`held` was sent before the tick")
    try wired.turn(until: "the tick's end") { lights.writes.count == 2 }
    #expect(lights.writes.last == "sysfs ACT@action release")
    wired.daemon.shutdown(reason: "test")
  }

  /// A tick that would take its light from a trigger (the key-down's take failed) waits
  /// for the kernel: the command starts first, and the tick is still written in that turn.
  @Test func aTickThatMustTakeItsLightIsWrittenAfterTheHoldsCommandStarts() throws {
    let lights = RecordingFeedbackLights()
    lights.takesAtKeyDown = false
    let wired = try WiredDaemon(
      feedback: #"[{ sysfs: "ACT", on: ["held"] }, { led: "LED_CAPSL", on: ["held"] }]"#, lights: lights)
    var runsAtWrite: [String: Int] = [:]
    lights.onWrite = { write in runsAtWrite[write] = wired.runner.runs.count }
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    #expect(lights.writes == ["led LED_CAPSL@action on", "sysfs ACT@action on"], "both ticks in the command's turn")
    #expect(runsAtWrite["led LED_CAPSL@action on"] == 0, "the quick one before the command")
    #expect(runsAtWrite["sysfs ACT@action on"] == 1, "the take after the command started")
    wired.daemon.shutdown(reason: "test")
  }

  /// A reload that leaves the outputs as they were leaves the lights alone (no flicker);
  /// one that changes them gives the old lights back and starts the new ones at rest.
  @Test func aReloadKeepsUnchangedOutputsAndGivesRemovedOnesBack() throws {
    let lights = RecordingFeedbackLights()
    let wired = try WiredDaemon(feedback: #"[{ sysfs: "ACT", indicator: true }]"#, lights: lights)
    #expect(lights.writes == ["sysfs ACT@action off"])
    wired.daemon.reloadConfiguration()
    #expect(lights.writes == ["sysfs ACT@action off"], "unchanged: nothing written")
    try WiredDaemon.writeConfiguration(wired.directory, feedback: #"[{ led: "LED_CAPSL", on: ["held"] }]"#)
    wired.daemon.reloadConfiguration()
    #expect(wired.log.records(event: "config-problem").isEmpty)
    #expect(lights.writes == ["sysfs ACT@action off", "sysfs ACT@action release"])
    try WiredDaemon.writeConfiguration(wired.directory, feedback: #"[{ sysfs: "ACT", indicator: true }]"#)
    wired.daemon.reloadConfiguration()
    #expect(lights.writes.last == "sysfs ACT@action off", "a new indicator shows the value the engine knows")
  }

  /// A reload hands one configuration generation to every part in one call: the engine
  /// and the feedback are on the same one afterwards; a reload that fails changes none.
  @Test func aReloadHandsEveryPartTheSameGeneration() throws {
    let wired = try WiredDaemon(feedback: #"[{ sysfs: "ACT", indicator: true }]"#, lights: RecordingFeedbackLights())
    #expect(wired.daemon.interpreter.generation.number == 1)
    #expect(wired.daemon.feedback.generation == 1)
    try WiredDaemon.writeConfiguration(wired.directory, feedback: #"[{ led: "LED_CAPSL", on: ["held"] }]"#)
    wired.daemon.reloadConfiguration()
    #expect(wired.log.records(event: "config-problem").isEmpty)
    #expect(wired.daemon.interpreter.generation.number == 2)
    #expect(wired.daemon.feedback.generation == 2)
    #expect(wired.daemon.interpreter.generation.configuration.feedback["action"]?.count == 1)
    try WiredDaemon.writeConfiguration(wired.directory, feedback: #"[{ bogus: "ACT" }]"#)
    wired.daemon.reloadConfiguration()
    #expect(!wired.log.records(event: "config-problem").isEmpty)
    #expect(wired.daemon.interpreter.generation.number == 2)
    #expect(wired.daemon.feedback.generation == 2)
  }

  /// An `led` indicator of a button without a device shows nothing and logs nothing; the
  /// device that appears shows the value at once, and is given back at the stop.
  @Test func anInputLEDIndicatorShowsOnTheDeviceThatAppears() throws {
    let leds = RecordingButtonLEDs()
    let wired = try WiredDaemon(
      feedback: #"[{ led: "LED_MISC", indicator: true }]"#, lights: LinuxFeedbackLights(inputLEDs: leds))
    leds.device = nil
    #expect(leds.calls.isEmpty)
    leds.device = wired.device.syspath
    wired.plugIn(at: wired.daemon.loop.now())
    #expect(leds.calls == ["get LED_MISC", "set LED_MISC 0"])
    wired.daemon.shutdown(reason: "test")
    #expect(leds.calls.last == "set LED_MISC 1", "the LED's own state (lit) is back")
    #expect(wired.log.records(event: "feedback-failed").isEmpty)
  }

  /// A light that cannot be written is logged once, not at every blink, and the hold
  /// performs as if nothing happened.
  @Test func aFailingLightIsLoggedOnceAndNeverStopsTheHold() throws {
    let lights = RecordingFeedbackLights()
    lights.failing = ["led LED_CAPSL@action"]
    let wired = try WiredDaemon(feedback: #"[{ led: "LED_CAPSL" }]"#, lights: lights)
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    wired.runner.complete(with: .exited(1))
    try wired.turn(until: "failed") { !wired.log.records(event: "failed").isEmpty }
    try wired.turn(until: "the failure pattern") { lights.writes.filter { $0.hasSuffix(" off") }.count >= 3 }
    let failures = wired.log.records(event: "feedback-failed")
    #expect(failures.count == 1)
    #expect(
      failures.first?.message
        == "button action: feedback on led LED_CAPSL@action failed: no such device (not logged again until it works)")
    #expect(wired.runner.runs.count == 1)
  }

  /// A light that never worked is not "working again" at the rest after a press: its
  /// release writes nothing (it was never taken). Found in the VM tier (scenario 51): a
  /// sysfs LED that does not exist logged feedback-failed and feedback-recovered at every
  /// press. Only a write that goes through is a recovery, and it is logged once.
  @Test func aLightThatNeverWorkedIsLoggedOnceOverManyPresses() throws {
    let lights = RecordingFeedbackLights()
    lights.failing = ["led LED_CAPSL@action"]
    let wired = try WiredDaemon(feedback: #"[{ led: "LED_CAPSL", on: ["pressed"] }]"#, lights: lights)
    wired.plugIn(at: wired.daemon.loop.now())
    func shortPress() {
      let now = wired.daemon.loop.now()
      wired.input.emit(.key(button: "action", code: 148, value: 1, at: now))
      wired.input.emit(.key(button: "action", code: 148, value: 0, at: now + .milliseconds(50)))
    }
    shortPress()
    shortPress()
    shortPress()
    #expect(lights.writes == ["led LED_CAPSL@action on", "led LED_CAPSL@action on", "led LED_CAPSL@action on"])
    #expect(wired.log.records(event: "feedback-failed").count == 1)
    #expect(wired.log.records(event: "feedback-recovered").isEmpty)

    lights.failing = []
    shortPress()
    #expect(lights.writes.suffix(2) == ["led LED_CAPSL@action on", "led LED_CAPSL@action release"])
    #expect(wired.log.records(event: "feedback-recovered").count == 1)
    shortPress()
    #expect(wired.log.records(event: "feedback-recovered").count == 1)
    #expect(wired.log.records(event: "feedback-failed").count == 1)
  }

  /// The same on the real sysfs light: an LED class device that does not exist fails at
  /// every press, and is logged once.
  @Test func aMissingSysfsLEDIsLoggedOnceOverManyPresses() throws {
    let leds = try TemporaryDirectory("actiond-leds")
    let wired = try WiredDaemon(
      feedback: #"[{ sysfs: "input999::capslock", on: ["pressed", "held"] }]"#,
      lights: LinuxFeedbackLights(ledsDirectory: leds.path, inputLEDs: nil))
    wired.plugIn(at: wired.daemon.loop.now())
    for _ in 0..<3 {
      let now = wired.daemon.loop.now()
      wired.input.emit(.key(button: "action", code: 148, value: 1, at: now))
      wired.input.emit(.key(button: "action", code: 148, value: 0, at: now + .milliseconds(50)))
    }
    let failures = wired.log.records(event: "feedback-failed")
    #expect(failures.count == 1)
    #expect(
      failures.first?.message.hasPrefix("button action: feedback on \(leds.path)/input999::capslock failed: ") == true)
    #expect(wired.log.records(event: "feedback-recovered").isEmpty)
  }

  /// A daemon whose button ticks a real sysfs light on `held`: a directory shaped like
  /// /sys/class/leds/ACT (trigger heartbeat, max brightness 1, at `brightness`), and what
  /// reads one of its files. The directory is returned to be kept for the test's length.
  private func sysfsLEDTickingOnHeld(
    brightness: Int
  ) throws -> (leds: TemporaryDirectory, wired: WiredDaemon, read: (String) -> String) {
    let leds = try TemporaryDirectory("actiond-leds")
    try Daemon.makeDirectory(leds.file("ACT"))
    _ = try leds.write("ACT/trigger", "none timer [heartbeat]\n")
    _ = try leds.write("ACT/brightness", "\(brightness)\n")
    _ = try leds.write("ACT/max_brightness", "1\n")
    let wired = try WiredDaemon(
      feedback: #"[{ sysfs: "ACT", on: ["held"] }]"#,
      lights: LinuxFeedbackLights(ledsDirectory: leds.path, inputLEDs: nil))
    return (leds, wired, { name in SmallFile.read(leds.file("ACT/" + name)).text ?? "" })
  }

  /// A sysfs LED that ticks on `held` is taken from its trigger at the press's key-down
  /// (the kernel's RCU wait is paid then, not at the threshold), its brightness written
  /// back as it was, and given back when the press ends before its threshold.
  @Test func aSysfsLEDThatTicksOnHeldIsTakenAtTheKeyDown() throws {
    let (leds, wired, read) = try sysfsLEDTickingOnHeld(brightness: 1)
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    #expect(read("trigger") == "none", "taken at the key-down")
    #expect(read("brightness") == "1", "showing what it showed")
    wired.input.emit(.key(button: "action", code: 148, value: 0, at: t0 + .milliseconds(150)))
    #expect(read("trigger") == "heartbeat", "a press without a hold gives it back")
    #expect(read("brightness") == "1")
    #expect(wired.runner.runs.isEmpty)
    // A stop while a press holds the light gives it back too.
    _ = try leds.write("ACT/trigger", "none timer [heartbeat]\n")
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(300)))
    #expect(read("trigger") == "none")
    wired.daemon.shutdown(reason: "test")
    #expect(read("trigger") == "heartbeat", "a stop gives back a light taken at the key-down")
    #expect(wired.log.records(event: "feedback-failed").isEmpty)
  }

  /// The real sysfs light on a directory shaped like /sys/class/leds/ACT: the tick takes
  /// it over (trigger none, max brightness) and gives it back (trigger and brightness).
  @Test func theTickOnARealSysfsLEDRestoresItsTrigger() throws {
    let (_, wired, read) = try sysfsLEDTickingOnHeld(brightness: 0)
    #expect(read("trigger") == "none timer [heartbeat]\n", "nothing shown, nothing touched")
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    #expect(read("trigger") == "none")
    #expect(read("brightness") == "1")
    try wired.turn(until: "the tick's end") { read("trigger") == "heartbeat" }
    #expect(read("brightness") == "0")
    #expect(wired.log.records(event: "feedback-failed").isEmpty)
  }

  /// The real daemon on fakes: the threshold beep starts in the loop turn that decides the
  /// hold and is silenced 60 ms later; a stop mid-beep silences it; the rumble on a
  /// device without FF_RUMBLE is logged once and the hold still performs.
  @Test func theDaemonBeepsTheTickAndSilencesAtTheStop() throws {
    let evdev = RecordingFeedbackEvdev()
    evdev.capabilities = ["*": ["EV_SND 2"]]
    let device = FakeButtonDevice(device: nil)
    let wired = try WiredDaemon(
      feedback: #"[{ sound: "SND_TONE", hz: 2000, device: "PC Speaker" }, { rumble: "FF_RUMBLE" }]"#,
      lights: LinuxFeedbackLights(inputLEDs: device, evdev: evdev))
    #expect(evdev.calls == ["open PC Speaker"], "the named device is opened at the start")
    device.device = "input7"
    let t0 = wired.daemon.loop.now() - .seconds(5)
    wired.plugIn(at: t0)
    let refused = wired.log.records(event: "feedback-failed")
    #expect(refused.count == 1)
    #expect(
      refused.first?.message
        == "button action: feedback on FF_RUMBLE of button action's device failed: the device has no EV_FF "
        + "FF_RUMBLE (not logged again until it works)")
    wired.input.emit(.key(button: "action", code: 148, value: 1, at: t0 + .milliseconds(100)))
    #expect(evdev.calls == ["open PC Speaker"], "a press is not a sound by default")
    try wired.turn(until: "the hold's command") { !wired.runner.runs.isEmpty }
    #expect(evdev.calls.last == "write 51 EV_SND 2 2000", "the tick in the turn that decided the hold")
    try wired.turn(until: "the tick's end") { evdev.calls.last == "write 51 EV_SND 2 0" }
    wired.runner.complete(with: .exited(0))
    try wired.turn(until: "performed") { evdev.calls.last == "write 51 EV_SND 2 2000" }
    wired.daemon.shutdown(reason: "test")
    #expect(evdev.calls.suffix(2) == ["write 51 EV_SND 2 0", "close 51"], "a stop silences and closes")
    #expect(wired.log.records(event: "feedback-failed").count == 1)
    #expect(wired.log.records(event: "performed").count == 1)
  }
}

/// The LEDs of the button's device as the input manager would offer them: one device, whose
/// LEDs start lit.
private final class RecordingButtonLEDs: ButtonDeviceLEDs {
  var device: String?
  var calls: [String] = []
  func ledDevice(forButton button: String) -> String? { button == "action" ? device : nil }
  func isLEDOn(device: String, code: UInt16) throws(SystemCallError) -> Bool {
    calls.append("get \(LEDCodes.name(of: code) ?? "")")
    return true
  }
  func setLED(device: String, code: UInt16, on: Bool) throws(SystemCallError) {
    calls.append("set \(LEDCodes.name(of: code) ?? "") \(on ? 1 : 0)")
  }
  func isOpen(device: String) -> Bool { device == self.device }
  func descriptor(device: String) -> Int32? { device == self.device ? 7 : nil }
}
