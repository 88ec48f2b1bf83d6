// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CEvdev
import Glibc

/// The shape of a virtual device: what udev and actiond see when it appears.
struct DeviceShape {
  var name: String
  var phys: String?
  var uniq: String?
  var bus: Int32
  var vendor: Int32
  var product: Int32
  var version: Int32
  var keys: [UInt32]
  var autorepeat: Bool
  var repeatDelay: TimeSpan?
  var repeatPeriod: TimeSpan?
  /// EV_LED codes (LED_CAPSL, LED_MISC, ...); a device with LEDs reports what it is sent
  /// (see ``Inbox``).
  var leds: [UInt32] = []
  /// EV_SND codes (SND_TONE, SND_BELL): the device prints every sound it is sent.
  var sounds: [UInt32] = []
  /// EV_FF with FF_RUMBLE (libevdev gives uinput ff_effects_max 10): the device answers
  /// effect uploads and erasures and prints them and every play and stop.
  var rumble = false

  /// Whether the device reports what it is sent (see ``Inbox``).
  var hasInbox: Bool { !leds.isEmpty || !sounds.isEmpty || rumble }

  /// Like the device the kernel's gpio-keys driver registers for a GPIO button: BUS_HOST,
  /// 0001:0001 (the same id as the AT keyboard), no EV_REP.
  static func gpioKeys() throws -> DeviceShape {
    DeviceShape(
      name: "gpio-keys", phys: "gpio-keys/input0", uniq: nil, bus: BUS_HOST, vendor: 0x0001,
      product: 0x0001, version: 0x0100, keys: [try Names.keyCode("KEY_POWER"), try Names.keyCode("KEY_PROG1")],
      autorepeat: false, repeatDelay: nil, repeatPeriod: nil)
  }

  /// A USB keyboard: EV_REP set, so the input core autorepeats held keys (250 ms, then every 33 ms
  /// unless changed), with the letters, digits, modifiers, F-keys, media and PROG keys.
  static func usbKeyboard() throws -> DeviceShape {
    var keys = Array(UInt32(KEY_ESC)...UInt32(KEY_KPDOT))  // the main block and keypad
    keys += Array(UInt32(KEY_F11)...UInt32(KEY_F12))
    keys += [KEY_MUTE, KEY_VOLUMEDOWN, KEY_VOLUMEUP, KEY_POWER, KEY_PROG1, KEY_PROG2, KEY_PROG3, KEY_PROG4]
      .map { UInt32($0) }
    return DeviceShape(
      name: "actiond-testdev USB Keyboard", phys: "usb-0000:00:04.0-1/input0", uniq: nil, bus: BUS_USB,
      vendor: 0x1209, product: 0x0001, version: 0x0111, keys: keys, autorepeat: true, repeatDelay: nil,
      repeatPeriod: nil)
  }
}

/// A uinput device created from a `DeviceShape` through libevdev-uinput.
final class VirtualDevice {
  private let template: OpaquePointer
  private var uinput: OpaquePointer?
  let shape: DeviceShape

  init(shape: DeviceShape) throws {
    self.shape = shape
    guard let dev = libevdev_new() else { throw TestDevError.failed("libevdev_new failed") }
    template = dev
    libevdev_set_name(dev, shape.name)
    if let phys = shape.phys { libevdev_set_phys(dev, phys) }
    if let uniq = shape.uniq { libevdev_set_uniq(dev, uniq) }
    libevdev_set_id_bustype(dev, shape.bus)
    libevdev_set_id_vendor(dev, shape.vendor)
    libevdev_set_id_product(dev, shape.product)
    libevdev_set_id_version(dev, shape.version)
    try check(libevdev_enable_event_type(dev, UInt32(EV_KEY)), "enable EV_KEY")
    for key in shape.keys {
      try check(libevdev_enable_event_code(dev, UInt32(EV_KEY), key, nil), "enable \(Names.keyName(key))")
    }
    if shape.autorepeat {
      try check(libevdev_enable_event_type(dev, UInt32(EV_REP)), "enable EV_REP")
    }
    if !shape.leds.isEmpty {
      try check(libevdev_enable_event_type(dev, UInt32(EV_LED)), "enable EV_LED")
      for led in shape.leds {
        try check(libevdev_enable_event_code(dev, UInt32(EV_LED), led, nil), "enable \(Names.ledName(led))")
      }
    }
    if !shape.sounds.isEmpty {
      try check(libevdev_enable_event_type(dev, UInt32(EV_SND)), "enable EV_SND")
      for sound in shape.sounds {
        try check(
          libevdev_enable_event_code(dev, UInt32(EV_SND), sound, nil),
          "enable \(Names.codeName(type: UInt32(EV_SND), code: sound))")
      }
    }
    if shape.rumble {
      try check(libevdev_enable_event_type(dev, UInt32(EV_FF)), "enable EV_FF")
      try check(libevdev_enable_event_code(dev, UInt32(EV_FF), UInt32(FF_RUMBLE), nil), "enable FF_RUMBLE")
    }
  }

