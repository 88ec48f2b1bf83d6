// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import Foundation

/// Drives the whole ``ControlEngine`` (recognizers, assignments, hints, performs,
/// values) from a scenario: what a button press makes the daemon announce.
///
/// Header lines:
///
///     config FILE            a configuration under Scenarios/engine/configs/ (JSON5),
///                            loaded through ConfigurationLoader like the daemon does
///     timer-latency SPAN     how late the engine's timer fires (default 0ms)
///     trace effects          also print what the engine asks of the adapter
///     trace log              also print the engine's log lines of level notice
///
/// Steps:
///
///     BUTTON down|up|repeat [stamp=@SPAN]      key event on the button's key
///     appear BUTTON up|down / lost BUTTON / resync BUTTON up|down
///     intent ok | intent fail WORDS...         the oldest running intent finishes
///     value on|off|unavailable                 the oldest pending value read answers
///     perform BUTTON | perform-kind KIND       socket `perform`
///     press BUTTON [hold=SPAN | double]        socket `press` (a virtual press; short by default)
///     set KIND on|off                          socket `set`
///     assign BUTTON KIND [NAME=VALUE...]       socket `assign`
///     reload [KIND]                            socket `reload`
///     apply FILE                               SIGHUP: configs/FILE replaces the configuration
///     provider connect|disconnect KIND
///
/// Output: one line per announcement, `@T event key=value ...` with T the virtual time
/// when it was made; socket replies as `@T reply ok|CODE ...`; with `trace effects`,
/// `@T run KIND value=…`, `@T read KIND`, `@T persist …`.
enum EngineScenarioDriver: ScenarioDriver {
  static let origin = MonotonicInstant(nanoseconds: 2_000_000_000_000)

