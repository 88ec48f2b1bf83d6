// SPDX-License-Identifier: Apache-2.0
// actiond-bench: throughput and heap allocations of the press/hold recognizer on
// the host. A benchmark, not a test: it measures and prints, it asserts nothing
// about speed. `make bench-core` builds it in release mode and runs it.
//
//   actiond-bench [--runs N] [--events N] [--holds N] [--json]
//
// The event stream is a realistic, seeded mix for three buttons: short presses and
// holds around the threshold, kernel-style autorepeat, other keys of the same
// devices, and the shared hold timer delivered the way the loop does it. Every run
// replays the stream with later timestamps, so the recognizers stay in steady
// state (monotonic time, no anomalies). Then the engine's share of a hold (HoldTurn.swift):
// the time of its key-down, deadline and release, with the announcements encoded.
import ActiondCore
import CAllocCounter
import Glibc

@main
struct Bench {
  static func main() {
    var options = Options()
    do { options = try Options.parse(Array(CommandLine.arguments.dropFirst())) } catch {
      print("actiond-bench: \(error)\nusage: actiond-bench [--runs N] [--events N] [--holds N] [--json]")
      exitWithFailure()
    }
    guard allocationCounterWorks() else {
      print("actiond-bench: the allocation counter does not see Swift allocations; numbers would be meaningless")
      exitWithFailure()
    }

    let stream = EventStream(count: options.events, seed: 0x6265_6E63_68)
    var recognizers = ButtonRecognizers(
      stream.thresholds.enumerated().map { index, threshold in
        // Thresholds come from the valid range (see EventStream), so this cannot throw.
        try! ButtonRecognizers.Button(
          keyCode: EventStream.keyCodes[index], settings: RecognizerSettings(holdThreshold: threshold))
      })
    var sink = Sink()

    // Warm-up: first-touch page faults, lazy runtime metadata, branch predictors.
    stream.replay(into: &recognizers, run: 0, sink: &sink)
    sink = Sink()

    let clock = ContinuousClock()
    var rates: [Double] = []
    rates.reserveCapacity(options.runs)
    let allocationsBefore = alloc_counter_allocations()
    for run in 1...options.runs {
      let start = clock.now
      stream.replay(into: &recognizers, run: run, sink: &sink)
      let elapsed = start.duration(to: clock.now)
      let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
      rates.append(Double(stream.events.count) / seconds)
    }
    let allocations = alloc_counter_allocations() - allocationsBefore
    let totalEvents = UInt64(stream.events.count) * UInt64(options.runs)

    rates.sort()
    let median = rates[rates.count / 2]
    let perEvent = Double(allocations) / Double(totalEvents)
    if sink.anomalies > 0 {
      print("actiond-bench: \(sink.anomalies) anomalies in the replayed stream: the benchmark itself is broken")
      exitWithFailure()
    }
    guard let turn = HoldTurn.measure(holds: options.holds) else {
      print("actiond-bench: the hold benchmark's engine did not arm, perform or settle as a hold should: it is broken")
      exitWithFailure()
    }
    if options.json {
      let report: JSONValue = [
        "benchmark": "recognizer",
        "buttons": .integer(Int64(stream.thresholds.count)),
        "eventsPerRun": .integer(Int64(stream.events.count)),
        "runs": .integer(Int64(options.runs)),
        "eventsPerSecondMedian": .double(median.rounded()),
        "eventsPerSecondMin": .double(rates[0].rounded()),
        "eventsPerSecondMax": .double(rates[rates.count - 1].rounded()),
        "allocations": .integer(Int64(allocations)),
        "allocationsPerEvent": .double(perEvent),
        "announcementsPerRun": .integer(Int64(sink.announcements / UInt64(options.runs))),
        "holdTurn": [
          "holds": .integer(Int64(turn.holds)),
          "keyDownMicrosP50": .double(turn.keyDownMicros),
          "deadlineMicrosP50": .double(turn.deadlineMicros),
          "deadlineMicrosP99": .double(turn.deadlineMicrosP99),
          "releaseMicrosP50": .double(turn.releaseMicros),
          "allocationsPerHold": .double(turn.allocationsPerHold),
          "bytesPerHold": .integer(Int64(turn.bytesPerHold)),
        ],
      ]
      print(JSONEncoding.compact(report))
    } else {
      print(
        """
        recognizer: \(stream.thresholds.count) buttons, \(stream.events.count) key events per run, \
        \(options.runs) runs (after 1 warm-up run)
          throughput: median \(millions(median)) M events/s (min \(millions(rates[0])), \
        max \(millions(rates[rates.count - 1])))
          heap allocations in steady state: \(allocations) over \(totalEvents) events = \(perEvent) per event
          announcements per run: \(sink.announcements / UInt64(options.runs)) \
        (held: \(sink.held / UInt64(options.runs)))
        hold turn (engine + wire encoding): \(turn.holds) holds
          key-down p50 \(turn.keyDownMicros) µs, deadline p50 \(turn.deadlineMicros) µs \
        (p99 \(turn.deadlineMicrosP99)), release p50 \(turn.releaseMicros) µs
          heap allocations per hold: \(turn.allocationsPerHold); wire bytes per hold: \(turn.bytesPerHold)
        """)
    }
  }

