// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CActiondShim
import Glibc

/// Runs commands on the event loop without ever blocking it.
///
/// - A command starts with glibc's `posix_spawn` at the moment it is asked for (a hold's
///   at the threshold): a new process group (so a timeout can signal the whole tree),
///   every signal unblocked and at its default disposition, stdin on /dev/null, stdout
///   and stderr on pipes, every other fd closed (`closefrom`), optional chdir. glibc
///   starts the child vfork-style (no page tables are copied) and returns once the child
///   has exec'ed or failed (the failure is its return value).
/// - What needs no process (the program's path, the C arrays, the pipes, the file
///   actions) can be readied ahead with ``prepare(_:)``: a hold's at its key-down, so that
///   at the threshold only the spawn is left. A run takes it only for an equal request.
/// - Another `user` (root only) runs through util-linux's `setpriv`, with the uid and
///   groups resolved beforehand (``ProcessUser``): the runner never asks the name service.
/// - Exit is noticed through a pidfd (Linux ≥ 5.3) in the loop, then reaped with
///   `waitpid(pid, WNOHANG)`: no SIGCHLD handler, no `waitpid(-1)` stealing other children.
///   Nothing else in the daemon may reap these pids.
/// - Output pipes are non-blocking and always drained; lines are forwarded within
///   ``ProcessOutputLimits``, the rest discarded (see ``OutputLineSplitter``).
/// - A timeout sends SIGTERM to the whole process group (grandchildren included), then
///   SIGKILL after the grace period unless the group is already gone. The result is
///   reported once the command is reaped and, after a timeout, the group is dead or killed.
///   A stop (``terminateAll(sparing:)``, ``killAll()``) ends groups the same way and reports
///   them ``ProcessOutcome/stopped``, never as timed out.
public final class ProcessRunner: ProcessRunning {
  private let loop: EventLoop
  private var runs: [UInt64: ActiveRun] = [:]
  private var next: UInt64 = 1
  /// Reused for every read, so output costs no allocation per chunk.
  private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
  /// The same for every command, so made once.
  private var attributes = posix_spawnattr_t()
  /// util-linux's `setpriv`, for a request with a `user`; nil when not installed.
  private let setpriv: String?
  /// What ``prepare(_:)`` readied, until a run of its request takes it.
  private var prepared: Launch?

  /// `setpriv`: where util-linux's setpriv is (found once, here, by default).
  public init(loop: EventLoop, setpriv: String? = ProcessRunner.findSetpriv()) {
    self.loop = loop
    self.setpriv = setpriv
    posix_spawnattr_init(&attributes)
    var none = sigset_t()
    sigemptyset(&none)
    // Every bit set, not sigfillset: that leaves out glibc's two internal signals (32,
    // 33), which posix_spawn would then leave ignored across the exec.
    var all = sigset_t()
    _ = withUnsafeMutableBytes(of: &all) { $0.initializeMemory(as: UInt8.self, repeating: 0xff) }
    // The daemon blocks the signals its signalfd reads and ignores SIGPIPE: neither may
    // reach the command (a blocked or ignored disposition survives exec).
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
  }

  deinit {
    prepared?.release()
    posix_spawnattr_destroy(&attributes)
  }

  /// The first of `/usr/bin/setpriv`, `/bin/setpriv` that is executable.
  public static func findSetpriv() -> String? {
    ["/usr/bin/setpriv", "/bin/setpriv"].first { access($0, X_OK) == 0 }
  }

  /// Runs in flight.
  public var runningCount: Int { runs.count }

