// SPDX-License-Identifier: Apache-2.0
import Glibc

/// An AF_UNIX socket address: a filesystem path, or an abstract name (written `@name`,
/// as systemd does; stored with a leading NUL and no terminator).
public struct UnixAddress: Hashable, Sendable, CustomStringConvertible {
  /// The bytes of `sun_path` that are significant (for an abstract name, starting with NUL).
  public let pathBytes: [UInt8]

  /// Parses `/run/x.sock` or `@abstract-name`. Nil when empty or longer than `sun_path`.
  public init?(_ text: String) {
    var bytes = Array(text.utf8)
    if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
    let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
    // A path needs room for its terminating NUL; an abstract name does not.
    guard !bytes.isEmpty, bytes.count <= (bytes[0] == 0 ? capacity : capacity - 1) else { return nil }
    if bytes[0] != 0 && bytes.contains(0) { return nil }
    pathBytes = bytes
  }

  /// Whether this is an abstract-namespace name.
  public var isAbstract: Bool { pathBytes.first == 0 }

  public var description: String {
    isAbstract
      ? "@" + String(decoding: pathBytes.dropFirst(), as: UTF8.self) : String(decoding: pathBytes, as: UTF8.self)
  }

  /// Calls `body` with a `sockaddr` pointer and the exact length to pass to bind/connect/sendto.
  public func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (i, byte) in pathBytes.enumerated() { raw[i] = byte }
    }
    let offset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
    // Abstract names are exactly their bytes; paths include the terminating NUL.
    let length = offset + pathBytes.count + (isAbstract ? 0 : 1)
    return try withUnsafePointer(to: &address) { pointer in
      try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(length)) }
    }
  }
}
