// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CActiondShim
import Glibc

/// The sd_notify protocol, implemented directly (no libsystemd): one datagram of
/// newline-separated `KEY=value` assignments to the AF_UNIX socket named by
/// `$NOTIFY_SOCKET` (a path, or `@name` for the abstract namespace).
///
/// Every method is a no-op when `$NOTIFY_SOCKET` is unset (not started by systemd with
/// `Type=notify`). Sends are non-blocking: a full socket buffer drops the message and
/// reports EAGAIN rather than stalling the loop.
public final class SystemdNotifier {
  /// Where notifications go; nil when disabled.
  public let address: UnixAddress?
  /// Half of `$WATCHDOG_USEC` when the watchdog is enabled for this process (systemd's
  /// recommendation: ping at half the timeout), nil otherwise.
  public let watchdogInterval: TimeSpan?
  private var socketFD: Int32 = -1
  private var watchdogTimer: TimerID?

  /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`.
  /// `pid` is this process (WATCHDOG_PID names the process that must ping).
  public init(environment: [String: String], pid: Int32 = getpid()) {
    if let text = environment["NOTIFY_SOCKET"], !text.isEmpty {
      address = UnixAddress(text)
    } else {
      address = nil
    }
    watchdogInterval = Self.watchdogInterval(environment: environment, pid: pid)
  }

  /// A notifier for this process's real environment.
  public convenience init() { self.init(environment: ProcessEnvironment.current()) }

  deinit { if socketFD >= 0 { Syscall.close(socketFD) } }

  /// Whether notifications are sent at all.
  public var isEnabled: Bool { address != nil }

  /// The watchdog ping interval for `environment`: half of WATCHDOG_USEC, when it is a
  /// positive integer and WATCHDOG_PID is unset or equal to `pid`.
  public static func watchdogInterval(environment: [String: String], pid: Int32) -> TimeSpan? {
    guard let text = environment["WATCHDOG_USEC"], let usec = Int64(text), usec > 0 else { return nil }
    if let owner = environment["WATCHDOG_PID"], !owner.isEmpty {
      guard let ownerPID = Int32(owner), ownerPID == pid else { return nil }
    }
    return .microseconds(usec / 2)
  }

  /// Sends raw assignments, e.g. `["READY=1", "STATUS=Waiting for devices"]`. Values
  /// must not contain newlines (``status(_:)`` takes care of that for free text).
  public func send(_ assignments: [String]) throws {
    guard let address else { return }
    if socketFD < 0 {
      do {
        socketFD = try Syscall.retrying {
          socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | actiond_SOCK_CLOEXEC | actiond_SOCK_NONBLOCK, 0)
        }
      } catch { throw SystemCallError("socket for NOTIFY_SOCKET", error) }
    }
    let message = Array(assignments.joined(separator: "\n").utf8)
    let fd = socketFD
    let result: IOResult<Int>
    do {
      result = try address.withSockaddr { pointer, length throws(Errno) in
        try Syscall.nonBlocking {
          message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), pointer, length) }
        }
      }
    } catch let error as Errno {
      throw SystemCallError("sd_notify to \(address)", error)
    }
    if case .wouldBlock = result { throw SystemCallError("sd_notify to \(address)", .wouldBlock) }
  }

  /// `READY=1`, optionally with a status line: startup is complete.
  public func ready(status: String? = nil) throws {
    try send(["READY=1"] + (status.map { ["STATUS=" + Self.oneLine($0)] } ?? []))
  }

  /// `STATUS=<text>`: the one-line summary `systemctl status` shows.
  public func status(_ text: String) throws { try send(["STATUS=" + Self.oneLine(text)]) }

  /// `RELOADING=1` with `MONOTONIC_USEC` (required by Type=notify-reload): a reload
  /// started at `now`. Follow with ``ready(status:)`` when it is done.
  public func reloading(at now: MonotonicInstant) throws {
    try send(["RELOADING=1", "MONOTONIC_USEC=\(now.microseconds)"])
  }

  /// `STOPPING=1`: shutdown has begun.
  public func stopping() throws { try send(["STOPPING=1"]) }

  /// `WATCHDOG=1`: the loop is alive.
  public func watchdog() throws { try send(["WATCHDOG=1"]) }

  /// Pings the watchdog every ``watchdogInterval`` from `loop` (the only periodic wakeup
  /// the daemon has, and only when systemd asked for it). A failed ping goes to
  /// `onError` and the pings continue. Nothing happens when the watchdog is disabled.
  public func startWatchdog(on loop: EventLoop, onError: @escaping (Error) -> Void = { _ in }) {
    guard isEnabled, let interval = watchdogInterval, watchdogTimer == nil else { return }
    func ping(_ now: MonotonicInstant) {
      do { try watchdog() } catch { onError(error) }
      watchdogTimer = loop.schedule(at: now + interval, ping)
    }
    watchdogTimer = loop.schedule(at: loop.now() + interval, ping)
  }

  /// Stops the pings started by ``startWatchdog(on:onError:)``.
  public func stopWatchdog(on loop: EventLoop) {
    if let watchdogTimer { loop.cancel(watchdogTimer) }
    watchdogTimer = nil
  }

  private static func oneLine(_ text: String) -> String {
    String(text.map { $0.isNewline ? " " : $0 })
  }
}

/// systemd socket activation (`sd_listen_fds`): the fds passed from `LISTEN_FDS` when
/// `LISTEN_PID` is this process, starting at fd 3. They are made close-on-exec so intents
/// never inherit them.
public enum SocketActivation {
  /// The first fd systemd passes (SD_LISTEN_FDS_START).
  public static let firstFD: Int32 = 3

  /// The passed fds (empty when not socket-activated or the variables are for another process).
  public static func listenFDs(environment: [String: String], pid: Int32 = getpid()) -> [Int32] {
    guard let pidText = environment["LISTEN_PID"], let owner = Int32(pidText), owner == pid,
      let countText = environment["LISTEN_FDS"], let count = Int32(countText), count > 0, count < 4096
    else { return [] }
    let fds = (0..<count).map { firstFD + $0 }
    for fd in fds { try? Syscall.setCloseOnExec(fd) }
    return fds
  }
}

/// The fds systemd passed to this process by socket activation (see ``SocketActivation``).
public func listenFDs() -> [Int32] {
  SocketActivation.listenFDs(environment: ProcessEnvironment.current())
}
