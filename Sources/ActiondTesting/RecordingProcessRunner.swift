// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// A ``ProcessRunning`` for tests: records requests; the test emits output and
/// completes runs when it wants to.
public final class RecordingProcessRunner: ProcessRunning {
  public struct Run {
    public let id: ProcessRunID
    public let request: ProcessRequest
    public let output: (ProcessOutputLine) -> Void
    public let completion: (ProcessResult) -> Void
    public internal(set) var completed: Bool
  }

  public private(set) var runs: [Run] = []
  private var next: UInt64 = 1
  /// Every request given to `prepare`, in order.
  public private(set) var preparedRequests: [ProcessRequest] = []
  /// What is prepared now: the last `prepare`'s request until a `run` of an equal
  /// request takes it or `discardPrepared` drops it.
  public private(set) var prepared: ProcessRequest?
  /// For each run, in order, whether it took the prepared request.
  public private(set) var ranPrepared: [Bool] = []
  /// How many times `terminateAll` was called (the runs go on until the test completes them).
  public private(set) var terminateAllCount = 0
  /// The runs the last `terminateAll` spared.
  public private(set) var lastSpared: Set<ProcessRunID> = []
  /// Called with each request as `run` records it (what else has happened by then).
  public var onRun: ((ProcessRequest) -> Void)?

  public init() {}

  /// Every request, in order.
  public var requests: [ProcessRequest] { runs.map(\.request) }
  /// Indexes of runs not completed yet.
  public var pending: [Int] { runs.indices.filter { !runs[$0].completed } }

  @discardableResult
  public func run(
    _ request: ProcessRequest, output: @escaping (ProcessOutputLine) -> Void,
    completion: @escaping (ProcessResult) -> Void
  ) -> ProcessRunID {
    let id = ProcessRunID(rawValue: next)
    next += 1
    runs.append(Run(id: id, request: request, output: output, completion: completion, completed: false))
    ranPrepared.append(prepared == request)
    if prepared == request { prepared = nil }
    onRun?(request)
    return id
  }

  public func prepare(_ request: ProcessRequest) {
    preparedRequests.append(request)
    prepared = request
  }

  public func discardPrepared() { prepared = nil }

  public var runningCount: Int { pending.count }

  public func terminateAll(sparing: Set<ProcessRunID>) {
    terminateAllCount += 1
    lastSpared = sparing
  }

  /// Completes every pending run as stopped, as the real runner's kill ends them.
  public func killAll() {
    for index in pending { complete(index, with: .stopped) }
  }

  /// Delivers an output line of run `index`.
  public func emit(_ line: ProcessOutputLine, run index: Int) {
    precondition(!runs[index].completed, "run \(index) already completed")
    runs[index].output(line)
  }

  /// Completes run `index` (default: the oldest pending one) with `outcome`.
  public func complete(_ index: Int? = nil, with outcome: ProcessOutcome, duration: TimeSpan = .zero) {
    guard let index = index ?? pending.first else { preconditionFailure("no pending run") }
    precondition(!runs[index].completed, "run \(index) already completed")
    runs[index].completed = true
    runs[index].completion(ProcessResult(outcome: outcome, duration: duration))
  }
}
