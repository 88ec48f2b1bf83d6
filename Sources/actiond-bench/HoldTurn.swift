// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CAllocCounter

/// The engine's share of a hold on the host: the key-down (`pressed`), the deadline (`held`,
/// `performing` and the command's request) and the release, each announcement encoded as
/// the wire line every subscriber gets. What the daemon adds around it (the devices, the
/// socket writes, posix_spawn) is measured in the VM. The configuration is the VM bench's:
/// one button whose hold toggles a stored value with a command.
enum HoldTurn {
  struct Figures {
    var holds: Int
    var keyDownMicros: Double
    var deadlineMicros: Double
    var deadlineMicrosP99: Double
    var releaseMicros: Double
    var allocationsPerHold: Double
    var bytesPerHold: Int
  }

  /// Carries out the engine's effects: encodes each announcement as the server does,
  /// records the commands, answers every save it waits for at once.
  struct Output {
    var armed: MonotonicInstant?
    var jobs: [ControlEngine.PerformJob] = []
    var bytes = 0

    mutating func handle(_ input: EngineInput, on engine: inout ControlEngine) {
      for effect in engine.handle(input) {
        switch effect {
        case .announce(let event): bytes &+= ServerMessage.event(event).line.count
        case .armTimer(let deadline): armed = deadline
        case .startCommand(let job): jobs.append(job)
        case .save(_, let token?): handle(.saved(token, nil), on: &engine)
        default: break
        }
      }
    }
  }

  static let configuration = """
    { buttons: [ { name: "action", key: "KEY_PROG1", holdThresholdMs: 100 } ],
      controls: [
        { kind: "org.actiond.bench.record", type: "toggle", displayName: "Bench",
          valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
          intent: { type: "exec", argv: ["/usr/local/bin/benchtool", "record", "actiond", "/tmp/rec.log"] },
          value: { type: "store", initial: false } } ],
      assignments: { action: { kind: "org.actiond.bench.record" } } }
    """

  static func measure(holds: Int) -> Figures? {
    guard let config = try? ConfigurationLoader.load(main: ConfigurationSource(name: "bench", text: configuration))
    else { return nil }
    var output = Output()
    var engine = ControlEngine(configuration: config)
    output.handle(.start, on: &engine)
    var t = MonotonicInstant(nanoseconds: 1_000_000_000_000)
    var down: [Int] = [], deadline: [Int] = [], up: [Int] = []
    down.reserveCapacity(holds)
    deadline.reserveCapacity(holds)
    up.reserveCapacity(holds)
    var allocations: UInt64 = 0
    var bytes = 0
    // One warm-up hold, then the measured ones.
    for hold in 0...holds {
      let a0 = alloc_counter_allocations()
      let b0 = output.bytes
      var s = now()
      output.handle(.key(button: "action", code: 148, value: 1, at: t), on: &engine)
      let d0 = now() - s
      guard let due = output.armed else { return nil }
      t = due
      s = now()
      output.handle(.deadline(at: t), on: &engine)
      let d1 = now() - s
      t = t + .milliseconds(30)
      s = now()
      output.handle(.key(button: "action", code: 148, value: 0, at: t), on: &engine)
      let d2 = now() - s
      // The command "ran": its outcome settles the toggle before the next press.
      for job in output.jobs { output.handle(.commandFinished(job: job.id, .succeeded), on: &engine) }
      guard output.jobs.count == 1 else { return nil }
      output.jobs.removeAll(keepingCapacity: true)
      t = t + .milliseconds(70)
      guard hold > 0 else { continue }
      down.append(d0)
      deadline.append(d1)
      up.append(d2)
      allocations += alloc_counter_allocations() - a0
      bytes += output.bytes - b0
    }
    func quantile(_ values: [Int], _ q: Double) -> Double {
      let sorted = values.sorted()
      return Double(sorted[Int(Double(sorted.count - 1) * q)]) / 1000
    }
    return Figures(
      holds: holds, keyDownMicros: quantile(down, 0.5), deadlineMicros: quantile(deadline, 0.5),
      deadlineMicrosP99: quantile(deadline, 0.99), releaseMicros: quantile(up, 0.5),
      allocationsPerHold: Double(allocations) / Double(holds), bytesPerHold: bytes / holds)
  }

  /// Nanoseconds since the first call, on the clock Bench.swift times the recognizer with.
  private static func now() -> Int {
    let t = origin.duration(to: .now).components
    return Int(t.seconds) * 1_000_000_000 + Int(t.attoseconds / 1_000_000_000)
  }
  private static let origin = ContinuousClock.now
}