  deinit {
    if let uinput { libevdev_uinput_destroy(uinput) }
    libevdev_free(template)
  }

  var exists: Bool { uinput != nil }

  /// The uinput descriptor, non-blocking, on which the kernel delivers what the device is
  /// sent (its LED changes, sounds, effect requests and plays); nil for a device without
  /// LEDs, sounds or rumble, or one that does not exist.
  var inboxDescriptor: Int32? {
    guard shape.hasInbox, let uinput else { return nil }
    return libevdev_uinput_get_fd(uinput)
  }

  /// Creates the kernel device; returns its device node.
  func create() throws -> String {
    precondition(uinput == nil)
    var created: OpaquePointer?
    let rc = libevdev_uinput_create_from_device(template, Int32(LIBEVDEV_UINPUT_OPEN_MANAGED.rawValue), &created)
    guard rc == 0, let created else {
      throw TestDevError.system("cannot create uinput device '\(shape.name)' (is the uinput module loaded?)", -rc)
    }
    uinput = created
    if let fd = inboxDescriptor {
      let flags = fcntl(fd, F_GETFL)
      guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
        throw TestDevError.system("cannot make the uinput descriptor non-blocking", errno)
      }
    }
    // The input core's software autorepeat starts at 250/33 ms; EV_REP events written to
    // uinput change the device's REP_DELAY/REP_PERIOD like EVIOCSREP would.
    if let delay = shape.repeatDelay { try write(type: EV_REP, code: REP_DELAY, value: Int32(delay.milliseconds)) }
    if let period = shape.repeatPeriod {
      try write(type: EV_REP, code: REP_PERIOD, value: Int32(period.milliseconds))
    }
    guard let node = libevdev_uinput_get_devnode(created) else {
      throw TestDevError.failed("uinput device '\(shape.name)' has no device node (is devtmpfs mounted?)")
    }
    return String(cString: node)
  }

  var syspath: String {
    guard let uinput, let path = libevdev_uinput_get_syspath(uinput) else { return "?" }
    return String(cString: path)
  }

  func destroy() {
    if let uinput { libevdev_uinput_destroy(uinput) }
    uinput = nil
  }

  /// Writes one key event and its SYN_REPORT; returns CLOCK_MONOTONIC read just before the write,
  /// which is within microseconds of the timestamp the kernel gives the event.
  func key(_ code: UInt32, value: Int32) throws -> MonotonicInstant {
    let stamp = monotonicNow()
    try write(type: EV_KEY, code: Int32(code), value: value)
    try write(type: EV_SYN, code: SYN_REPORT, value: 0)
    return stamp
  }

  private func write(type: Int32, code: Int32, value: Int32) throws {
    guard let uinput else { throw TestDevError.failed("the device does not exist (destroyed; use recreate)") }
    let rc = libevdev_uinput_write_event(uinput, UInt32(type), UInt32(code), value)
    if rc < 0 { throw TestDevError.system("writing \(Names.typeName(UInt32(type))) to '\(shape.name)'", -rc) }
  }

  private func check(_ rc: Int32, _ what: String) throws {
    if rc < 0 { throw TestDevError.failed("libevdev: cannot \(what)") }
  }
}

/// One line of a device script.
enum ScriptCommand: Equatable {
  case down(UInt32)
  case up(UInt32)
  case press(UInt32, TimeSpan)
  case sleep(TimeSpan)
  case `repeat`(UInt32, count: Int, every: TimeSpan)
  case destroy
  case recreate
  case echo(String)

