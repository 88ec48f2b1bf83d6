// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import Glibc
import Testing

@testable import actiond_testdev

/// The device tool's input language: a typo in a scenario must fail loudly before any device
/// exists, never run a different press than written.
@Suite struct ScriptParsingTests {
  @Test func durationsInEveryUnit() throws {
    #expect(try parseDuration("700ms") == .milliseconds(700))
    #expect(try parseDuration("1.5s") == .milliseconds(1_500))
    #expect(try parseDuration("250us") == .microseconds(250))
    #expect(try parseDuration("0ms") == .zero)
  }

  @Test(arguments: ["700", "ms", "-5ms", "1.5", "7 ms", "nanms", "infs", "", "5m"])
  func badDurationsAreRejected(_ text: String) {
    #expect(throws: TestDevError.self) { try parseDuration(text) }
  }

  @Test func keyNamesLongAndShort() throws {
    let prog1 = try Names.keyCode("KEY_PROG1")
    #expect(prog1 == 148)
    #expect(try Names.keyCode("prog1") == prog1)
    #expect(try Names.keyCode("BTN_0") == 0x100)
    #expect(Names.keyName(prog1) == "KEY_PROG1")
    #expect(throws: TestDevError.self) { try Names.keyCode("KEY_NOPE") }
  }

  @Test func busesAndIds() throws {
    #expect(try Names.bus("host") == 0x19)
    #expect(try Names.bus("0x03") == 0x03)
    #expect(throws: TestDevError.self) { try Names.bus("pci") }
    let id = try Names.id("0001:0001")
    #expect(id.vendor == 1 && id.product == 1)
    #expect(Names.hex4(0x1209) == "1209")
    for bad in ["0001", "0001:", "10000:0001", "zz:01", "1:2:3"] {
      #expect(throws: TestDevError.self) { try Names.id(bad) }
    }
  }

