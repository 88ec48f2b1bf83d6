/// The timing settings of one button's press recognizer: how long a press must last
/// to become a hold, and how long a release must last to count (debounce).
///
/// Values outside the valid ranges are rejected rather than clamped, so a typo in a
/// configuration file is reported instead of silently turning into a different feel.
public struct RecognizerSettings: Hashable, Sendable, CustomStringConvertible {
  /// 600 ms: long enough that a deliberate tap never performs, short enough that a
  /// hold does not feel sluggish (the iPhone Action button sits in the same range).
  public static let defaultHoldThreshold = TimeSpan.milliseconds(600)
  /// 0 ms: debounce is off unless a button is known to chatter.
  public static let defaultDebounce = TimeSpan.zero
  /// Valid hold thresholds, inclusive: 100 ms ... 10 s.
  public static let holdThresholdRange = TimeSpan.milliseconds(100)...TimeSpan.milliseconds(10_000)
  /// Valid debounce times, inclusive: 0 (off) ... 200 ms.
  public static let debounceRange = TimeSpan.zero...TimeSpan.milliseconds(200)

  /// The defaults: 600 ms hold threshold, debounce off.
  public static let `default` = RecognizerSettings(
    unchecked: defaultHoldThreshold, debounce: defaultDebounce)

  /// A press lasting at least this long (kernel timestamps) is a hold.
  public let holdThreshold: TimeSpan
  /// A release takes effect only once the key has stayed up this long; a re-press
  /// sooner is chatter. Zero turns debouncing off.
  public let debounce: TimeSpan

  /// Validated settings.
  /// - Throws: ``Invalid`` listing every value out of range.
  public init(
    holdThreshold: TimeSpan = defaultHoldThreshold, debounce: TimeSpan = defaultDebounce
  )
    throws(Invalid)
  {
    let problems = Self.problems(holdThreshold: holdThreshold, debounce: debounce)
    if !problems.isEmpty { throw Invalid(problems: problems) }
    self.init(unchecked: holdThreshold, debounce: debounce)
  }

  private init(unchecked holdThreshold: TimeSpan, debounce: TimeSpan) {
    self.holdThreshold = holdThreshold
    self.debounce = debounce
  }

  /// Every problem with the given values (empty when they are valid), for
  /// configuration validation that reports all problems at once.
  public static func problems(holdThreshold: TimeSpan, debounce: TimeSpan) -> [Problem] {
    var problems: [Problem] = []
    if !holdThresholdRange.contains(holdThreshold) { problems.append(.holdThresholdOutOfRange(holdThreshold)) }
    if !debounceRange.contains(debounce) { problems.append(.debounceOutOfRange(debounce)) }
    return problems
  }

  public var description: String { "holdThreshold=\(holdThreshold) debounce=\(debounce)" }

  /// One invalid setting.
  public enum Problem: Hashable, Sendable, CustomStringConvertible {
    case holdThresholdOutOfRange(TimeSpan)
    case debounceOutOfRange(TimeSpan)

    /// The setting's name: `holdThreshold` or `debounce`.
    public var setting: String {
      switch self {
      case .holdThresholdOutOfRange: "holdThreshold"
      case .debounceOutOfRange: "debounce"
      }
    }

    /// E.g. `holdThreshold: must be between 100ms and 10000ms (got 50ms)`.
    public var description: String {
      switch self {
      case .holdThresholdOutOfRange(let value):
        let range = RecognizerSettings.holdThresholdRange
        return "\(setting): must be between \(range.lowerBound) and \(range.upperBound) (got \(value))"
      case .debounceOutOfRange(let value):
        let range = RecognizerSettings.debounceRange
        return "\(setting): must be between \(range.lowerBound) and \(range.upperBound) (got \(value))"
      }
    }
  }

  /// Thrown by ``init(holdThreshold:debounce:)``: every invalid setting, not just the first.
  public struct Invalid: Error, Hashable, Sendable, CustomStringConvertible {
    public let problems: [Problem]
    public var description: String { problems.map(\.description).joined(separator: "; ") }
  }
}
