// SPDX-License-Identifier: Apache-2.0
/// Feedback on the button itself: the moments of a press and a perform, shown on a light
/// the button's hardware already has (a keyboard's Caps Lock LED, a board's `ACT` LED).
/// This file is the data: which moments there are and what each looks like. The timing
/// lives in ``FeedbackScheduler``.

/// A moment a feedback output can show, by the name the configuration's `on` list and
/// `patterns` use.
public enum FeedbackMoment: String, Hashable, Sendable, CaseIterable, Comparable, CustomStringConvertible {
  /// The key went down (default: on while it stays down).
  case pressed
  /// A gesture was recognized: the hold threshold, the long-hold threshold, a double
  /// press's second press (default: one short tick, the haptic).
  case held
  /// The intent succeeded.
  case performed
  /// The intent failed.
  case failed
  /// The control was still performing: the hold did nothing.
  case busy

  public var description: String { rawValue }

  public static func < (a: FeedbackMoment, b: FeedbackMoment) -> Bool {
    allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
  }
}

/// The moments of a button's press are the protocol's events, by their names
/// (``EventName``: `pressed`, `released`, `held`, `long-held`, `double-pressed`, ...; one
/// vocabulary for the recognizer, the engine, the feedback, MQTT and docs/protocol.md).
/// The engine reports each to the button's feedback in the order it announces them
/// (``EngineEffect/feedback(_:button:)``), with a perform's outcome (`performed`,
/// `failed`, `busy`) when a button asked for it.
extension EventName {
  /// The feedback moment it shows; nil for the end of a press (which only ends a pattern
  /// that lasts while the key is down) and for what is no moment of a button.
  public var feedback: FeedbackMoment? {
    switch self {
    case .pressed: .pressed
    case .held, .longHeld, .doublePressed: .held
    case .performed: .performed
    case .failed: .failed
    case .busy: .busy
    default: nil
    }
  }

  /// Whether it ends a press: the key went up (after a short press, a hold or a double
  /// press), or the press ended without a release of the user's (device lost, reload,
  /// resync; announced or not).
  public var endsPress: Bool {
    switch self {
    case .released, .releasedAfterHold, .releasedAfterDoublePress, .cancelled: true
    default: false
    }
  }
}

/// How one moment looks: steps of on and off, each for a duration, and whether the light
/// then stays as the last step left it until the press ends (``sustained``).
///
/// In the configuration a pattern is `"on"` (on while the key is down) or a list of
/// milliseconds alternating on and off, starting with on: `[80, 80, 80, 80, 80, 80]` is
/// three blinks of 80 ms.
public struct FeedbackPattern: Hashable, Sendable, CustomStringConvertible {
  /// One stretch of the pattern.
  public struct Step: Hashable, Sendable {
    public var on: Bool
    public var duration: TimeSpan
    public init(on: Bool, duration: TimeSpan) {
      self.on = on
      self.duration = duration
    }
  }

  /// The steps, in order; every duration is positive.
  public var steps: [Step]
  /// After the steps the light stays on until the press ends (a release or a cancel) or
  /// another moment replaces the pattern.
  public var sustained: Bool

  public init(steps: [Step], sustained: Bool = false) {
    self.steps = steps
    self.sustained = sustained
  }

  /// Alternating on and off durations, starting with on (the configuration's form).
  public init(alternatingMilliseconds ms: [Int64]) {
    self.init(
      steps: ms.enumerated().map { Step(on: $0.offset.isMultiple(of: 2), duration: .milliseconds($0.element)) })
  }

  /// On while the key is down: `"on"` in the configuration.
  public static let whileDown = FeedbackPattern(steps: [], sustained: true)

  /// How long the steps take (a sustained pattern lasts longer: until the press ends).
  public var duration: TimeSpan { steps.reduce(.zero) { $0 + $1.duration } }

  /// The configuration's spelling: `"on"` or the millisecond list.
  public var description: String {
    if sustained && steps.isEmpty { return "\"on\"" }
    return "[" + steps.map { String($0.duration.milliseconds) }.joined(separator: ", ") + "]"
  }

  /// Every moment's default: pressed on while down, held one 60 ms tick, performed one
  /// 300 ms blink, failed three 80 ms blinks, busy two 40 ms blinks.
  public static let defaults: [FeedbackMoment: FeedbackPattern] = [
    .pressed: .whileDown,
    .held: FeedbackPattern(alternatingMilliseconds: [60]),
    .performed: FeedbackPattern(alternatingMilliseconds: [300]),
    .failed: FeedbackPattern(alternatingMilliseconds: [80, 80, 80, 80, 80, 80]),
    .busy: FeedbackPattern(alternatingMilliseconds: [40, 40, 40]),
  ]

  /// The longest list a configuration may give, and the range of each duration.
  public static let maximumSteps = 32
  public static let stepRangeMs: ClosedRange<Int64> = 1...10_000
}