  static func run(_ scenario: Scenario) throws(ScenarioError) -> [String] {
    let recorder = Recorder()
    var configFile: String?
    var latency = TimeSpan.zero
    for line in scenario.header {
      switch line.words.first {
      case "config" where line.words.count == 2: configFile = line.words[1]
      case "timer-latency" where line.words.count == 2:
        latency = try ScenarioParser.parseSpan(line.words[1], file: scenario.name, line: line.number)
      case "trace" where line.words == ["trace", "effects"]: recorder.traceEffects = true
      case "trace" where line.words == ["trace", "log"]: recorder.traceLog = true
      // Each run's exec argv, and the engine's notices (what the log says in words).
      case "trace" where line.words == ["trace", "commands"]:
        recorder.traceEffects = true
        recorder.traceCommands = true
      default: throw ScenarioError(file: scenario.name, line: line.number, "unknown header '\(line)'")
      }
    }
    guard let configFile else { throw ScenarioError(file: scenario.name, line: nil, "missing 'config FILE' header") }
    var configuration = try loadConfiguration(configFile, scenario: scenario.name)
    let engine = EngineHarness(configuration: configuration, output: recorder)
    recorder.now = origin
    engine.start()

    func fireTimers(until limit: MonotonicInstant) {
      while let deadline = recorder.armed, deadline + latency <= limit {
        recorder.now = deadline + latency
        recorder.armed = nil  // a timer that fired is disarmed until the engine arms it again
        engine.deadlineReached(at: recorder.now)
      }
    }
    func buttonIndex(_ name: String, _ line: Scenario.Line) throws(ScenarioError) -> Int {
      guard let i = configuration.buttons.firstIndex(where: { $0.name == name }) else {
        throw ScenarioError(file: scenario.name, line: line.number, "no button '\(name)' in the configuration")
      }
      return i
    }
    func reply(_ result: Result<ControlSnapshot, ProtocolError>) {
      switch result {
      case .success(let c): recorder.emit("reply ok kind=\(c.kind) \(describe(c))")
      case .failure(let e): recorder.emit("reply \(e.code) \(quote(e.message))")
      }
    }

    for step in scenario.steps {
      let time = origin + step.time
      fireTimers(until: time)
      recorder.now = time
      guard case .input(let line) = step.kind else { continue }
      let w = line.positional
      let fail = { (m: String) in ScenarioError(file: scenario.name, line: line.number, m) }
      switch w.first ?? "" {
      case "appear", "resync":
        guard w.count == 3, ["up", "down"].contains(w[2]) else { throw fail("usage: \(w[0]) BUTTON up|down") }
        let b = try buttonIndex(w[1], line)
        if w[0] == "appear" {
          engine.deviceBound(button: w[1], device: "/dev/input/event\(b)", keyDown: w[2] == "down", at: time)
        } else {
          engine.resynchronized(button: w[1], keyDown: w[2] == "down", at: time)
        }
      case "lost":
        guard w.count == 2 else { throw fail("usage: lost BUTTON") }
        let b = try buttonIndex(w[1], line)
        engine.deviceUnbound(button: w[1], device: "/dev/input/event\(b)", at: time)
      case "intent":
        guard let job = recorder.runs.first else { throw fail("no intent is running") }
        recorder.runs.removeFirst()
        if w.count == 2, w[1] == "ok" {
          engine.performFinished(job: job.id, .succeeded)
        } else if w.count == 2, w[1] == "stopped" {
          // As the daemon reports a command its stop ended (EffectInterpreter.performOutcome).
          engine.performFinished(
            job: job.id, .failed(code: .stopped, reason: "the command was stopped by actiond (it is stopping)"))
        } else if w.count >= 2, w[1] == "fail" {
          engine.performFinished(job: job.id, .failed(code: .failed, reason: w.dropFirst(2).joined(separator: " ")))
        } else {
          throw fail("usage: intent ok | intent stopped | intent fail REASON")
        }
      case "value":
        guard let job = recorder.reads.first else { throw fail("no value read is pending") }
        recorder.reads.removeFirst()
        switch w.count == 2 ? w[1] : "" {
        case "on": engine.valueRead(job: job.id, .on)
        case "off": engine.valueRead(job: job.id, .off)
        case "unavailable": engine.valueRead(job: job.id, .unavailable(reason: "provider failed"))
        default: throw fail("usage: value on|off|unavailable")
        }
      case "perform":
        guard w.count == 2 else { throw fail("usage: perform BUTTON") }
        guard let instance = engine.assignment(of: w[1]) else {
          recorder.emit("reply unassigned")
          continue
        }
        engine.perform(instance, button: nil, source: .socket, completion: reply)
      case "perform-kind":
        guard w.count == 2 else { throw fail("usage: perform-kind KIND") }
        do {
          engine.perform(
            try engine.instance(kind: w[1], configuration: nil), button: nil, source: .socket, completion: reply)
        } catch { reply(.failure(error)) }
      case "press":
        let usage = "usage: press BUTTON [hold=SPAN | double]"
        guard w.count == 2 || (w.count == 3 && w[2] == "double") else { throw fail(usage) }
        _ = try buttonIndex(w[1], line)
        var press = w.count == 3 ? VirtualPress.double : .short
        for option in try line.options(in: scenario.name) {
          guard option.key == "hold", w.count == 2 else { throw fail(usage) }
          press = .hold(try ScenarioParser.parseSpan(option.value, file: scenario.name, line: line.number))
        }
        switch engine.simulatePress(button: w[1], press, at: time) {
        case .success: break
        case .failure(let refusal): recorder.emit("reply \(refusal)")
        }
      case "set":
        guard w.count == 3, ["on", "off"].contains(w[2]) else { throw fail("usage: set KIND on|off") }
        do {
          engine.set(try engine.instance(kind: w[1], configuration: nil), to: w[2] == "on", completion: reply)
        } catch { reply(.failure(error)) }
      case "assign":
        guard w.count == 3 else { throw fail("usage: assign BUTTON KIND [NAME=VALUE...]") }
        var object = JSONObject()
        for option in try line.options(in: scenario.name) {
          object[option.key] = Int64(option.value).map(JSONValue.integer) ?? .string(option.value)
        }
        do {
          let snap = try engine.assign(try engine.instance(kind: w[2], configuration: object), to: w[1])
          reply(.success(snap))
        } catch { reply(.failure(error)) }
      case "stop":
        // The daemon's stop (SIGTERM): every momentary toggle held on goes off.
        engine.endMomentaryHolds()
      case "reload":
        engine.reload(kind: w.count > 1 ? w[1] : nil)
      case "apply":
        guard w.count == 2 else { throw fail("usage: apply FILE") }
        configuration = try loadConfiguration(w[1], scenario: scenario.name)
        engine.apply(configuration: configuration, at: time)
      case "provider":
        guard w.count == 3 else { throw fail("usage: provider connect|disconnect KIND") }
        // One client per kind, so a disconnect ends only that kind's provider.
        let client = ControlEngine.ProviderClient(rawValue: UInt64(configuration.controls.count { $0.kind < w[2] } + 1))
        if w[1] == "connect" {
          do {
            try engine.registerProvider(client, kinds: [w[2]])
          } catch {
            throw fail("provider connect \(w[2]): \(error)")
          }
        } else {
          engine.providerDisconnected(client)
        }
      default:
        guard w.count == 2, ["down", "up", "repeat"].contains(w[1]) else { throw fail("unknown step '\(line)'") }
        let b = try buttonIndex(w[0], line)
        var stamp = time
        for option in try line.options(in: scenario.name) {
          guard option.key == "stamp", option.value.hasPrefix("@") else { throw fail("unknown option \(option.key)") }
          stamp =
            origin
            + (try ScenarioParser.parseSpan(String(option.value.dropFirst()), file: scenario.name, line: line.number))
        }
        let value: Int32 = w[1] == "down" ? 1 : w[1] == "up" ? 0 : 2
        engine.keyEvent(button: w[0], code: configuration.buttons[b].keyCode, value: value, at: stamp)
      }
    }
    return recorder.lines
  }

