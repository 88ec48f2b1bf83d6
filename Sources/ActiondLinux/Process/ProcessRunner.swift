import ActiondCore
import CActiondShim
import Glibc

/// Runs commands on the event loop without ever blocking it.
///
/// - The spawn happens in C (`actiond_spawn`, clone with CLONE_VM | CLONE_VFORK like
///   posix_spawn, so no page tables are copied): the child makes raw system calls only:
///   new process group, signals unblocked and at default, stdin on /dev/null, stdout and
///   stderr on pipes, every other fd closed, optional chdir and setgroups/setgid/setuid.
///   The parent waits only until exec (or its failure), like posix_spawn.
/// - `arm` takes even that off the moment a command must start: it prepares the child up
///   to the exec ahead of time (at a key-down), and a `run` of the same request in the
///   same slot (at the hold deadline) only writes one byte to let it exec. A prepared
///   child that is not used is told to exit.
/// - Exit is noticed through a pidfd (Linux ≥ 5.3) in the loop, then reaped with
///   `waitpid(pid, WNOHANG)`: no SIGCHLD handler, no `waitpid(-1)` stealing other children.
///   Nothing else in the daemon may reap these pids.
/// - Output pipes are non-blocking and always drained; lines are forwarded within
///   ``ProcessOutputLimits``, the rest discarded (see ``OutputLineSplitter``).
/// - A timeout sends SIGTERM to the whole process group (grandchildren included), then
///   SIGKILL after the grace period unless the group is already gone. The result is
///   reported once the command is reaped and, after a timeout, the group is dead or killed.
public final class ProcessRunner: ProcessRunning {
  private let loop: EventLoop
  private var runs: [UInt64: ActiveRun] = [:]
  /// Children prepared by `arm`, by slot.
  private var armedChildren: [String: ArmedChild] = [:]
  /// Discarded prepared children until they are reaped (they read their request until
  /// they exit), by pid.
  private var discardedChildren: [Int32: ArmedChild] = [:]
  private var next: UInt64 = 1
  /// Reused for every read, so output costs no allocation per chunk.
  private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)

  public init(loop: EventLoop) { self.loop = loop }

  /// Runs in flight.
  public var runningCount: Int { runs.count }

  @discardableResult
  public func run(
    _ request: ProcessRequest, slot: String?, output: @escaping (ProcessOutputLine) -> Void,
    completion: @escaping (ProcessResult) -> Void
  ) -> ProcessRunID {
    let id = next
    next += 1
    let started = loop.now()
    let spawned: Result<Spawned, SpawnFailure>
    if let slot, let child = armedChildren.removeValue(forKey: slot) {
      spawned = fire(child, for: request)
    } else {
      spawned = spawn(request)
    }
    switch spawned {
    case .failure(let failure):
      // Reported on the next turn so callers never see their completion inside run().
      loop.schedule(at: started) { now in
        completion(ProcessResult(outcome: .spawnFailed(failure), duration: now - started))
      }
    case .success(let spawned):
      let run = ActiveRun(
        id: id, pid: spawned.pid, pidfd: spawned.pidfd, stdoutFD: spawned.stdoutFD, stderrFD: spawned.stderrFD,
        request: request, started: started, output: output, completion: completion)
      run.armed = spawned.armed
      runs[id] = run
      do {
        try watch(run)
      } catch {
        // Cannot watch it: do not leave it running unobserved.
        _ = kill(-spawned.pid, SIGKILL)
        var status: Int32 = 0
        _ = try? Syscall.retrying { waitpid(spawned.pid, &status, 0) }
        release(run)
        loop.schedule(at: started) { now in
          completion(
            ProcessResult(
              outcome: .spawnFailed(SpawnFailure(step: "epoll_ctl", errnoName: "", message: "\(error)")),
              duration: now - started))
        }
      }
    }
    return ProcessRunID(rawValue: id)
  }

  /// Prepares `request` in a child that stops just before its exec (`actiond_arm`):
  /// process group, signals, stdio, close-on-exec, chdir, credentials, the user lookup,
  /// the pipes and the pidfd all happen now, so a `run` of the same request in `slot`
  /// only has to let it exec. That child runs nothing of the command until then; it
  /// exits when discarded and dies with the daemon while it waits. A request that cannot
  /// be prepared is simply not armed: its `run` spawns and reports the failure.
  public func arm(_ request: ProcessRequest, slot: String) {
    disarm(slot: slot)
    guard case .success(let spawned) = spawn(request, armed: true), let handle = spawned.armed else { return }
    let child = ArmedChild(request: request, process: spawned, handle: handle)
    do {
      // An armed child exits on its own only when its preparation failed (or it was
      // killed): forget it then, so the run spawns afresh and reports why.
      child.pidWatch = try loop.register(fd: child.process.pidfd, interest: .readable) { [weak self] _ in
        self?.armedChildExited(child)
      }
    } catch {
      _ = kill(child.pid, SIGKILL)
      var status: Int32 = 0
      _ = try? Syscall.retrying { waitpid(child.pid, &status, 0) }
      child.free()
      return
    }
    armedChildren[slot] = child
  }

  public func disarm(slot: String) {
    guard let child = armedChildren.removeValue(forKey: slot) else { return }
    discard(child)
  }

  /// Slots holding a prepared child.
  public var armedSlots: [String] { Array(armedChildren.keys) }
  /// Prepared children still alive: armed ones plus discarded ones not reaped yet.
  public var preparedChildCount: Int { armedChildren.count + discardedChildren.count }
  /// Runs that started from a prepared child (the rest were spawned when asked).
  public private(set) var preparedRunCount = 0

  /// Terminates every run as if it had timed out (for shutdown): SIGTERM to each group
  /// now, SIGKILL after each run's grace period. Completions still arrive. Prepared
  /// children are discarded.
  public func terminateAll() {
    for slot in armedSlots { disarm(slot: slot) }
    for run in runs.values where !run.timedOut { timeOut(run) }
  }

  /// SIGKILLs every run's process group now, without waiting for grace periods: the end
  /// of a bounded shutdown, so nothing the daemon started outlives it.
  public func killAll() {
    for run in runs.values { _ = kill(-run.pid, SIGKILL) }
  }

  // MARK: Spawning

  /// Lets an armed child exec when it was prepared for exactly `request`; otherwise
  /// discards it and spawns `request` the usual way.
  private func fire(_ child: ArmedChild, for request: ProcessRequest) -> Result<Spawned, SpawnFailure> {
    guard child.request == request, actiond_armed_fire(child.handle) == 0 else {
      // Prepared for something else (the value changed during the press), or it has
      // already exited (EPIPE): it will not run.
      discard(child)
      return spawn(request)
    }
    if let watch = child.pidWatch { loop.unregister(watch) }
    child.pidWatch = nil
    preparedRunCount += 1
    return .success(child.process)
  }

  /// Tells an armed child to exit; its memory and fds are released once it is reaped.
  private func discard(_ child: ArmedChild) {
    _ = actiond_armed_discard(child.handle)
    // Its pidfd watch (registered by `arm`) reaps it.
    discardedChildren[child.pid] = child
  }

  private func armedChildExited(_ child: ArmedChild) {
    var status: Int32 = 0
    guard let pid = try? Syscall.retrying({ waitpid(child.pid, &status, WNOHANG) }), pid == child.pid else {
      return  // still waiting (spurious readiness)
    }
    if let watch = child.pidWatch { loop.unregister(watch) }
    child.pidWatch = nil
    discardedChildren[child.pid] = nil
    for (slot, armed) in armedChildren where armed === child { armedChildren[slot] = nil }
    child.free()
  }

  private func spawn(_ request: ProcessRequest, armed: Bool = false) -> Result<Spawned, SpawnFailure> {
    guard !request.argv.isEmpty, !request.argv[0].isEmpty else {
      return .failure(SpawnFailure(step: "argv", errnoName: "", message: "no program given"))
    }
    var identity: UserIdentity?
    if let user = request.user {
      switch UserIdentity.resolve(user) {
      case .success(let resolved): identity = resolved
      case .failure(let failure): return .failure(failure)
      }
    }
    let out: (read: Int32, write: Int32)
    let err: (read: Int32, write: Int32)
    do { out = try Syscall.pipe() } catch {
      return .failure(SpawnFailure(step: "pipe2", errnoName: error.name, message: error.message))
    }
    do { err = try Syscall.pipe() } catch {
      Syscall.close(out.read)
      Syscall.close(out.write)
      return .failure(SpawnFailure(step: "pipe2", errnoName: error.name, message: error.message))
    }
    defer {
      Syscall.close(out.write)
      Syscall.close(err.write)
    }
    func fail(_ failure: SpawnFailure) -> Result<Spawned, SpawnFailure> {
      Syscall.close(out.read)
      Syscall.close(err.read)
      return .failure(failure)
    }

    let argv = CStringArray(request.argv)
    let envp = CStringArray(request.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
    let groups = identity?.groups ?? []
    var childErrno: Int32 = 0
    var failedStep: UnsafePointer<CChar>?
    var handle: OpaquePointer?
    let pid: pid_t = groups.withUnsafeBufferPointer { groupBuffer in
      withOptionalCString(request.workingDirectory) { directory in
        var spawnRequest = actiond_spawn_request(
          argv: argv.pointer, envp: envp.pointer, working_directory: directory, stdout_fd: out.write,
          stderr_fd: err.write, change_user: identity == nil ? 0 : 1, uid: identity?.uid ?? 0,
          gid: identity?.gid ?? 0, groups: groupBuffer.baseAddress, group_count: groupBuffer.count)
        guard armed else { return actiond_spawn(&spawnRequest, &childErrno, &failedStep) }
        // actiond_arm copies the request: the child outlives these buffers.
        var pid: pid_t = -1
        handle = actiond_arm(&spawnRequest, &pid, &childErrno, &failedStep)
        return handle == nil ? -1 : pid
      }
    }
    if pid < 0 { return fail(childFailure(failedStep, childErrno, request)) }
    /// A started child that cannot be watched is killed and reaped at once.
    func abandon(_ step: String, _ error: Errno) -> Result<Spawned, SpawnFailure> {
      _ = kill(-pid, SIGKILL)
      _ = kill(pid, SIGKILL)  // an armed child may not have its own group yet
      var status: Int32 = 0
      _ = try? Syscall.retrying { waitpid(pid, &status, 0) }
      if let handle { _ = actiond_armed_release(handle, &childErrno, &failedStep) }
      return fail(SpawnFailure(step: step, errnoName: error.name, message: error.message))
    }
    let pidfd = actiond_pidfd_open(pid)
    if pidfd < 0 { return abandon("pidfd_open", Errno.current) }
    do {
      try Syscall.setNonBlocking(out.read)
      try Syscall.setNonBlocking(err.read)
    } catch {
      Syscall.close(pidfd)
      return abandon("fcntl", error)
    }
    return .success(Spawned(pid: pid, pidfd: pidfd, stdoutFD: out.read, stderrFD: err.read, armed: handle))
  }

  // MARK: Watching

  private func watch(_ run: ActiveRun) throws {
    run.stdoutWatch = try loop.register(fd: run.stdoutFD, interest: .readable) { [weak self] _ in
      self?.drain(run, .stdout, untilDry: false)
    }
    run.stderrWatch = try loop.register(fd: run.stderrFD, interest: .readable) { [weak self] _ in
      self?.drain(run, .stderr, untilDry: false)
    }
    run.pidWatch = try loop.register(fd: run.pidfd, interest: .readable) { [weak self] _ in
      self?.reap(run)
    }
    run.timeoutTimer = loop.schedule(at: run.started + run.request.timeout) { [weak self] _ in
      self?.timeOut(run)
    }
  }

  /// Reads what is available. `untilDry`: keep going until EAGAIN/EOF (after exit);
  /// otherwise a few chunks per wakeup, so one chatty command cannot starve the loop.
  private func drain(_ run: ActiveRun, _ stream: ProcessOutputStream, untilDry: Bool) {
    let fd = stream == .stdout ? run.stdoutFD : run.stderrFD
    guard fd >= 0 else { return }
    var chunks = 0
    while untilDry || chunks < 4 {
      chunks += 1
      let result = readBuffer.withUnsafeMutableBytes { try? Syscall.read(fd, into: $0) }
      guard case .done(let n)? = result, n > 0 else {
        if case .wouldBlock? = result { return }
        closeStream(run, stream)  // EOF or error: nothing more will come
        return
      }
      readBuffer.withUnsafeBytes { raw in
        let bytes = UnsafeRawBufferPointer(rebasing: raw[0..<n])
        if stream == .stdout {
          run.stdoutSplitter.feed(bytes, budget: &run.budget, emit: run.output)
        } else {
          run.stderrSplitter.feed(bytes, budget: &run.budget, emit: run.output)
        }
      }
    }
  }

  private func closeStream(_ run: ActiveRun, _ stream: ProcessOutputStream) {
    if stream == .stdout {
      guard run.stdoutFD >= 0 else { return }
      if let watch = run.stdoutWatch { loop.unregister(watch) }
      Syscall.close(run.stdoutFD)
      run.stdoutFD = -1
      run.stdoutSplitter.finish(budget: &run.budget, emit: run.output)
    } else {
      guard run.stderrFD >= 0 else { return }
      if let watch = run.stderrWatch { loop.unregister(watch) }
      Syscall.close(run.stderrFD)
      run.stderrFD = -1
      run.stderrSplitter.finish(budget: &run.budget, emit: run.output)
    }
  }

  private func reap(_ run: ActiveRun) {
    var status: Int32 = 0
    guard let pid = try? Syscall.retrying({ waitpid(run.pid, &status, WNOHANG) }), pid == run.pid else {
      return  // not exited yet (spurious readiness)
    }
    if let watch = run.pidWatch { loop.unregister(watch) }
    run.pidWatch = nil
    Syscall.close(run.pidfd)
    run.pidfd = -1
    run.status = status
    if let armed = run.armed {
      // It exited 127 before or at its exec: report that like a failed spawn.
      var childErrno: Int32 = 0
      var failedStep: UnsafePointer<CChar>?
      if actiond_armed_release(armed, &childErrno, &failedStep) != 0 {
        run.spawnFailure = childFailure(failedStep, childErrno, run.request)
      }
      run.armed = nil
    }
    // Whatever the command wrote before exiting is in the pipes now. A background
    // grandchild may keep them open; it does not hold up the result.
    drain(run, .stdout, untilDry: true)
    drain(run, .stderr, untilDry: true)
    closeStream(run, .stdout)
    closeStream(run, .stderr)
    finishIfDone(run)
  }

  private func timeOut(_ run: ActiveRun) {
    run.timedOut = true
    if let timer = run.timeoutTimer { loop.cancel(timer) }
    run.timeoutTimer = nil
    _ = kill(-run.pid, SIGTERM)
    run.graceTimer = loop.schedule(at: loop.now() + run.request.killGracePeriod) { [weak self] _ in
      run.graceTimer = nil
      _ = kill(-run.pid, SIGKILL)
      run.killed = true
      self?.finishIfDone(run)
    }
  }

  private func finishIfDone(_ run: ActiveRun) {
    guard let status = run.status, runs[run.id] != nil else { return }
    if run.timedOut && !run.killed {
      // The leader is gone; wait for the grace SIGKILL unless nothing of the group is left.
      // (The group id cannot be reused while any member lives.)
      guard kill(-run.pid, 0) != 0 else { return }
    }
    let outcome: ProcessOutcome
    if let failure = run.spawnFailure {
      outcome = .spawnFailed(failure)
    } else if run.timedOut {
      outcome = .timedOut
    } else if status & 0x7f == 0 {
      outcome = .exited((status >> 8) & 0xff)
    } else {
      outcome = .signaled(status & 0x7f)
    }
    let result = ProcessResult(
      outcome: outcome, duration: loop.now() - run.started, forwardedLines: run.budget.forwardedLines,
      discardedLines: run.budget.discardedLines, discardedBytes: run.budget.discardedBytes)
    release(run)
    run.completion(result)
  }

  private func release(_ run: ActiveRun) {
    runs[run.id] = nil
    if let armed = run.armed {
      // Only reached once the child was killed and reaped.
      var childErrno: Int32 = 0
      var failedStep: UnsafePointer<CChar>?
      _ = actiond_armed_release(armed, &childErrno, &failedStep)
      run.armed = nil
    }
    if let timer = run.timeoutTimer { loop.cancel(timer) }
    if let timer = run.graceTimer { loop.cancel(timer) }
    run.timeoutTimer = nil
    run.graceTimer = nil
    if let watch = run.pidWatch { loop.unregister(watch) }
    if run.pidfd >= 0 { Syscall.close(run.pidfd) }
    run.pidfd = -1
    closeStream(run, .stdout)
    closeStream(run, .stderr)
  }
}

