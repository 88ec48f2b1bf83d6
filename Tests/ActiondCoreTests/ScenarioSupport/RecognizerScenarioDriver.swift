// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// Drives ``ButtonRecognizers`` from a scenario, simulating the event loop's timer.
///
/// Header lines:
///
///     button NAME key=KEY [threshold=SPAN] [debounce=SPAN] [window=SPAN] [long=SPAN]
///            [gestures=double-press,long-hold]
///     timer-latency SPAN|unbounded     (default 0ms)
///     trace timers                     (also print every deadline input: `@T timer`)
///
/// `key` is a number or one of a few names (see `keyCodes`). Settings out of range
/// print `config-error NAME <problem>` lines and no step runs.
///
/// Steps (after `+SPAN` or `@SPAN`; the step time is when the input is delivered):
///
///     NAME down|up|repeat [code=KEY] [stamp=@SPAN]   key event (value 1, 0, 2)
///     NAME value=N [code=KEY] [stamp=@SPAN]          key event with a raw value
///     device-lost NAME
///     resync NAME up|down                            after SYN_DROPPED
///     appear NAME up|down                            device appeared with the key up/down
///     advance SPAN                                   time passes, timers fire
///     gestures NAME none|double-press,long-hold      the button's gestures change
///
/// A key event is stamped with its step time unless `stamp=` says otherwise (a read
/// that happens later than the kernel stamped the event). `code=` sends another key
/// code through the button's device (it must be ignored).
///
/// Timers, as the daemon's loop runs them: the one timer is armed for the earliest
/// deadline and fires `timer-latency` after it; the loop first drains the device, so
/// every step before the firing time is delivered before the deadline input, which
/// carries the firing time. With `unbounded` latency a deadline input is delivered
/// only at the end of an `advance` step. After the last step no timer fires.
///
/// Output lines, in the order produced; `@T` is the announcement's own stamp, which
/// for `held` is the deadline even when the input came later:
///
///     @T pressed NAME
///     @T released NAME held=SPAN
///     @T held NAME
///     @T long-held NAME
///     @T released-after-hold NAME held=SPAN [long-held]
///     @T double-pressed NAME gap=SPAN
///     @T released-after-double-press NAME held=SPAN
///     @T cancelled NAME reason=device-lost|resync-up|resync-down|reload
///                       [after-hold|after-long-hold|after-double-press]
///     @T anomaly NAME <kind>       (T: when the input was delivered)
enum RecognizerScenarioDriver: ScenarioDriver {
  /// Kernel timestamps are never near zero; starting at 1000 s catches code that
  /// confuses an instant with a span.
  static let origin = MonotonicInstant(nanoseconds: 1_000_000_000_000)

  /// A few evdev key codes by name, enough for scenarios (the configuration has the
  /// full table; this driver must not depend on it).
  static let keyCodes: [String: UInt16] = [
    "KEY_ENTER": 28, "KEY_A": 30, "KEY_B": 48, "KEY_POWER": 116, "KEY_PROG1": 148, "KEY_PROG2": 149,
    "BTN_0": 256, "BTN_1": 257, "BTN_2": 258,
  ]

  static func run(_ scenario: Scenario) throws(ScenarioError) -> [String] {
    var run = try Run(scenario)
    return try run.execute()
  }

  private struct Run {
    let file: String
    let steps: [Scenario.Step]
    var names: [String] = []
    var buttons: [ButtonRecognizers.Button] = []
    /// nil: unbounded (deadline inputs only at the end of `advance`).
    var latency: TimeSpan? = .zero
    var traceTimers = false
    var output: [String] = []
    var recognizers = ButtonRecognizers([])

    init(_ scenario: Scenario) throws(ScenarioError) {
      file = scenario.name
      steps = scenario.steps
      for line in scenario.header {
        switch line.words[0] {
        case "button": try configureButton(line)
        case "timer-latency":
          guard line.words.count == 2 else { throw error(line, "usage: timer-latency SPAN|unbounded") }
          latency = line.words[1] == "unbounded" ? nil : try span(line.words[1], line)
        case "trace":
          guard line.words == ["trace", "timers"] else { throw error(line, "usage: trace timers") }
          traceTimers = true
        default:
          throw error(line, "unknown header line '\(line.words[0])' (button, timer-latency, trace)")
        }
      }
      guard !names.isEmpty else { throw ScenarioError(file: file, line: nil, "no 'button' header line") }
      recognizers = ButtonRecognizers(buttons)
    }

