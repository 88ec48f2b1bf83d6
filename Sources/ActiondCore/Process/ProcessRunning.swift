// SPDX-License-Identifier: Apache-2.0
/// What to run for an `exec` intent or value provider. Never through a shell: `argv` is
/// passed to execve as is.
public struct ProcessRequest: Sendable, Equatable {
  /// Program and arguments. A program without a slash is looked up in the PATH of
  /// `environment` (or a standard PATH when it has none).
  public var argv: [String]
  /// The complete environment of the command; nothing of the daemon's is inherited.
  public var environment: [String: String]
  /// Directory to run in; nil keeps the daemon's (`/` under systemd).
  public var workingDirectory: String?
  /// The account to run as (its uid, primary group and supplementary groups), already
  /// resolved: the runner never asks the name service; nil runs as the daemon's user.
  public var user: ProcessUser?
  /// After this the whole process group gets SIGTERM.
  public var timeout: TimeSpan
  /// After the SIGTERM of a timeout, how long until SIGKILL.
  public var killGracePeriod: TimeSpan
  public var outputLimits: ProcessOutputLimits

  public init(
    argv: [String], environment: [String: String] = [:], workingDirectory: String? = nil, user: ProcessUser? = nil,
    timeout: TimeSpan = .seconds(10), killGracePeriod: TimeSpan = .seconds(2),
    outputLimits: ProcessOutputLimits = ProcessOutputLimits()
  ) {
    self.argv = argv
    self.environment = environment
    self.workingDirectory = workingDirectory
    self.user = user
    self.timeout = timeout
    self.killGracePeriod = killGracePeriod
    self.outputLimits = outputLimits
  }
}

/// An account a command runs as, resolved from an exec spec's `user` when the
/// configuration is loaded (or reloaded), so that a hold never waits on the name service
/// (LDAP, sssd) on the daemon's loop.
public struct ProcessUser: Sendable, Equatable {
  /// The reference as configured (a name or a numeric uid), for messages.
  public var reference: String
  public var uid: UInt32
  /// The primary group.
  public var gid: UInt32
  /// Every group the command gets (the primary one included, as the group database says).
  public var groups: [UInt32]

  public init(reference: String, uid: UInt32, gid: UInt32, groups: [UInt32]) {
    self.reference = reference
    self.uid = uid
    self.gid = gid
    self.groups = groups
  }
}

/// Bounds on what a command's output may cost the daemon. Output beyond them is still
/// read (so the command never blocks on a full pipe) and discarded, and counted.
public struct ProcessOutputLimits: Sendable, Equatable {
  /// Longer lines are cut here and marked truncated.
  public var maxLineBytes: Int
  /// Lines forwarded per run (both streams together).
  public var maxLines: Int
  /// Bytes forwarded per run (both streams together).
  public var maxBytes: Int

  public init(maxLineBytes: Int = 4096, maxLines: Int = 200, maxBytes: Int = 64 * 1024) {
    self.maxLineBytes = maxLineBytes
    self.maxLines = maxLines
    self.maxBytes = maxBytes
  }
}

/// Which pipe a line came from.
public enum ProcessOutputStream: String, Sendable, Equatable {
  case stdout, stderr
}

/// One line of a command's output, without its newline.
public struct ProcessOutputLine: Sendable, Equatable {
  public var stream: ProcessOutputStream
  public var text: String
  /// The line was longer than ``ProcessOutputLimits/maxLineBytes`` and was cut.
  public var truncated: Bool
  public init(stream: ProcessOutputStream, text: String, truncated: Bool = false) {
    self.stream = stream
    self.text = text
    self.truncated = truncated
  }
}

/// Why a command could not be started: the step that failed and the errno.
public struct SpawnFailure: Error, Sendable, Equatable, CustomStringConvertible {
  /// "execve", "chdir", "setuid", "user", ...
  public var step: String
  /// The errno name ("ENOENT"), or "" when the failure is not a system call's.
  public var errnoName: String
  /// A human explanation ("No such file or directory").
  public var message: String