/// A started child as the runner holds it: its pid, pidfd and the read ends of its pipes.
private struct Spawned {
  var pid: Int32
  var pidfd: Int32
  var stdoutFD: Int32
  var stderrFD: Int32
  /// Set for a child started by `actiond_arm`: freed once it is reaped.
  var armed: OpaquePointer?
}

/// A failure the child reported (the step that failed and its errno), named the way
/// users read it: `execve /usr/bin/x`, `chdir /srv/photos`.
private func childFailure(_ step: UnsafePointer<CChar>?, _ errnum: Int32, _ request: ProcessRequest) -> SpawnFailure {
  var step = step.map { String(cString: $0) } ?? "spawn"
  if step == "execve" { step += " \(request.argv[0])" }
  if step == "chdir", let directory = request.workingDirectory { step += " \(directory)" }
  let error = Errno(errnum)
  return SpawnFailure(step: step, errnoName: error.name, message: error.message)
}

/// The state of one command in flight.
private final class ActiveRun {
  let id: UInt64
  let pid: Int32
  var pidfd: Int32
  var stdoutFD: Int32
  var stderrFD: Int32
  let request: ProcessRequest
  let started: MonotonicInstant
  let output: (ProcessOutputLine) -> Void
  let completion: (ProcessResult) -> Void
  var budget: OutputLineSplitter.Budget
  var stdoutSplitter = OutputLineSplitter(stream: .stdout)
  var stderrSplitter = OutputLineSplitter(stream: .stderr)
  var stdoutWatch: WatchID?
  var stderrWatch: WatchID?
  var pidWatch: WatchID?
  var timeoutTimer: TimerID?
  var graceTimer: TimerID?
  var status: Int32?
  var timedOut = false
  var killed = false
  /// The `actiond_armed` block of a child started by `arm` (freed when reaped).
  var armed: OpaquePointer?
  /// Set when an armed child failed before or at its exec.
  var spawnFailure: SpawnFailure?