    mutating func configureButton(_ line: Scenario.Line) throws(ScenarioError) {
      let positional = line.positional
      guard positional.count == 2 else {
        throw error(
          line, "usage: button NAME key=KEY [threshold=SPAN] [debounce=SPAN] [window=SPAN] [long=SPAN] [gestures=...]")
      }
      let name = positional[1]
      guard !names.contains(name) else { throw error(line, "button '\(name)' is defined twice") }
      var code: UInt16?
      var threshold = RecognizerSettings.defaultHoldThreshold
      var debounce = RecognizerSettings.defaultDebounce
      var window = RecognizerSettings.defaultDoublePressWindow
      var long: TimeSpan?
      var gestures: GestureSet = []
      for (key, value) in try line.options(in: file) {
        switch key {
        case "key": code = try keyCode(value, line)
        case "threshold": threshold = try span(value, line)
        case "debounce": debounce = try span(value, line)
        case "window": window = try span(value, line)
        case "long": long = try span(value, line)
        case "gestures": gestures = try gestureSet(value, line)
        default: throw error(line, "unknown button option '\(key)' (key, threshold, debounce, window, long, gestures)")
        }
      }
      guard let code else { throw error(line, "button '\(name)' needs key=KEY") }
      do {
        let settings = try RecognizerSettings(
          holdThreshold: threshold, debounce: debounce, doublePressWindow: window, longHoldThreshold: long)
        buttons.append(ButtonRecognizers.Button(keyCode: code, settings: settings, gestures: gestures))
      } catch {
        output += error.problems.map { "config-error \(name) \($0)" }
      }
      names.append(name)
    }

    mutating func execute() throws(ScenarioError) -> [String] {
      // Invalid settings: report them and run nothing, as the daemon would refuse
      // the configuration.
      guard output.isEmpty else { return output }
      for step in steps {
        let time = RecognizerScenarioDriver.origin + step.time
        switch step.kind {
        case .advance:
          fireTimers(upTo: time, unboundedFiresAt: time)
        case .input(let line):
          fireTimers(upTo: time, unboundedFiresAt: nil)
          try deliver(line, at: time)
        }
      }
      return output
    }

    /// Delivers every deadline input whose firing time (deadline + latency) is at or
    /// before `limit`. With unbounded latency, deadlines due by `limit` are delivered
    /// at `unboundedFiresAt` (the end of an `advance`) and never before an input.
    mutating func fireTimers(upTo limit: MonotonicInstant, unboundedFiresAt: MonotonicInstant?) {
      while let deadline = recognizers.nextDeadline {
        let firesAt: MonotonicInstant
        if let latency {
          firesAt = deadline.at + latency
          guard firesAt <= limit else { return }
        } else {
          guard let end = unboundedFiresAt, deadline.at <= end else { return }
          firesAt = end
        }
        if traceTimers { output.append("\(stamp(firesAt)) timer") }
        var produced: [(Int, PressRecognizer.Output)] = []
        recognizers.deadlineReached(at: firesAt) { produced.append(($0, $1)) }
        for (button, out) in produced { report(out, button: button, deliveredAt: firesAt) }
        // Settling removes or moves every due deadline past firesAt; guard anyway so
        // a recognizer bug shows up as a wrong output, not a hung test.
        if recognizers.nextDeadline == deadline {
          output.append("\(stamp(firesAt)) deadline-not-settled \(names[deadline.button])")
          return
        }
      }
    }

    mutating func deliver(_ line: Scenario.Line, at time: MonotonicInstant) throws(ScenarioError) {
      let words = line.positional
      switch words[0] {
      case "device-lost":
        guard words.count == 2, line.words.count == 2 else { throw error(line, "usage: device-lost NAME") }
        let button = try index(words[1], line)
        report(recognizers.deviceLost(button: button, at: time), button: button, deliveredAt: time)
      case "resync", "appear":
        guard words.count == 3, line.words.count == 3, words[2] == "up" || words[2] == "down" else {
          throw error(line, "usage: \(words[0]) NAME up|down")
        }
        let button = try index(words[1], line)
        let down = words[2] == "down"
        let out =
          words[0] == "resync"
          ? recognizers.resynchronized(button: button, keyDown: down, at: time)
          : recognizers.deviceAppeared(button: button, keyDown: down, at: time)
        report(out, button: button, deliveredAt: time)
      case "gestures":
        guard words.count == 3, line.words.count == 3 else {
          throw error(line, "usage: gestures NAME none|double-press,long-hold")
        }
        let button = try index(words[1], line)
        let set = try gestureSet(words[2], line)
        report(recognizers.setGestures(button: button, set), button: button, deliveredAt: time)
      default:
        try keyEvent(line, at: time)
      }
    }

