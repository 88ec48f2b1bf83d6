// SPDX-License-Identifier: Apache-2.0
/// The timing settings of one button's press recognizer: how long a press must last
/// to become a hold (and a long hold), how long a release must last to count
/// (debounce), and how soon a second press must follow to make a double press.
///
/// Values outside the valid ranges are rejected rather than clamped, so a typo in a
/// configuration file is reported instead of silently turning into a different feel.
public struct RecognizerSettings: Hashable, Sendable, CustomStringConvertible {
  /// 600 ms: long enough that a deliberate tap never performs, short enough that a
  /// hold does not feel sluggish (the iPhone Action button sits in the same range).
  public static let defaultHoldThreshold = TimeSpan.milliseconds(600)
  /// 0 ms: debounce is off unless a button is known to chatter.
  public static let defaultDebounce = TimeSpan.zero
  /// 300 ms: the double-click time of most desktops is 400-500 ms measured from the
  /// first key-down; measured from the release, 300 ms leaves room for an unhurried
  /// second press without making a short press's hint wait long on double-press buttons.
  public static let defaultDoublePressWindow = TimeSpan.milliseconds(300)
  /// 3 s (or the hold threshold + 1 s when that is longer): clearly distinct from the
  /// hold, the range Shelly, Flic and the HA blueprints use for "long".
  public static let minimumDefaultLongHoldThreshold = TimeSpan.milliseconds(3000)
  /// Valid hold thresholds, inclusive: 100 ms ... 10 s.
  public static let holdThresholdRange = TimeSpan.milliseconds(100)...TimeSpan.milliseconds(10_000)
  /// Valid debounce times, inclusive: 0 (off) ... 200 ms.
  public static let debounceRange = TimeSpan.zero...TimeSpan.milliseconds(200)
  /// Valid double-press windows, inclusive: 100 ms ... 1 s (and more than the debounce).
  public static let doublePressWindowRange = TimeSpan.milliseconds(100)...TimeSpan.milliseconds(1000)
  /// Valid long-hold thresholds, inclusive: 200 ms ... 60 s (and more than the hold threshold).
  public static let longHoldThresholdRange = TimeSpan.milliseconds(200)...TimeSpan.milliseconds(60_000)

  /// The long-hold threshold used when none is configured: 3 s, or the hold threshold
  /// + 1 s when that is longer, so the default is always valid.
  public static func defaultLongHoldThreshold(holdThreshold: TimeSpan) -> TimeSpan {
    max(minimumDefaultLongHoldThreshold, holdThreshold + .milliseconds(1000))
  }

  /// The defaults: 600 ms hold threshold, debounce off, 300 ms double-press window,
  /// 3 s long hold.
  public static let `default` = RecognizerSettings(
    unchecked: defaultHoldThreshold, debounce: defaultDebounce, doublePressWindow: defaultDoublePressWindow,
    longHoldThreshold: minimumDefaultLongHoldThreshold)

  /// A press lasting at least this long (kernel timestamps) is a hold.
  public let holdThreshold: TimeSpan
  /// A release takes effect only once the key has stayed up this long; a re-press
  /// sooner is chatter. Zero turns debouncing off.
  public let debounce: TimeSpan
  /// On a double-press button, a key-down at most this long after a short press's
  /// release is a double press.
  public let doublePressWindow: TimeSpan
  /// On a long-hold button, a press lasting at least this long is a long hold.
  public let longHoldThreshold: TimeSpan

  /// Validated settings; `longHoldThreshold` nil means ``defaultLongHoldThreshold(holdThreshold:)``.
  /// - Throws: ``Invalid`` listing every value out of range.
  public init(
    holdThreshold: TimeSpan = defaultHoldThreshold, debounce: TimeSpan = defaultDebounce,
    doublePressWindow: TimeSpan = defaultDoublePressWindow, longHoldThreshold: TimeSpan? = nil
  )
    throws(Invalid)
  {
    let longHold = longHoldThreshold ?? Self.defaultLongHoldThreshold(holdThreshold: holdThreshold)
    let problems = Self.problems(
      holdThreshold: holdThreshold, debounce: debounce, doublePressWindow: doublePressWindow,
      longHoldThreshold: longHold)
    if !problems.isEmpty { throw Invalid(problems: problems) }
    self.init(
      unchecked: holdThreshold, debounce: debounce, doublePressWindow: doublePressWindow, longHoldThreshold: longHold)
  }