  init(
    id: UInt64, pid: Int32, pidfd: Int32, stdoutFD: Int32, stderrFD: Int32, request: ProcessRequest,
    started: MonotonicInstant, output: @escaping (ProcessOutputLine) -> Void,
    completion: @escaping (ProcessResult) -> Void
  ) {
    self.id = id
    self.pid = pid
    self.pidfd = pidfd
    self.stdoutFD = stdoutFD
    self.stderrFD = stderrFD
    self.request = request
    self.started = started
    self.output = output
    self.completion = completion
    self.budget = OutputLineSplitter.Budget(limits: request.outputLimits)
  }
}

/// A child prepared by `ProcessRunner.arm`, waiting for its exec.
private final class ArmedChild {
  let request: ProcessRequest
  let process: Spawned
  /// `process.armed`, never nil here.
  let handle: OpaquePointer
  var pidWatch: WatchID?
  var pid: Int32 { process.pid }

  init(request: ProcessRequest, process: Spawned, handle: OpaquePointer) {
    self.request = request
    self.process = process
    self.handle = handle
  }

  /// Once it is reaped (never before: it reads its request until its exit).
  func free() {
    var childErrno: Int32 = 0
    var failedStep: UnsafePointer<CChar>?
    _ = actiond_armed_release(handle, &childErrno, &failedStep)
    Syscall.close(process.pidfd)
    Syscall.close(process.stdoutFD)
    Syscall.close(process.stderrFD)
  }
}