  @Test func commands() throws {
    #expect(try ScriptCommand.parse("press KEY_PROG1 700ms") == .press(148, .milliseconds(700)))
    #expect(try ScriptCommand.parse("  down\tprog1 ") == .down(148))
    #expect(
      try ScriptCommand.parse("repeat KEY_PROG1 3 every 40ms") == .repeat(148, count: 3, every: .milliseconds(40)))
    #expect(try ScriptCommand.parse("echo ready now") == .echo("ready now"))
    #expect(try ScriptCommand.parse("destroy") == .destroy)
    #expect(try ScriptCommand.parse("") == nil)
    #expect(try ScriptCommand.parse("# a comment") == nil)
  }

  @Test(arguments: [
    "press KEY_PROG1", "press KEY_PROG1 700", "down", "up KEY_PROG1 KEY_PROG2", "repeat KEY_PROG1 3 each 40ms",
    "repeat KEY_PROG1 -1 every 40ms", "destroy now", "hold KEY_PROG1 700ms", "sleep",
  ])
  func badCommandsAreRejected(_ line: String) {
    #expect(throws: TestDevError.self) { try ScriptCommand.parse(line) }
  }

  @Test func createOptionsShapeTheDevice() throws {
    let gpio = try CreateMode(arguments: [])
    #expect(gpio.shape.name == "gpio-keys" && gpio.shape.bus == 0x19 && !gpio.shape.autorepeat)
    #expect(gpio.shape.vendor == 1 && gpio.shape.product == 1)
    let usb = try CreateMode(arguments: [
      "--preset", "usb-keyboard", "--name", "x", "--rep-delay", "300ms", "--keys", "KEY_A,KEY_B", "press KEY_A 10ms",
    ])
    #expect(usb.shape.autorepeat && usb.shape.bus == 0x03 && usb.shape.name == "x")
    #expect(usb.shape.keys == [30, 48] && usb.shape.repeatDelay == .milliseconds(300))
    #expect(usb.commands == ["press KEY_A 10ms"])
  }

  @Test func badCreateOptionsFailBeforeAnyDevice() {
    let cases: [[String]] = [
      ["--preset", "joystick"], ["--name"], ["--rep-delay", "200ms"], ["--keys", ""], ["--bogus"],
      ["press KEY_A"], ["--version", "12"],
    ]
    for arguments in cases {
      #expect(throws: TestDevError.self, "\(arguments)") { try CreateMode(arguments: arguments) }
    }
  }

  @Test func readOptions() throws {
    let byName = try ReadMode(arguments: ["--name", "gpio-keys", "--timeout", "2s", "--count", "2", "--grab"])
    #expect(byName.timeout == .seconds(2) && byName.count == 2 && byName.grab)
    for bad in [[], ["--count", "0", "/dev/input/event0"], ["/dev/a", "/dev/b"], ["--timeout"]] {
      #expect(throws: TestDevError.self, "\(bad)") { try ReadMode(arguments: bad) }
    }
  }

  @Test func ledNamesLongAndShort() throws {
    #expect(try Names.ledCode("LED_CAPSL") == 1)
    #expect(try Names.ledCode("capsl") == 1)
    #expect(try Names.ledCode("LED_MISC") == 8)
    #expect(Names.ledName(8) == "LED_MISC")
    #expect(throws: TestDevError.self) { try Names.ledCode("LED_CAPS") }
    let device = try CreateMode(arguments: ["--leds", "capsl,LED_MISC"])
    #expect(device.shape.leds == [1, 8])
    #expect(try CreateMode(arguments: []).shape.leds.isEmpty)
    for bad in [["--leds", ""], ["--leds", "LED_NOPE"], ["--leds"]] {
      #expect(throws: TestDevError.self, "\(bad)") { try CreateMode(arguments: bad) }
    }
  }

  /// What a scenario reads: the kernel's stamp of each LED change, sound and effect play
  /// the device was sent (lib.sh's led_* and inbox_* helpers parse these lines).
  @Test func receivedEventLines() {
    let at = MonotonicInstant(nanoseconds: 7_000_042_000)
    #expect(Inbox.line(type: 0x11, code: 1, value: 1, at: at) == "led 7.000042 LED_CAPSL 1")
    #expect(Inbox.line(type: 0x11, code: 8, value: 0, at: at) == "led 7.000042 LED_MISC 0")
    #expect(Inbox.line(type: 0x12, code: 1, value: 1, at: at) == "snd 7.000042 SND_BELL 1")
    #expect(Inbox.line(type: 0x12, code: 2, value: 1000, at: at) == "snd 7.000042 SND_TONE 1000")
    #expect(Inbox.line(type: 0x15, code: 0, value: 1, at: at) == "ff 7.000042 effect=0 1")
    // Anything else: type and code by name.
    #expect(Inbox.line(type: 0x14, code: 0, value: 250, at: at) == "received 7.000042 EV_REP REP_DELAY 250")
  }

  @Test func setLEDArguments() throws {
    let mode = try SetLEDMode(arguments: ["/dev/input/event3", "capsl", "1"])
    #expect(mode.node == "/dev/input/event3" && mode.led == 1 && mode.value == 1)
    for bad in [["/dev/input/event3", "capsl"], ["/dev/input/event3", "capsl", "2"], ["/dev/x", "LED_NOPE", "0"]] {
      #expect(throws: TestDevError.self, "\(bad)") { try SetLEDMode(arguments: bad) }
    }
  }

  /// The device script arrives in pieces: a line is run once it is complete, the last one
  /// also without a newline.
  @Test func scriptLinesFromPieces() throws {
    var reader = LineReader(fd: -1)
    #expect(reader.lines(adding: Array("down KEY_PROG1\nup KE".utf8)) == ["down KEY_PROG1"])
    #expect(reader.lines(adding: Array("Y_PROG1\n\necho x".utf8)) == ["up KEY_PROG1", ""])
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    var piped = LineReader(fd: fds[0])
    _ = "a\nb".withCString { write(fds[1], $0, 3) }
    #expect(piped.read() == ["a"])
    close(fds[1])
    #expect(piped.read() == ["b"])
    #expect(piped.atEnd)
    close(fds[0])
  }

  @Test func timestampsPrintMicroseconds() {
    #expect(formatTimestamp(MonotonicInstant(nanoseconds: 5_000_123_999)) == "5.000123")
    #expect(formatTimestamp(MonotonicInstant(nanoseconds: 12_345_678_000)) == "12.345678")
  }
}