  public init(step: String, errnoName: String, message: String) {
    self.step = step
    self.errnoName = errnoName
    self.message = message
  }

  public var description: String {
    errnoName.isEmpty ? "\(step): \(message)" : "\(step): \(errnoName) (\(message))"
  }
}

/// How a run ended.
public enum ProcessOutcome: Sendable, Equatable, CustomStringConvertible {
  /// Exited by itself with this status (0 = success).
  case exited(Int32)
  /// Killed by this signal (not by our timeout).
  case signaled(Int32)
  /// Ran past its timeout; its process group was terminated.
  case timedOut
  /// actiond ended it before it ended by itself or timed out (it is stopping): its process
  /// group got SIGTERM, then SIGKILL after the grace period. Never reported as a timeout.
  case stopped
  /// Never started.
  case spawnFailed(SpawnFailure)

  /// Exit status 0.
  public var succeeded: Bool { self == .exited(0) }

  public var description: String {
    switch self {
    case .exited(let code): "exit status \(code)"
    case .signaled(let signal): "killed by signal \(signal)"
    case .timedOut: "timed out"
    case .stopped: "stopped by actiond"
    case .spawnFailed(let failure): "could not start: \(failure)"
    }
  }
}

/// The result of one run.
public struct ProcessResult: Sendable, Equatable {
  public var outcome: ProcessOutcome
  /// From spawn to the moment the result was known.
  public var duration: TimeSpan
  /// Lines handed to the output callback.
  public var forwardedLines: Int
  /// Lines dropped because the run's limits were reached.
  public var discardedLines: Int
  /// Bytes read but not forwarded (over the limits, or past a line's cut).
  public var discardedBytes: Int

  public init(
    outcome: ProcessOutcome, duration: TimeSpan = .zero, forwardedLines: Int = 0, discardedLines: Int = 0,
    discardedBytes: Int = 0
  ) {
    self.outcome = outcome
    self.duration = duration
    self.forwardedLines = forwardedLines
    self.discardedLines = discardedLines
    self.discardedBytes = discardedBytes
  }
}

/// Identifies one run of a ``ProcessRunning``.
public struct ProcessRunID: Hashable, Sendable {
  public let rawValue: UInt64
  public init(rawValue: UInt64) { self.rawValue = rawValue }
}

/// Runs commands asynchronously on the daemon's loop. Callbacks run on the loop thread,
/// never from inside `run` itself (even a spawn failure is reported on a later turn).
public protocol ProcessRunning: AnyObject {
  /// Starts `request` now; `output` gets each line (within the limits) while it runs,
  /// `completion` gets the result exactly once.
  @discardableResult
  func run(
    _ request: ProcessRequest, output: @escaping (ProcessOutputLine) -> Void,
    completion: @escaping (ProcessResult) -> Void
  ) -> ProcessRunID
  /// Readies what `request` needs before a process exists (the program's path, its
  /// argv and environment as C arrays, its output pipes and file actions), so that a
  /// later `run` of an equal request spends only the spawn itself: a hold's command is
  /// prepared at its key-down and started at its threshold. At most one request is kept
  /// prepared; a new one replaces it. A request that cannot be prepared is not: its
  /// `run` then does everything and reports any failure as usual.
  func prepare(_ request: ProcessRequest)
  /// Releases what ``prepare(_:)`` readied (the press ended without running it).
  func discardPrepared()
  /// Runs started and not completed yet.
  var runningCount: Int { get }
  /// Stops every run but those in `sparing` (a stop): SIGTERM to its group now, SIGKILL
  /// after each run's grace period. Completions still arrive, as ``ProcessOutcome/stopped``
  /// (a run that had already timed out stays ``ProcessOutcome/timedOut``).
  func terminateAll(sparing: Set<ProcessRunID>)
  /// Kills every run now, without grace (the end of a bounded stop). Completions still
  /// arrive, as ``ProcessOutcome/stopped``.
  func killAll()
}

extension ProcessRunning {
  /// Ends every run (see ``terminateAll(sparing:)``).
  public func terminateAll() { terminateAll(sparing: []) }
}

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