/// A NULL-terminated `char *const *` that owns its strings.
private final class CStringArray {
  let count: Int
  let storage: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
  init(_ strings: [String]) {
    count = strings.count
    storage = .allocate(capacity: strings.count + 1)
    for (index, string) in strings.enumerated() { storage[index] = strdup(string) }
    storage[strings.count] = nil
  }
  deinit {
    for index in 0..<count { free(storage[index]) }
    storage.deallocate()
  }
  var pointer: UnsafePointer<UnsafeMutablePointer<CChar>?> { UnsafePointer(storage) }
}

private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
  guard let string else { return body(nil) }
  return string.withCString { body($0) }
}

/// A user to run commands as, resolved in the parent (NSS is not async-signal-safe).
struct UserIdentity {
  var uid: UInt32
  var gid: UInt32
  var groups: [UInt32]

  /// A user name, or a numeric uid (which need not have a passwd entry: then its gid is
  /// the same number and it has no supplementary groups).
  static func resolve(_ user: String) -> Result<UserIdentity, SpawnFailure> {
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 16 * 1024)
    let numeric = UInt32(user)
    let rc: Int32
    if let numeric {
      rc = getpwuid_r(numeric, &entry, &buffer, buffer.count, &found)
    } else {
      rc = getpwnam_r(user, &entry, &buffer, buffer.count, &found)
    }
    guard rc == 0, found != nil else {
      if let numeric { return .success(UserIdentity(uid: numeric, gid: numeric, groups: [])) }
      let error = rc == 0 ? "no such user" : Errno(rc).description
      return .failure(SpawnFailure(step: "user \(user)", errnoName: "", message: error))
    }
    let uid = entry.pw_uid
    let gid = entry.pw_gid
    var count: Int32 = 64
    var groups = [gid_t](repeating: 0, count: Int(count))
    while getgrouplist(entry.pw_name, gid, &groups, &count) < 0 {
      groups = [gid_t](repeating: 0, count: Int(count) + 16)
      count = Int32(groups.count)
    }
    return .success(UserIdentity(uid: uid, gid: gid, groups: Array(groups.prefix(Int(count)))))
  }
}
