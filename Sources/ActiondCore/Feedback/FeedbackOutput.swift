/// One feedback output of a button, as the configuration's `feedback` list gives it
/// (validated; every default applied).
public struct FeedbackOutput: Hashable, Sendable, CustomStringConvertible {
  /// The light it drives.
  public enum Light: Hashable, Sendable, CustomStringConvertible {
    /// An LED of the input device the button is bound to, written as `EV_LED` with this
    /// code (`LED_CAPSL` = 1) to the descriptor actiond already holds.
    case inputLED(code: UInt16)
    /// An LED class device: its name under `/sys/class/leds` (`ACT`, `input3::capslock`).
    case sysfs(name: String)

    public var description: String {
      switch self {
      case .inputLED(let code): "led \(LEDCodes.name(of: code) ?? "LED_0x" + String(code, radix: 16))"
      case .sysfs(let name): "sysfs \(name)"
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