  /// Parses one command; nil for blank lines and `#` comments.
  static func parse(_ line: String) throws -> ScriptCommand? {
    let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    guard let verb = words.first, !verb.hasPrefix("#") else { return nil }
    func arity(_ n: Int, _ form: String) throws {
      if words.count != n { throw TestDevError.usage("bad command '\(line)' (expected '\(form)')") }
    }
    switch verb {
    case "down":
      try arity(2, "down KEY")
      return .down(try Names.keyCode(words[1]))
    case "up":
      try arity(2, "up KEY")
      return .up(try Names.keyCode(words[1]))
    case "press":
      try arity(3, "press KEY DURATION")
      return .press(try Names.keyCode(words[1]), try parseDuration(words[2]))
    case "sleep":
      try arity(2, "sleep DURATION")
      return .sleep(try parseDuration(words[1]))
    case "repeat":
      try arity(5, "repeat KEY N every DURATION")
      guard let count = Int(words[2]), count >= 0, words[3] == "every" else {
        throw TestDevError.usage("bad command '\(line)' (expected 'repeat KEY N every DURATION')")
      }
      return .repeat(try Names.keyCode(words[1]), count: count, every: try parseDuration(words[4]))
    case "destroy":
      try arity(1, "destroy")
      return .destroy
    case "recreate":
      try arity(1, "recreate")
      return .recreate
    case "echo":
      return .echo(words.dropFirst().joined(separator: " "))
    default:
      throw TestDevError.usage("unknown command '\(verb)' in '\(line)'")
    }
  }
}

/// `actiond-testdev create`: one device, driven by a script.
struct CreateMode {
  var shape: DeviceShape
  var commands: [String]

  init(arguments: [String]) throws {
    var preset = "gpio-keys"
    var overrides: [(String, String)] = []
    var commands: [String] = []
    var cursor = ArgumentCursor(arguments)
    while let argument = cursor.next() {
      switch argument {
      case "--preset": preset = try cursor.value(for: argument)
      case "--rep", "--no-rep", "--ff": overrides.append((argument, ""))
      case "--name", "--phys", "--uniq", "--bus", "--id", "--version", "--keys", "--add-keys", "--rep-delay",
        "--rep-period", "--leds", "--snd":
        overrides.append((argument, try cursor.value(for: argument)))
      case "--": commands += cursor.rest()
      default:
        if argument.hasPrefix("--") { throw TestDevError.usage("unknown option '\(argument)'") }
        commands.append(argument)
      }
    }
    switch preset {
    case "gpio-keys": shape = try .gpioKeys()
    case "usb-keyboard": shape = try .usbKeyboard()
    default: throw TestDevError.usage("unknown preset '\(preset)' (gpio-keys or usb-keyboard)")
    }
    for (option, text) in overrides {
      switch option {
      case "--name": shape.name = text
      case "--phys": shape.phys = text
      case "--uniq": shape.uniq = text
      case "--bus": shape.bus = try Names.bus(text)
      case "--id": (shape.vendor, shape.product) = try Names.id(text)
      case "--version":
        guard text.hasPrefix("0x"), let v = Int32(text.dropFirst(2), radix: 16), (0...0xffff).contains(v) else {
          throw TestDevError.usage("bad version '\(text)' (expected 0xNNNN)")
        }
        shape.version = v
      case "--keys": shape.keys = try Self.keyList(text)
      case "--add-keys": shape.keys += try Self.keyList(text)
      case "--rep": shape.autorepeat = true
      case "--no-rep": shape.autorepeat = false
      case "--rep-delay": shape.repeatDelay = try parseDuration(text)
      case "--rep-period": shape.repeatPeriod = try parseDuration(text)
      case "--leds": shape.leds = try Self.ledList(text)
      case "--snd": shape.sounds = try Self.soundList(text)
      case "--ff": shape.rumble = true
      default: preconditionFailure("option \(option) parsed above")
      }
    }
    if (shape.repeatDelay != nil || shape.repeatPeriod != nil) && !shape.autorepeat {
      throw TestDevError.usage("--rep-delay/--rep-period need a device with EV_REP (--rep)")
    }
    self.commands = commands
    // Validate argument commands before creating anything, so a typo fails fast and cleanly.
    for command in commands { _ = try ScriptCommand.parse(command) }
  }

  static func keyList(_ text: String) throws -> [UInt32] {
    let keys = try text.split(separator: ",").map { try Names.keyCode(String($0)) }
    if keys.isEmpty { throw TestDevError.usage("empty key list") }
    return keys
  }

  static func soundList(_ text: String) throws -> [UInt32] {
    let sounds = try text.split(separator: ",").map { name in
      for candidate in [String(name), "SND_" + name.uppercased()] {
        let code = libevdev_event_code_from_name(UInt32(EV_SND), candidate)
        if code >= 0 { return UInt32(code) }
      }
      throw TestDevError.usage("unknown sound '\(name)' (expected SND_TONE, SND_BELL or SND_CLICK)")
    }
    if sounds.isEmpty { throw TestDevError.usage("empty sound list") }
    return sounds
  }

