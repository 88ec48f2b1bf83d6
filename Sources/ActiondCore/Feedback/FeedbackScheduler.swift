// SPDX-License-Identifier: Apache-2.0
/// The timing of one feedback output, as a value: moments (at a time) and value changes in,
/// what to write to the light now out, plus the next deadline (absolute, on the loop's
/// monotonic clock). Like the press recognizer it does no I/O and reads no clock.
///
/// ```
/// moment held at t, pattern [60]:     on ──60 ms── rest
/// moment failed, [80,80,80,80,80,80]:   on 80 off 80 on 80 off 80 on 80 off 80, rest
/// moment pressed, "on":               on ……………… until released / cancelled, rest
/// a new moment it shows:              the running pattern stops, the new one starts now
/// ```
///
/// *Rest* is what the light shows while no pattern runs: an indicator shows the value
/// (on or off); any other output is given back (``Write/release``: the adapter restores
/// the light's own state). On an output resting on, a pattern plays inverted (off where it
/// says on), so that it is seen. Nothing is written that the light already shows, and no
/// deadline is pending while no timed step runs: zero wake-ups when nothing is shown.
public struct FeedbackScheduler: Hashable, Sendable {
  /// What to do to the light now.
  public enum Write: Hashable, Sendable, CustomStringConvertible {
    case on, off
    /// Give the light back: restore what it showed before feedback took it.
    case release

    public var description: String {
      switch self {
      case .on: "on"
      case .off: "off"
      case .release: "release"
      }
    }
  }

  public let output: FeedbackOutput
  /// What the light shows now, as this scheduler last wrote it (``Write/release``: its own state).
  public private(set) var shown: Write = .release
  /// The indicator's value (false until one is reported).
  public private(set) var value = false
  private var running: Running?

  private struct Running: Hashable, Sendable {
    var pattern: FeedbackPattern
    /// The step shown now; `pattern.steps.count` once the steps are over (a sustained
    /// pattern then stays on).
    var index: Int
    /// When the step shown now ends (nil once the steps are over).
    var stepEnds: MonotonicInstant?
    var inverted: Bool
  }

  public init(output: FeedbackOutput) { self.output = output }

  /// What the light shows while no pattern runs.
  public var rest: Write { output.indicator ? (value ? .on : .off) : .release }

  /// Whether a pattern runs (a sustained one counts until the press ends).
  public var isShowing: Bool { running != nil }

  /// When ``deadlineReached(at:)`` must be called next; nil when nothing timed runs.
  public var nextDeadline: MonotonicInstant? { running?.stepEnds }

  /// A moment of the button at `time`. A moment this output shows starts its pattern
  /// (replacing the one running); the end of a press ends a sustained pattern; any other
  /// moment changes nothing.
  public mutating func moment(_ moment: EventName, at time: MonotonicInstant) -> Write? {
    guard let shown = moment.feedback else {
      guard moment.endsPress, let r = running, r.pattern.sustained else { return nil }
      running = nil
      return write(rest)
    }
    guard output.moments.contains(shown), let pattern = output.patterns[shown] else { return nil }
    running = Running(
      pattern: pattern, index: 0, stepEnds: pattern.steps.first.map { time + $0.duration }, inverted: rest == .on)
    return settle()
  }

  /// The value of the toggle assigned to the button's hold (nil: none, unknown or
  /// unavailable, shown as off). An indicator shows it at once when idle, else when the
  /// running pattern ends.
  public mutating func valueChanged(_ isOn: Bool?) -> Write? {
    guard output.indicator else { return nil }
    value = isOn ?? false
    return running == nil ? write(rest) : nil
  }

  /// The loop's timer fired at `now` (at or after ``nextDeadline``; a late timer skips
  /// the steps that are over, keeping the pattern's timing anchored to its start).
  public mutating func deadlineReached(at now: MonotonicInstant) -> Write? {
    guard var r = running, let ends = r.stepEnds, ends <= now else { return nil }
    var end = ends
    while end <= now {
      r.index += 1
      guard r.index < r.pattern.steps.count else { break }
      end = end + r.pattern.steps[r.index].duration
    }
    r.stepEnds = r.index < r.pattern.steps.count ? end : nil
    running = r
    return settle()
  }

  /// Feedback ends (the daemon stops, or a reload replaces the outputs): the light is given back.
  public mutating func end() -> Write? {
    running = nil
    return write(.release)
  }

  /// Writes what the running pattern (or rest) shows now.
  private mutating func settle() -> Write? {
    guard let r = running else { return write(rest) }
    let on: Bool
    if r.index < r.pattern.steps.count {
      on = r.pattern.steps[r.index].on
    } else if r.pattern.sustained {
      on = true
    } else {
      running = nil
      return write(rest)
    }
    return write(on != r.inverted ? .on : .off)
  }

  private mutating func write(_ new: Write) -> Write? {
    guard new != shown else { return nil }
    shown = new
    return new
  }
}

/// Every feedback output of a configuration, by button: one ``FeedbackScheduler`` each, one
/// deadline for them all (the loop arms one timer for it).
public struct FeedbackSchedulers: Hashable, Sendable {
  /// Output `output` (index into ``schedulers``) must show `write` now.
  public struct Action: Hashable, Sendable, CustomStringConvertible {
    public var output: Int
    public var write: FeedbackScheduler.Write
    public init(output: Int, write: FeedbackScheduler.Write) {
      self.output = output
      self.write = write
    }
    public var description: String { "\(output) \(write)" }
  }

  /// One per output: every button's outputs, in configuration order.
  public private(set) var schedulers: [FeedbackScheduler]
  /// The button of each scheduler.
  public let buttons: [String]

  /// The outputs of `configuration`'s buttons, in button then list order.
  public init(configuration: Configuration) {
    var schedulers: [FeedbackScheduler] = []
    var buttons: [String] = []
    for button in configuration.buttons {
      for output in configuration.feedback[button.name] ?? [] {
        schedulers.append(FeedbackScheduler(output: output))
        buttons.append(button.name)
      }
    }
    self.schedulers = schedulers
    self.buttons = buttons
  }

  /// The earliest deadline of any output.
  public var nextDeadline: MonotonicInstant? { schedulers.compactMap(\.nextDeadline).min() }

  /// A moment of `button` at `time`.
  public mutating func moment(_ moment: EventName, button: String, at time: MonotonicInstant) -> [Action] {
    update(button) { $0.moment(moment, at: time) }
  }

  /// The value of `button`'s hold control changed (see ``FeedbackScheduler/valueChanged(_:)``).
  public mutating func valueChanged(_ isOn: Bool?, button: String) -> [Action] {
    update(button) { $0.valueChanged(isOn) }
  }

  /// The timer fired at `now`.
  public mutating func deadlineReached(at now: MonotonicInstant) -> [Action] {
    update(nil) { $0.deadlineReached(at: now) }
  }

  /// Feedback ends: every light that was taken is given back.
  public mutating func end() -> [Action] { update(nil) { $0.end() } }

  private mutating func update(
    _ button: String?, _ body: (inout FeedbackScheduler) -> FeedbackScheduler.Write?
  )
    -> [Action]
  {
    var actions: [Action] = []
    for i in schedulers.indices where button == nil || buttons[i] == button {
      if let write = body(&schedulers[i]) { actions.append(Action(output: i, write: write)) }
    }
    return actions
  }
}
