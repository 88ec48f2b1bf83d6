// SPDX-License-Identifier: Apache-2.0
import CActiondShim
import Glibc

/// A failed system call: the errno value with its symbolic name and message, so logs say
/// `open /dev/input/event3: EACCES (Permission denied)` instead of a bare number.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
  /// The raw errno value.
  public var rawValue: Int32

  @inlinable public init(_ rawValue: Int32) { self.rawValue = rawValue }

  /// The calling thread's current `errno`.
  public static var current: Errno { Errno(errno) }

  /// The symbolic name ("ENOENT"), or "E<number>" for a value glibc does not know.
  public var name: String {
    if let name = actiond_errno_name(rawValue) { return String(cString: name) }
    return "E\(rawValue)"
  }

  /// The human message ("No such file or directory").
  public var message: String {
    if let text = actiond_errno_description(rawValue) { return String(cString: text) }
    return "Unknown error \(rawValue)"
  }

  /// "ENOENT (No such file or directory)".
  public var description: String { "\(name) (\(message))" }

  public static let interrupted = Errno(EINTR)
  public static let wouldBlock = Errno(EAGAIN)
  public static let notFound = Errno(ENOENT)
  public static let permissionDenied = Errno(EACCES)
  public static let badFileDescriptor = Errno(EBADF)
  public static let noSuchDevice = Errno(ENODEV)
  public static let invalidArgument = Errno(EINVAL)
  public static let brokenPipe = Errno(EPIPE)
  public static let exists = Errno(EEXIST)
  public static let notSupported = Errno(ENOSYS)
}

/// A system call that failed, with the operation that was attempted, for error messages
/// that stand on their own ("bind /run/actiond/actiond.sock: EADDRINUSE (...)").
public struct SystemCallError: Error, CustomStringConvertible, Sendable {
  /// What was attempted, e.g. "open /var/lib/actiond/state.json".
  public var operation: String
  public var errno: Errno
  public init(_ operation: String, _ errno: Errno) {
    self.operation = operation
    self.errno = errno
  }
  public var description: String { "\(operation): \(errno)" }

  /// The error of the system call that just failed. `errno` is read before `operation`
  /// is built: building a string can call into the allocator, which may change `errno`.
  public static func last(_ operation: @autoclosure () -> String) -> SystemCallError {
    let error = Errno.current
    return SystemCallError(operation(), error)
  }
}