  private init(
    unchecked holdThreshold: TimeSpan, debounce: TimeSpan, doublePressWindow: TimeSpan, longHoldThreshold: TimeSpan
  ) {
    self.holdThreshold = holdThreshold
    self.debounce = debounce
    self.doublePressWindow = doublePressWindow
    self.longHoldThreshold = longHoldThreshold
  }

  /// Every problem with the given values (empty when they are valid), for
  /// configuration validation that reports all problems at once.
  public static func problems(
    holdThreshold: TimeSpan, debounce: TimeSpan, doublePressWindow: TimeSpan = defaultDoublePressWindow,
    longHoldThreshold: TimeSpan? = nil
  ) -> [Problem] {
    var problems: [Problem] = []
    if !holdThresholdRange.contains(holdThreshold) { problems.append(.holdThresholdOutOfRange(holdThreshold)) }
    if !debounceRange.contains(debounce) { problems.append(.debounceOutOfRange(debounce)) }
    if !doublePressWindowRange.contains(doublePressWindow) {
      problems.append(.doublePressWindowOutOfRange(doublePressWindow))
    } else if doublePressWindow <= debounce, debounceRange.contains(debounce) {
      problems.append(.doublePressWindowNotAboveDebounce(doublePressWindow, debounce: debounce))
    }
    let longHold = longHoldThreshold ?? defaultLongHoldThreshold(holdThreshold: holdThreshold)
    if !longHoldThresholdRange.contains(longHold) {
      problems.append(.longHoldThresholdOutOfRange(longHold))
    } else if longHold <= holdThreshold, holdThresholdRange.contains(holdThreshold) {
      problems.append(.longHoldThresholdNotAboveHold(longHold, holdThreshold: holdThreshold))
    }
    return problems
  }

  public var description: String {
    "holdThreshold=\(holdThreshold) debounce=\(debounce) doublePressWindow=\(doublePressWindow) "
      + "longHoldThreshold=\(longHoldThreshold)"
  }

  /// One invalid setting.
  public enum Problem: Hashable, Sendable, CustomStringConvertible {
    case holdThresholdOutOfRange(TimeSpan)
    case debounceOutOfRange(TimeSpan)
    case doublePressWindowOutOfRange(TimeSpan)
    case doublePressWindowNotAboveDebounce(TimeSpan, debounce: TimeSpan)
    case longHoldThresholdOutOfRange(TimeSpan)
    case longHoldThresholdNotAboveHold(TimeSpan, holdThreshold: TimeSpan)

    /// The setting's name: `holdThreshold`, `debounce`, `doublePressWindow` or `longHoldThreshold`.
    public var setting: String {
      switch self {
      case .holdThresholdOutOfRange: "holdThreshold"
      case .debounceOutOfRange: "debounce"
      case .doublePressWindowOutOfRange, .doublePressWindowNotAboveDebounce: "doublePressWindow"
      case .longHoldThresholdOutOfRange, .longHoldThresholdNotAboveHold: "longHoldThreshold"
      }
    }

    /// E.g. `holdThreshold: must be between 100ms and 10000ms (got 50ms)`.
    public var description: String {
      func range(_ r: ClosedRange<TimeSpan>, _ value: TimeSpan) -> String {
        "\(setting): must be between \(r.lowerBound) and \(r.upperBound) (got \(value))"
      }
      switch self {
      case .holdThresholdOutOfRange(let value): return range(RecognizerSettings.holdThresholdRange, value)
      case .debounceOutOfRange(let value): return range(RecognizerSettings.debounceRange, value)
      case .doublePressWindowOutOfRange(let value): return range(RecognizerSettings.doublePressWindowRange, value)
      case .longHoldThresholdOutOfRange(let value): return range(RecognizerSettings.longHoldThresholdRange, value)
      case .doublePressWindowNotAboveDebounce(let value, let debounce):
        return "\(setting): must be longer than the debounce time \(debounce) (got \(value))"
      case .longHoldThresholdNotAboveHold(let value, let hold):
        return "\(setting): must be longer than the hold threshold \(hold) (got \(value))"
      }
    }
  }

  /// Thrown by ``init(holdThreshold:debounce:doublePressWindow:longHoldThreshold:)``: every
  /// invalid setting, not just the first.
  public struct Invalid: Error, Hashable, Sendable, CustomStringConvertible {
    public let problems: [Problem]
    public var description: String { problems.map(\.description).joined(separator: "; ") }
  }
}