    mutating func keyEvent(_ line: Scenario.Line, at time: MonotonicInstant) throws(ScenarioError) {
      let words = line.positional
      let button = try index(words[0], line)
      var value: Int32?
      switch words.count {
      case 1: break
      case 2:
        switch words[1] {
        case "down": value = 1
        case "up": value = 0
        case "repeat": value = 2
        default: throw error(line, "'\(words[1])' is not down, up or repeat")
        }
      default: throw error(line, "usage: NAME down|up|repeat|value=N [code=KEY] [stamp=@SPAN]")
      }
      var code = recognizers[button].keyCode
      var stamp = time
      for (key, text) in try line.options(in: file) {
        switch key {
        case "value":
          guard value == nil, let raw = Int32(text) else {
            throw error(line, "value=N needs an integer and no down/up/repeat")
          }
          value = raw
        case "code": code = try keyCode(text, line)
        case "stamp":
          guard text.hasPrefix("@") else { throw error(line, "stamp=@SPAN is an absolute offset") }
          stamp = RecognizerScenarioDriver.origin + (try span(String(text.dropFirst()), line))
        default: throw error(line, "unknown key event option '\(key)' (value, code, stamp)")
        }
      }
      guard let value else { throw error(line, "a key event needs down, up, repeat or value=N") }
      if let out = recognizers.keyEvent(button: button, code: code, value: value, at: stamp) {
        report(out, button: button, deliveredAt: time)
      }
    }

    mutating func report(_ out: PressRecognizer.Output, button: Int, deliveredAt: MonotonicInstant) {
      let name = names[button]
      for announcement in out.announcements {
        switch announcement {
        case .pressed(let at): output.append("\(stamp(at)) pressed \(name)")
        case .released(let at, let heldFor): output.append("\(stamp(at)) released \(name) held=\(heldFor)")
        case .held(let at, _): output.append("\(stamp(at)) held \(name)")
        case .longHeld(let at, _): output.append("\(stamp(at)) long-held \(name)")
        case .releasedAfterHold(let at, let heldFor, let longHeld):
          output.append("\(stamp(at)) released-after-hold \(name) held=\(heldFor)\(longHeld ? " long-held" : "")")
        case .doublePressed(let at, _, let gap): output.append("\(stamp(at)) double-pressed \(name) gap=\(gap)")
        case .releasedAfterDoublePress(let at, let heldFor):
          output.append("\(stamp(at)) released-after-double-press \(name) held=\(heldFor)")
        case .cancelled(let at, let reason, let stage):
          let after =
            switch stage {
            case .pending: ""
            case .held: " after-hold"
            case .longHeld: " after-long-hold"
            case .doublePressed: " after-double-press"
            }
          output.append("\(stamp(at)) cancelled \(name) reason=\(reason)\(after)")
        }
      }
      if let anomaly = out.anomaly {
        output.append("\(stamp(deliveredAt)) anomaly \(name) \(Self.kind(of: anomaly))")
      }
    }

    static func kind(of anomaly: RecognizerAnomaly) -> String {
      switch anomaly {
      case .invalidValue(let value, _): "invalid-value=\(value)"
      case .pressWhileDown: "press-while-down"
      case .releaseWhileUp: "release-while-up"
      case .repeatWhileUp: "repeat-while-up"
      case .timestampWentBackwards: "timestamp-went-backwards"
      case .releaseBeforeAnnouncedHold: "release-before-announced-hold"
      case .appearedDuringPress: "appeared-during-press"
      }
    }

    func stamp(_ instant: MonotonicInstant) -> String { "@\(instant - RecognizerScenarioDriver.origin)" }

    func gestureSet(_ text: String, _ line: Scenario.Line) throws(ScenarioError) -> GestureSet {
      guard text != "none" else { return [] }
      var set: GestureSet = []
      for name in text.split(separator: ",") {
        switch name {
        case "double-press": set.insert(.doublePress)
        case "long-hold": set.insert(.longHold)
        default: throw error(line, "unknown gesture '\(name)' (double-press, long-hold, or none)")
        }
      }
      return set
    }

    func index(_ name: String, _ line: Scenario.Line) throws(ScenarioError) -> Int {
      guard let index = names.firstIndex(of: name) else {
        throw error(line, "unknown button '\(name)' (buttons: \(names.joined(separator: ", ")))")
      }
      return index
    }

    func keyCode(_ text: String, _ line: Scenario.Line) throws(ScenarioError) -> UInt16 {
      if let number = UInt16(text) { return number }
      guard let code = RecognizerScenarioDriver.keyCodes[text] else {
        throw error(
          line,
          "unknown key '\(text)' (a number or one of \(RecognizerScenarioDriver.keyCodes.keys.sorted().joined(separator: ", ")))"
        )
      }
      return code
    }

    func span(_ text: String, _ line: Scenario.Line) throws(ScenarioError) -> TimeSpan {
      try ScenarioParser.parseSpan(text, file: file, line: line.number)
    }

    func error(_ line: Scenario.Line, _ message: String) -> ScenarioError {
      ScenarioError(file: file, line: line.number, message)
    }
  }
}