  /// Allocates through the Swift runtime and checks the counter saw it.
  static func allocationCounterWorks() -> Bool {
    let before = alloc_counter_allocations()
    let buffer = [UInt8](repeating: 1, count: 64 + CommandLine.arguments.count)
    blackHole(buffer)
    return alloc_counter_allocations() > before
  }

  static func millions(_ rate: Double) -> String {
    let tenths = Int((rate / 100_000).rounded())
    return "\(tenths / 10).\(tenths % 10)"
  }

  static func exitWithFailure() -> Never { exit(1) }
}

/// Keeps a value alive and opaque to the optimizer.
@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

struct Options {
  var runs = 11
  var events = 2_000_000
  var holds = 20_000
  var json = false

  struct Invalid: Error, CustomStringConvertible { var description: String }

  static func parse(_ arguments: [String]) throws(Invalid) -> Options {
    var options = Options()
    var index = 0
    func number(after flag: String) throws(Invalid) -> Int {
      index += 1
      guard index < arguments.count, let value = Int(arguments[index]), value > 0 else {
        throw Invalid(description: "\(flag) needs a positive integer")
      }
      return value
    }
    while index < arguments.count {
      switch arguments[index] {
      case "--runs": options.runs = try number(after: "--runs")
      case "--events": options.events = try number(after: "--events")
      case "--holds": options.holds = try number(after: "--holds")
      case "--json": options.json = true
      default: throw Invalid(description: "unknown argument '\(arguments[index])'")
      }
      index += 1
    }
    return options
  }
}

/// Counts what the recognizers produced, so none of the work can be optimized away.
struct Sink {
  var announcements: UInt64 = 0
  var held: UInt64 = 0
  var anomalies: UInt64 = 0
  var checksum: Int64 = 0

  @inline(__always) mutating func take(_ output: PressRecognizer.Output) {
    for announcement in output.announcements {
      announcements &+= 1
      checksum &+= announcement.instant.nanoseconds
      if case .held = announcement { held &+= 1 }
    }
    if output.anomaly != nil { anomalies &+= 1 }
  }
}

/// A pre-generated, seeded stream of key events for three buttons.
struct EventStream {
  struct Event {
    var button: Int32
    var code: UInt16
    var value: Int32
    var time: Int64  // nanoseconds from the start of the stream
  }

  static let keyCodes: [UInt16] = [148, 256, 257]
  static let otherKey: UInt16 = 30

  let thresholds: [TimeSpan] = [.milliseconds(600), .milliseconds(300), .milliseconds(1_000)]
  var events: [Event] = []
  /// How far apart two replays are, so time never goes back.
  var span: Int64 = 0

  init(count: Int, seed: UInt64) {
    var rng = SplitMix64(seed: seed)
    events.reserveCapacity(count)
    var now: Int64 = 0
    while events.count < count {
      let button = Int(rng.next() % 3)
      let code = Self.keyCodes[button]
      let threshold = thresholds[button].nanoseconds
      // Lengths from a tap to twice the threshold; gaps from a quick double press up.
      let length = Int64(rng.next() % UInt64(2 * threshold))
      events.append(Event(button: Int32(button), code: code, value: 1, time: now))
      var repeatAt = now + 250_000_000
      while repeatAt < now + length {
        events.append(Event(button: Int32(button), code: code, value: 2, time: repeatAt))
        repeatAt += 33_000_000
      }
      if rng.next() % 4 == 0 {
        events.append(Event(button: Int32(button), code: Self.otherKey, value: 1, time: now + length / 2))
        events.append(Event(button: Int32(button), code: Self.otherKey, value: 0, time: now + length / 2))
      }
      now += length
      events.append(Event(button: Int32(button), code: code, value: 0, time: now))
      now += 10_000_000 + Int64(rng.next() % 500_000_000)
    }
    span = now + 1_000_000_000
  }

  /// Feeds the whole stream once, stamped `run` spans later, delivering the shared
  /// hold timer whenever the next event is stamped past its deadline (the loop
  /// drains the device first, then delivers the deadline at its firing time).
  func replay(into recognizers: inout ButtonRecognizers, run: Int, sink: inout Sink) {
    let offset = Int64(run) &* span &+ 1_000_000_000_000
    events.withUnsafeBufferPointer { events in
      for event in events {
        let time = MonotonicInstant(nanoseconds: event.time &+ offset)
        if let deadline = recognizers.nextDeadline, deadline.at <= time {
          recognizers.deadlineReached(at: deadline.at) { _, output in sink.take(output) }
        }
        if let output = recognizers.keyEvent(button: Int(event.button), code: event.code, value: event.value, at: time)
        {
          sink.take(output)
        }
      }
    }
    // Settle the last press so the next run starts from idle buttons.
    while let deadline = recognizers.nextDeadline {
      recognizers.deadlineReached(at: deadline.at) { _, output in sink.take(output) }
    }
  }
}
