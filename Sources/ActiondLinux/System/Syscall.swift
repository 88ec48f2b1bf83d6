// SPDX-License-Identifier: Apache-2.0
import CActiondShim
import Glibc

/// The outcome of a non-blocking I/O call: a value, or "try again when the fd is ready".
/// EAGAIN is the normal state of a non-blocking fd, so it is a value, not an error.
public enum IOResult<Value> {
  case done(Value)
  case wouldBlock

  /// The value, or nil for `wouldBlock`.
  public var value: Value? {
    if case .done(let v) = self { return v }
    return nil
  }
}

extension IOResult: Equatable where Value: Equatable {}
extension IOResult: Sendable where Value: Sendable {}

/// Wrappers for the system calls on the daemon's I/O paths (reads, writes, accepts, waits):
/// EINTR is retried here, failures become a typed ``Errno``, EAGAIN/EWOULDBLOCK becomes
/// ``IOResult/wouldBlock``. Not every call goes through here: set-up calls that cannot be
/// interrupted (`socket`, `fstat`, `bind`, …) are made directly by
/// the adapters, which capture `errno` right after them.
public enum Syscall {
  /// Runs `call` until it does not fail with EINTR. `-1` → ``Errno``.
  @inlinable
  public static func retrying<T: BinaryInteger>(_ call: () -> T) throws(Errno) -> T {
    while true {
      let result = call()
      if result != -1 { return result }
      let error = Errno.current
      if error == .interrupted { continue }
      throw error
    }
  }

  /// Like ``retrying(_:)`` but EAGAIN/EWOULDBLOCK is returned as ``IOResult/wouldBlock``.
  @inlinable
  public static func nonBlocking<T: BinaryInteger>(_ call: () -> T) throws(Errno) -> IOResult<T> {
    while true {
      let result = call()
      if result != -1 { return .done(result) }
      let error = Errno.current
      if error == .interrupted { continue }
      if error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK { return .wouldBlock }
      throw error
    }
  }

  /// read(2) into `buffer`. `.done(0)` is end of file.
  public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> IOResult<Int> {
    try nonBlocking { Glibc.read(fd, buffer.baseAddress, buffer.count) }
  }

  /// write(2) from `buffer`; may write less than all of it.
  public static func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(Errno) -> IOResult<Int> {
    try nonBlocking { Glibc.write(fd, buffer.baseAddress, buffer.count) }
  }

  /// Writes all of `bytes` to a blocking fd (files, the state store); retries short writes.
  public static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) throws(Errno) {
    let array = Array(bytes)
    var offset = 0
    while offset < array.count {
      let n = array.withUnsafeBytes { raw in
        Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
      }
      if n >= 0 {
        offset += n
        continue
      }
      let error = Errno.current
      if error != .interrupted { throw error }
    }
  }

  /// close(2). EINTR is *not* retried: on Linux the fd is released even then, and a
  /// retry could close an fd another part of the program has just been given.
  public static func close(_ fd: Int32) {
    _ = Glibc.close(fd)
  }

  /// Sets or clears O_NONBLOCK.
  public static func setNonBlocking(_ fd: Int32, _ on: Bool = true) throws(Errno) {
    let flags = try retrying { fcntl(fd, F_GETFL) }
    let wanted = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
    if wanted != flags { _ = try retrying { fcntl(fd, F_SETFL, wanted) } }
  }

  /// Sets or clears FD_CLOEXEC.
  public static func setCloseOnExec(_ fd: Int32, _ on: Bool = true) throws(Errno) {
    let flags = try retrying { fcntl(fd, F_GETFD) }
    let wanted = on ? flags | FD_CLOEXEC : flags & ~FD_CLOEXEC
    if wanted != flags { _ = try retrying { fcntl(fd, F_SETFD, wanted) } }
  }

  /// A pipe with both ends close-on-exec; `nonBlocking` applies to both ends.
  public static func pipe(nonBlocking: Bool = false) throws(Errno) -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    let flags = O_CLOEXEC | (nonBlocking ? O_NONBLOCK : 0)
    _ = try retrying { actiond_pipe2(&fds, flags) }
    return (fds[0], fds[1])
  }

  /// open(2) with O_CLOEXEC always added.
  public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(Errno) -> Int32 {
    try retrying { Glibc.open(path, flags | O_CLOEXEC, mode) }
  }

  /// The current CLOCK_MONOTONIC time in nanoseconds.
  public static func monotonicNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
  }
}