  static func loadConfiguration(_ file: String, scenario: String) throws(ScenarioError) -> Configuration {
    guard
      let url = ScenarioRunner.directoryURL("engine")?.appendingPathComponent("configs").appendingPathComponent(file),
      let text = try? String(contentsOf: url, encoding: .utf8)
    else { throw ScenarioError(file: scenario, line: nil, "cannot read configs/\(file)") }
    do {
      return try ConfigurationLoader.load(main: ConfigurationSource(name: file, text: text))
    } catch {
      throw ScenarioError(file: scenario, line: nil, "configs/\(file) is invalid:\n\(error)")
    }
  }

  static func quote(_ s: String) -> String { JSONEncoding.quoted(s) }

  static func describe(_ c: ControlSnapshot) -> String {
    var parts: [String] = []
    if c.type == .toggle { parts.append("value=\(c.value.map { $0 ? "on" : "off" } ?? "null")") }
    if let t = c.valueText { parts.append("text=\(quote(t))") }
    parts.append("hint=\(quote(c.hint))")
    if !c.available { parts.append("unavailable") }
    return parts.joined(separator: " ")
  }

  final class Recorder: EngineTestOutput {
    var now = MonotonicInstant.zero
    var lines: [String] = []
    var armed: MonotonicInstant?
    var runs: [ControlEngine.PerformJob] = []
    var reads: [ControlEngine.ValueReadJob] = []
    var traceEffects = false
    var traceLog = false
    var traceCommands = false

    func emit(_ text: String) { lines.append("@\(now - EngineScenarioDriver.origin) \(text)") }