  @discardableResult
  public func run(
    _ request: ProcessRequest, output: @escaping (ProcessOutputLine) -> Void,
    completion: @escaping (ProcessResult) -> Void
  ) -> ProcessRunID {
    let id = next
    next += 1
    let started = loop.now()
    switch spawn(request) {
    case .failure(let failure):
      // Reported on the next turn so callers never see their completion inside run().
      loop.schedule(at: started) { now in
        completion(ProcessResult(outcome: .spawnFailed(failure), duration: now - started))
      }
    case .success(let spawned):
      let run = ActiveRun(
        id: id, pid: spawned.pid, pidfd: spawned.pidfd, stdoutFD: spawned.stdoutFD, stderrFD: spawned.stderrFD,
        request: request, started: started, output: output, completion: completion)
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

  /// Stops every run (for shutdown): SIGTERM to each group now, SIGKILL after each run's
  /// grace period, as a timeout does, but reported as ``ProcessOutcome/stopped``: the
  /// command did not run too long, actiond ended it. Completions still arrive. Runs in
  /// `sparing` go on (a stop lets a momentary toggle's off finish; ``killAll()`` still
  /// bounds them).
  public func terminateAll(sparing: Set<ProcessRunID>) {
    for run in runs.values where run.ending == nil && !sparing.contains(ProcessRunID(rawValue: run.id)) {
      // One that already exited (not reaped yet: its pidfd is readable) ended by itself,
      // and is reported so; the SIGTERM would only reach what it left running.
      end(run, run.hasExited ? nil : .stopped)
    }
  }

  /// SIGKILLs every run's process group now, without waiting for grace periods: the end
  /// of a bounded shutdown, so nothing the daemon started outlives it. A run not ending
  /// yet is reported stopped.
  public func killAll() {
    for run in runs.values {
      if run.ending == nil { run.ending = .stopped }
      _ = kill(-run.pid, SIGKILL)
      run.killed = true
    }
  }

  // MARK: Spawning

  public func prepare(_ request: ProcessRequest) {
    discardPrepared()
    // A request that cannot be prepared is not: its run does everything again and
    // reports the failure then, where it belongs.
    if case .success(let launch) = makeLaunch(request) { prepared = launch }
  }

  /// The prepared command's pipe ends (stdout read, write, stderr read, write); empty
  /// when nothing is prepared. Internal for tests.
  var preparedDescriptors: [Int32] {
    guard let prepared else { return [] }
    return [prepared.stdout.read, prepared.stdout.write, prepared.stderr.read, prepared.stderr.write]
  }

  public func discardPrepared() {
    prepared?.release()
    prepared = nil
  }

  private func spawn(_ request: ProcessRequest) -> Result<Spawned, SpawnFailure> {
    let launch: Launch
    if let ready = prepared, ready.request == request {
      // Readied at the press's key-down: at the threshold only the spawn is left.
      prepared = nil
      launch = ready
    } else {
      switch makeLaunch(request) {
      case .success(let made): launch = made
      case .failure(let failure): return .failure(failure)
      }
    }
    defer { launch.release() }
    return start(launch)
  }

  /// Everything `request` needs before a process exists: the program's path, argv (via
  /// setpriv for another user) and environment as C arrays, the output pipes (read ends
  /// non-blocking) and the file actions.
  private func makeLaunch(_ request: ProcessRequest) -> Result<Launch, SpawnFailure> {
    guard !request.argv.isEmpty, !request.argv[0].isEmpty else {
      return .failure(SpawnFailure(step: "argv", errnoName: "", message: "no program given"))
    }
    let program: String
    switch ProcessRunner.lookUp(request.argv[0], path: request.environment["PATH"]) {
    case .success(let found): program = found
    case .failure(let failure): return .failure(failure)
    }
    var argv = request.argv
    var executable = program
    if let user = request.user {
      switch switchingUser(user) {
      case .failure(let failure): return .failure(failure)
      case .success(nil): break  // already that user
      case .success(let setpriv?):
        // setpriv execs the command in place: same pid, same process group.
        executable = setpriv
        argv = [setpriv] + ProcessRunner.setprivOptions(user) + ["--", program] + request.argv.dropFirst()
      }
    }
    let launch = Launch(
      request: request, program: program, executable: executable, argv: CStringArray(argv),
      environment: CStringArray(request.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }))
    func fail(_ step: String, _ error: Errno) -> Result<Launch, SpawnFailure> {
      launch.release()
      return .failure(SpawnFailure(step: step, errnoName: error.name, message: error.message))
    }
    do {
      launch.stdout = try Syscall.pipe()
      launch.stderr = try Syscall.pipe()
    } catch {
      return fail("pipe2", error)
    }
    do {
      try Syscall.setNonBlocking(launch.stdout.read)
      try Syscall.setNonBlocking(launch.stderr.read)
    } catch {
      return fail("fcntl", error)
    }
    // In this order, so that no source is overwritten before it is duplicated even when
    // the daemon runs with 0-2 closed: err.write is the last of four fds just allocated
    // lowest-first, so it is >= 3, and out.write is copied before 2 is replaced; /dev/null
    // takes 0 last. dup2 clears close-on-exec on its target.
    var added = [
      posix_spawn_file_actions_adddup2(&launch.actions, launch.stdout.write, 1),
      posix_spawn_file_actions_adddup2(&launch.actions, launch.stderr.write, 2),
      posix_spawn_file_actions_addopen(&launch.actions, 0, "/dev/null", O_RDONLY, 0),
      // Everything else (sockets from systemd, devices, the epoll fd) stays out of the
      // command even if some fd lacks close-on-exec.
      actiond_spawn_add_closefrom(&launch.actions, 3),
    ]
    if let directory = request.workingDirectory { added.append(actiond_spawn_add_chdir(&launch.actions, directory)) }
    // Only ENOMEM, but a command must not start without one of them (in the wrong directory).
    if let failed = added.first(where: { $0 != 0 }) { return fail("posix_spawn_file_actions", Errno(failed)) }
    return .success(launch)
  }

  /// Spawns a readied launch; its pipes' read ends pass to the result, the rest is
  /// released by the caller.
  private func start(_ launch: Launch) -> Result<Spawned, SpawnFailure> {
    var pid: pid_t = 0
    let rc = posix_spawn(
      &pid, launch.executable, &launch.actions, &attributes, launch.argv.pointer, launch.environment.pointer)
    if rc != 0 { return .failure(ProcessRunner.explain(rc, program: launch.program, launch.request)) }
    // The child has its copies: the parent's write ends must go for EOF to be seen.
    launch.closeWriteEnds()
    let pidfd = actiond_pidfd_open(pid)
    if pidfd < 0 {
      // A started child that cannot be watched is killed and reaped at once.
      let error = Errno.current  // before anything else runs: the cleanup may change errno
      _ = kill(-pid, SIGKILL)
      var status: Int32 = 0
      _ = try? Syscall.retrying { waitpid(pid, &status, 0) }
      return .failure(SpawnFailure(step: "pidfd_open", errnoName: error.name, message: error.message))
    }
    let spawned = Spawned(pid: pid, pidfd: pidfd, stdoutFD: launch.stdout.read, stderrFD: launch.stderr.read)
    launch.stdout.read = -1
    launch.stderr.read = -1
    return .success(spawned)
  }

  /// How to become `user`: nil when the daemon already is that user and group (nothing
  /// to change), else the setpriv to exec. Only root can become someone else.
  private func switchingUser(_ user: ProcessUser) -> Result<String?, SpawnFailure> {
    let euid = geteuid()
    if user.uid == euid && user.gid == getegid() { return .success(nil) }
    guard euid == 0 else {
      return .failure(
        SpawnFailure(
          step: "user \(user.reference)", errnoName: "EPERM",
          message: "only root can run a command as another user; actiond runs as uid \(euid)"))
    }
    guard let setpriv else {
      return .failure(
        SpawnFailure(
          step: "user \(user.reference)", errnoName: "ENOENT",
          message: "setpriv (util-linux) is not installed in /usr/bin or /bin"))
    }
    return .success(setpriv)
  }

  /// setpriv's options for `user`: real and effective ids and exactly its groups.
  static func setprivOptions(_ user: ProcessUser) -> [String] {
    let groups =
      user.groups.isEmpty ? "--clear-groups" : "--groups=" + user.groups.map { String($0) }.joined(separator: ",")
    return ["--reuid=\(user.uid)", "--regid=\(user.gid)", groups]
  }

  /// The program to exec for `name`: itself when it has a slash, else the first
  /// executable regular file named so in `path` (the command's PATH, not the daemon's;
  /// the standard one when it has none), as execvp searches.
  package static func lookUp(_ name: String, path: String?) -> Result<String, SpawnFailure> {
    if name.contains("/") { return .success(name) }
    let path = path ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    var denied = false
    for directory in path.split(separator: ":", omittingEmptySubsequences: false) {
      let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
      var info = stat()
      guard stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
      if access(candidate, X_OK) == 0 { return .success(candidate) }
      denied = true
    }
    let error = Errno(denied ? EACCES : ENOENT)
    return .failure(SpawnFailure(step: "execve \(name)", errnoName: error.name, message: error.message))
  }

  /// Names the step behind posix_spawn's error `rc` the way users read it (`chdir
  /// /srv/photos`, `execve /usr/bin/x`): posix_spawn reports only the errno, so a
  /// working directory the daemon cannot enter either is taken as the culprit.
  private static func explain(_ rc: Int32, program: String, _ request: ProcessRequest) -> SpawnFailure {
    if let directory = request.workingDirectory {
      var info = stat()
      var problem: Int32 = 0
      if stat(directory, &info) != 0 {
        problem = errno
      } else if info.st_mode & S_IFMT != S_IFDIR {
        problem = ENOTDIR
      } else if access(directory, X_OK) != 0 {
        problem = errno
      }
      if problem == rc {
        let error = Errno(rc)
        return SpawnFailure(step: "chdir \(directory)", errnoName: error.name, message: error.message)
      }
    }
    let error = Errno(rc)
    return SpawnFailure(step: "execve \(program)", errnoName: error.name, message: error.message)
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
      self?.end(run, .timedOut)
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
    // Whatever the command wrote before exiting is in the pipes now. A background
    // grandchild may keep them open; it does not hold up the result.
    drain(run, .stdout, untilDry: true)
    drain(run, .stderr, untilDry: true)
    closeStream(run, .stdout)
    closeStream(run, .stderr)
    finishIfDone(run)
  }

  /// Ends `run`'s process group (its timeout, or actiond stopping it): SIGTERM now,
  /// SIGKILL after the grace period; `why` is what its result will say.
  private func end(_ run: ActiveRun, _ why: ActiveRun.Ending?) {
    run.ending = why ?? run.ending
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
    if (run.ending != nil || run.graceTimer != nil) && !run.killed {
      // The leader is gone; wait for the grace SIGKILL unless nothing of the group is left.
      // (The group id cannot be reused while any member lives.)
      guard kill(-run.pid, 0) != 0 else { return }
    }
    let outcome: ProcessOutcome
    if run.ending == .timedOut {
      outcome = .timedOut
    } else if run.ending == .stopped {
      outcome = .stopped
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
}

/// A command readied to spawn: what it needs before a process exists. Owns its fds
/// until ``release()`` (or the spawn, which takes the read ends).
private final class Launch {
  let request: ProcessRequest
  /// The program found for argv[0], as errors name it.
  let program: String
  /// What is exec'ed: the program, or setpriv in front of it.
  let executable: String
  let argv: CStringArray
  let environment: CStringArray
  var actions = posix_spawn_file_actions_t()
  var stdout: (read: Int32, write: Int32) = (-1, -1)
  var stderr: (read: Int32, write: Int32) = (-1, -1)
  private var released = false

  init(request: ProcessRequest, program: String, executable: String, argv: CStringArray, environment: CStringArray) {
    self.request = request
    self.program = program
    self.executable = executable
    self.argv = argv
    self.environment = environment
    posix_spawn_file_actions_init(&actions)
  }

  func closeWriteEnds() {
    for fd in [stdout.write, stderr.write] where fd >= 0 { Syscall.close(fd) }
    stdout.write = -1
    stderr.write = -1
  }

  /// Closes every fd it still owns and frees the file actions; idempotent.
  func release() {
    guard !released else { return }
    released = true
    closeWriteEnds()
    for fd in [stdout.read, stderr.read] where fd >= 0 { Syscall.close(fd) }
    stdout.read = -1
    stderr.read = -1
    posix_spawn_file_actions_destroy(&actions)
  }

  deinit { release() }
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
  /// Why the runner ended its group, once it did: the result says so, whatever signal
  /// the command died of.
  enum Ending { case timedOut, stopped }
  var ending: Ending?
  var killed = false

  /// The process exited and is not reaped yet (its pidfd is readable).
  var hasExited: Bool {
    guard pidfd >= 0 else { return true }
    var fds = [pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)]
    return Glibc.poll(&fds, 1, 0) == 1
  }

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
