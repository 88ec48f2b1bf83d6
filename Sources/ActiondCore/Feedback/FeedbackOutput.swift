// SPDX-License-Identifier: Apache-2.0
/// One feedback output of a button, as the configuration's `feedback` list gives it
/// (validated; every default applied).
public struct FeedbackOutput: Hashable, Sendable, CustomStringConvertible {
  /// What it drives: a light, a beeper or a rumble motor.
  public enum Light: Hashable, Sendable, CustomStringConvertible {
    /// An LED of the input device the button is bound to, written as `EV_LED` with this
    /// code (`LED_CAPSL` = 1) to the descriptor actiond already holds.
    case inputLED(code: UInt16)
    /// An LED class device: its name under `/sys/class/leds` (`ACT`, `input3::capslock`).
    case sysfs(name: String)
    /// A beeper: `EV_SND` `code` (``SoundCodes``) on `device`. On is `hertz` for
    /// `SND_TONE` (the tone's frequency) and 1 for `SND_BELL`; off is 0.
    case sound(code: UInt16, hertz: Int32, device: FeedbackDevice)
    /// A rumble motor: one `FF_RUMBLE` effect of `strength` percent (both motors),
    /// uploaded to `device` when it is bound, played (`EV_FF`) while the pattern is on.
    case rumble(strength: Int, device: FeedbackDevice)

    /// Whether it can show a state while idle (an indicator): only a light can.
    public var isLight: Bool {
      switch self {
      case .inputLED, .sysfs: true
      case .sound, .rumble: false
      }
    }

    public var description: String {
      switch self {
      case .inputLED(let code): "led \(LEDCodes.name(of: code) ?? "LED_0x" + String(code, radix: 16))"
      case .sysfs(let name): "sysfs \(name)"
      case .sound(let code, let hertz, let device):
        "sound \(SoundCodes.name(of: code))\(code == SoundCodes.tone ? " \(hertz) Hz" : "")\(device.suffix)"
      case .rumble(let strength, let device): "rumble \(strength)%\(device.suffix)"
      }
    }
  }

  public var light: Light
  /// The moments it shows, each once, in ``FeedbackMoment`` order.
  public var moments: [FeedbackMoment]
  /// It shows the value of the toggle assigned to the button's hold while no pattern
  /// runs (on: on; off, unknown, unavailable or no toggle: off). Without it, the light
  /// is given back (its own state restored) whenever no pattern runs.
  public var indicator: Bool
  /// The pattern of every moment (defaults where the configuration gives none).
  public var patterns: [FeedbackMoment: FeedbackPattern]

  /// The moments an output shows when the configuration gives no `on`: every one for a
  /// light; every one but `pressed` for a sound or a rumble (a tone or a rumble for as long
  /// as the key is down is noise, not feedback).
  public static func defaultMoments(for light: Light) -> [FeedbackMoment] {
    light.isLight ? FeedbackMoment.allCases : FeedbackMoment.allCases.filter { $0 != .pressed }
  }

  public init(
    light: Light, moments: [FeedbackMoment] = FeedbackMoment.allCases, indicator: Bool = false,
    patterns: [FeedbackMoment: FeedbackPattern] = [:]
  ) {
    self.light = light
    self.moments = Array(Set(moments)).sorted()
    self.indicator = indicator
    self.patterns = FeedbackPattern.defaults.merging(patterns) { _, given in given }
  }

  /// `led LED_CAPSL (held; indicator)`: what logs and `--check-config` show.
  public var description: String {
    var parts = moments.map(\.rawValue)
    if indicator { parts.append("indicator") }
    return "\(light) (\(parts.joined(separator: ", ")))"
  }
}

/// The input device a sound or rumble output writes to.
public enum FeedbackDevice: Hashable, Sendable, CustomStringConvertible {
  /// The device the button is bound to (the descriptor actiond already holds).
  case button
  /// An event device node or a link to one (`/dev/input/by-path/platform-pcspkr-event-spkr`),
  /// opened by actiond for the output.
  case path(String)
  /// The input device of this name (`EVIOCGNAME`, `PC Speaker`), found through udev and
  /// opened by actiond for the output.
  case named(String)