  static func ledList(_ text: String) throws -> [UInt32] {
    let leds = try text.split(separator: ",").map { try Names.ledCode(String($0)) }
    if leds.isEmpty { throw TestDevError.usage("empty LED list") }
    return leds
  }

  func run() throws {
    let device = try VirtualDevice(shape: shape)
    try create(device)
    if commands.isEmpty {
      var input = LineReader(fd: 0)
      var lineNumber = 0
      while let lines = nextLines(&input, device) {
        for line in lines {
          lineNumber += 1
          do {
            if let command = try ScriptCommand.parse(line) { try execute(command, on: device) }
          } catch {
            throw TestDevError.failed("stdin line \(lineNumber): \(error)")
          }
        }
      }
    } else {
      for line in commands {
        if let command = try ScriptCommand.parse(line) { try execute(command, on: device) }
      }
    }
    if device.exists { destroy(device) }
  }

  /// The next lines of the script on stdin; nil at its end. A device with LEDs reads them
  /// with read(2), not stdio, so that waiting for the next one also prints what the device
  /// receives meanwhile; one without reads them as it always did.
  private func nextLines(_ input: inout LineReader, _ device: VirtualDevice) -> [String]? {
    guard shape.hasInbox else { return readLine(strippingNewline: true).map { [$0] } }
    if input.atEnd { return nil }
    Inbox.wait(device: device, until: nil, orReadable: 0)
    return input.read()
  }

  private func create(_ device: VirtualDevice) throws {
    let node = try device.create()
    let keys = shape.keys.map(Names.keyName).joined(separator: ",")
    var leds = shape.leds.isEmpty ? "" : " leds=" + shape.leds.map(Names.ledName).joined(separator: ",")
    if !shape.sounds.isEmpty {
      leds += " snd=" + shape.sounds.map { Names.codeName(type: UInt32(EV_SND), code: $0) }.joined(separator: ",")
    }
    if shape.rumble { leds += " ff=FF_RUMBLE" }
    emit(
      "created \(node) syspath=\(device.syspath) name=\"\(shape.name)\" bus=\(Names.busName(shape.bus))"
        + " id=\(Names.hex4(shape.vendor)):\(Names.hex4(shape.product)) rep=\(shape.autorepeat ? "yes" : "no")"
        + " keys=\(keys)\(leds)")
  }

  private func destroy(_ device: VirtualDevice) {
    // What the device was sent up to now is printed before it goes.
    if let inbox = device.inboxDescriptor { Inbox.drain(fd: inbox) }
    let stamp = monotonicNow()
    device.destroy()
    emit("destroyed \(formatTimestamp(stamp))")
  }

  private func sent(_ stamp: MonotonicInstant, _ key: UInt32, _ value: Int32) {
    emit("sent \(formatTimestamp(stamp)) EV_KEY \(Names.keyName(key)) \(value)")
  }

  private func execute(_ command: ScriptCommand, on device: VirtualDevice) throws {
    switch command {
    case .down(let key):
      sent(try device.key(key, value: 1), key, 1)
    case .up(let key):
      sent(try device.key(key, value: 0), key, 0)
    case .press(let key, let hold):
      let downAt = try device.key(key, value: 1)
      // Print after the release so printing cannot delay it; the hold is measured from the
      // press's own timestamp, not from when the sleep began.
      Inbox.wait(device: device, until: downAt + hold)
      let upAt = try device.key(key, value: 0)
      sent(downAt, key, 1)
      sent(upAt, key, 0)
    case .sleep(let span):
      Inbox.wait(device: device, until: monotonicNow() + span)
    case .repeat(let key, let count, let every):
      let start = monotonicNow()
      for i in 0..<count {
        Inbox.wait(device: device, until: start + TimeSpan(nanoseconds: every.nanoseconds * Int64(i + 1)))
        sent(try device.key(key, value: 2), key, 2)
      }
    case .destroy:
      guard device.exists else { throw TestDevError.failed("destroy: the device does not exist") }
      destroy(device)
    case .recreate:
      guard !device.exists else { throw TestDevError.failed("recreate: the device still exists (destroy first)") }
      try create(device)
    case .echo(let text):
      emit(text)
    }
  }
}