    func announce(_ event: Event) {
      switch event {
      case .pressed(let b, _, let hint, let hints, let time, let threshold):
        emit(
          "pressed \(b) hint=\(quote(hint ?? "")) deadline=@\(time + threshold - EngineScenarioDriver.origin)"
            + gestureHints(hints))
      case .released(let b, _, let hint, let hints, _, let d):
        emit("released \(b) hint=\(quote(hint ?? "")) held=\(d)" + gestureHints(hints))
      case .releasedAfterHold(let b, _, let t, let d, let long):
        emit("released-after-hold \(b) at=@\(t - EngineScenarioDriver.origin) held=\(d)\(long ? " long-held" : "")")
      case .held(let b, let k, let t, let longHold):
        emit(
          "held \(b) kind=\(k ?? "none") at=@\(t - EngineScenarioDriver.origin)"
            + (longHold.map {
              " long-hold=\($0.kind) long-hint=\(quote($0.hint)) long-deadline=@\($0.deadline - EngineScenarioDriver.origin)"
            } ?? ""))
      case .longHeld(let b, let k, let t):
        emit("long-held \(b) kind=\(k ?? "none") at=@\(t - EngineScenarioDriver.origin)")
      case .doublePressed(let b, let k, let t, let gap):
        emit("double-pressed \(b) kind=\(k ?? "none") at=@\(t - EngineScenarioDriver.origin) gap=\(gap)")
      case .releasedAfterDoublePress(let b, _, let t, let d):
        emit("released-after-double-press \(b) at=@\(t - EngineScenarioDriver.origin) held=\(d)")
      case .performing(let k, let b, let s, let g, let v):
        emit(
          "performing \(k) \(b.map { "button=\($0)" } ?? "source=\(s)")\(gesture(g))"
            + "\(v.map { $0 ? " value=on" : " value=off" } ?? "")")
      case .performed(_, _, let g, let c): emit("performed \(c.kind)\(gesture(g)) \(describe(c))")
      case .failed(let k, _, _, let g, let e): emit("failed \(k)\(gesture(g)) \(e.code) \(quote(e.message))")
      case .busy(let k, let b, _, let g): emit("busy \(k)\(b.map { " button=\($0)" } ?? "")\(gesture(g))")
      case .cancelled(let b, _, let r): emit("cancelled \(b) reason=\(r)")
      case .state(let c, let buttons):
        emit("state \(c.kind) \(describe(c))\(buttons.isEmpty ? "" : " buttons=\(buttons.joined(separator: ","))")")
      case .assigned(let b, let g, let m, let c):
        // A plain hold reads as before gestures, so existing scenarios stay as written.
        let gesture = g == .hold ? (m ? " gesture=hold momentary" : "") : " gesture=\(g)"
        emit("assigned \(b)\(gesture) \(c.map { "kind=\($0.kind) \(describe($0))" } ?? "none")")
      case .deviceAdded, .deviceRemoved, .configReloaded: emit("\(event.name.rawValue)")
      }
    }
    /// ` gesture=doublePress`; nothing for the hold (the gesture of every scenario
    /// written before there were others) and for socket performs.
    func gesture(_ g: Gesture?) -> String {
      guard let g, g != .hold else { return "" }
      return " gesture=\(g.rawValue)"
    }
    /// ` hints=[hold:Hold to Start|doublePress:Press twice to Mute]` when a gesture other
    /// than the hold has a hint (the line's `hint` says everything otherwise).
    func gestureHints(_ hints: [GestureHint]) -> String {
      guard hints.contains(where: { $0.gesture != .hold }) else { return "" }
      return " hints=[" + hints.map { "\($0.gesture.rawValue):\($0.hint)" }.joined(separator: "|") + "]"
    }
    func log(_ level: LogLevel, _ message: String) {
      if traceLog && level == .notice { emit("log \(level) \(quote(message))") }
      if level >= .warning && message.contains("bug") { emit("bug \(quote(message))") }
      if traceCommands && level == .notice { emit("notice \(quote(message))") }
    }
    func armTimer(at deadline: MonotonicInstant?) { armed = deadline }
    func runIntent(_ job: ControlEngine.PerformJob) {
      runs.append(job)
      if traceEffects {
        emit(
          "run \(job.kind) intent=\(job.intent.typeName)\(job.requestedValue.map { $0 ? " value=1" : " value=0" } ?? "")"
            + (traceCommands ? argv(job.intent) : ""))
      }
    }
    func argv(_ intent: IntentSpec) -> String {
      guard case .exec(let spec) = intent else { return "" }
      return " argv=\(quote(spec.argv.joined(separator: " ")))"
    }
    func readValue(_ job: ControlEngine.ValueReadJob) {
      reads.append(job)
      if traceEffects { emit("read \(job.instance.id) provider=\(job.provider.typeName)") }
    }
    func persist(_ state: StateSnapshot) {
      if traceEffects {
        let values = state.values.keys.sorted().map { "\($0)=\(state.values[$0]! ? "on" : "off")" }
        let assigned = state.assignments.keys.sorted().flatMap { button in
          Gesture.allCases.compactMap { g in
            state.assignments[button]![g].map { "\(button)\(g == .hold ? "" : ".\(g)")->\($0.kind)" }
          }
        }
        emit("persist values=[\(values.joined(separator: ","))] assignments=[\(assigned.joined(separator: ","))]")
      }
    }
  }
}