  /// The configuration's spelling: `device` is a path when it starts with `/`, else a name.
  public init(configured text: String) { self = text.hasPrefix("/") ? .path(text) : .named(text) }

  /// The configuration's `device` value; nil for the button's own device.
  public var configured: String? {
    switch self {
    case .button: nil
    case .path(let path): path
    case .named(let name): name
    }
  }

  public var description: String {
    switch self {
    case .button: "the button's device"
    case .path(let path): path
    case .named(let name): "device \"\(name)\""
    }
  }

  /// ` on /dev/input/event5`, nothing for the button's own device.
  var suffix: String { self == .button ? "" : " on \(self)" }
}

/// The `EV_SND` codes a sound output can use.
public enum SoundCodes {
  /// `SND_BELL`: a bell of the device's own pitch (pcspkr: 1000 Hz).
  public static let bell: UInt16 = 0x01
  /// `SND_TONE`: a tone of the given frequency.
  public static let tone: UInt16 = 0x02
  /// Both, by name.
  public static let all: [(name: String, code: UInt16)] = [("SND_BELL", bell), ("SND_TONE", tone)]
  /// The frequency of `SND_TONE` when the configuration gives none.
  public static let defaultHertz: Int32 = 1000
  /// The frequencies `hz` may give.
  public static let hertzRange: ClosedRange<Int64> = 20...20_000

  public static func code(named name: String) -> UInt16? { all.first { $0.name == name }?.code }
  public static func name(of code: UInt16) -> String { all.first { $0.code == code }?.name ?? "SND_\(code)" }
}

/// The rumble a `rumble` output plays.
public enum RumbleEffect {
  /// The configuration's only `rumble` value: the effect type it uploads.
  public static let name = "FF_RUMBLE"
  /// `strength` when the configuration gives none: full, so that a short tick is felt.
  public static let defaultStrength = 100

  /// The effect's own length in milliseconds: the longest time one of `output`'s patterns
  /// keeps it on, so that the device stops by itself even when no stop reaches it;
  /// 0 (until stopped) when a pattern stays on while the key is down.
  public static func lengthMs(of output: FeedbackOutput) -> UInt16 {
    var longest: Int64 = 1
    for moment in output.moments {
      guard let pattern = output.patterns[moment] else { continue }
      if pattern.sustained { return 0 }
      for step in pattern.steps where step.on { longest = max(longest, step.duration.milliseconds) }
    }
    return UInt16(min(longest, Int64(UInt16.max)))
  }

  /// A magnitude of `linux/input.h`'s `ff_rumble_effect` (0...0xffff) for `strength` percent.
  public static func magnitude(percent strength: Int) -> UInt16 {
    UInt16(min(max(strength, 0), 100) * 0xffff / 100)
  }
}

/// The `EV_LED` codes of linux/input-event-codes.h, by name.
public enum LEDCodes {
  /// `LED_MAX`: the highest code.
  public static let maximum: UInt16 = 0x0f
  /// Every named LED, in code order.
  public static let all: [(name: String, code: UInt16)] = [
    ("LED_NUML", 0x00), ("LED_CAPSL", 0x01), ("LED_SCROLLL", 0x02), ("LED_COMPOSE", 0x03), ("LED_KANA", 0x04),
    ("LED_SLEEP", 0x05), ("LED_SUSPEND", 0x06), ("LED_MUTE", 0x07), ("LED_MISC", 0x08), ("LED_MAIL", 0x09),
    ("LED_CHARGING", 0x0a),
  ]

  public static func code(named name: String) -> UInt16? { all.first { $0.name == name }?.code }
  public static func name(of code: UInt16) -> String? { all.first { $0.code == code }?.name }
}
