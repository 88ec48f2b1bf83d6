// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CActiondShim
import Glibc

/// Who is on the other end of a Unix socket, as the kernel vouches for it.
public struct PeerCredentials: Hashable, Sendable, CustomStringConvertible {
  public var pid: Int32
  public var uid: UInt32
  /// The primary group at connect time.
  public var gid: UInt32
  /// Supplementary groups of the peer process (SO_PEERGROUPS), or of its user when the
  /// kernel lacks that option (getgrouplist).
  public var groups: [UInt32]

  public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32]) {
    self.pid = pid
    self.uid = uid
    self.gid = gid
    self.groups = groups
  }

  public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}

/// Small, typed wrappers for the AF_UNIX calls the server and `actionctl` make.
public enum UnixSocket {
  /// A new AF_UNIX stream socket, close-on-exec, optionally non-blocking.
  static func makeStreamSocket(nonBlocking: Bool) throws(Errno) -> Int32 {
    var type = Int32(SOCK_STREAM.rawValue) | actiond_SOCK_CLOEXEC
    if nonBlocking { type |= actiond_SOCK_NONBLOCK }
    return try Syscall.retrying { socket(AF_UNIX, type, 0) }
  }

  /// Connects a blocking, close-on-exec stream socket to `path` (the client side).
  public static func connect(to path: String) throws -> Int32 {
    let fd: Int32
    do { fd = try makeStreamSocket(nonBlocking: false) } catch { throw SystemCallError("socket", error) }
    guard let address = UnixAddress(path) else {
      Syscall.close(fd)
      throw SocketError.invalidPath(path)
    }
    // connect(2) is not simply restartable after EINTR (a retry may report EALREADY), and
    // a Unix connect completes at once anyway, so it is called once.
    if address.withSockaddr({ Glibc.connect(fd, $0, $1) }) != 0 {
      let error = Errno.current
      Syscall.close(fd)
      throw SystemCallError("connect \(path)", error)
    }
    return fd
  }

  /// The peer's pid/uid/gid (SO_PEERCRED) and supplementary groups.
  public static func peerCredentials(_ fd: Int32) throws(Errno) -> PeerCredentials {
    var raw = actiond_peer_credentials()
    _ = try Syscall.retrying { actiond_get_peer_credentials(fd, &raw) }
    let groups = peerGroups(fd) ?? userGroups(uid: raw.uid, primaryGID: raw.gid)
    return PeerCredentials(pid: raw.pid, uid: raw.uid, gid: raw.gid, groups: groups)
  }

  /// Whether the peer of a freshly accepted stream socket closed it without sending a
  /// byte: a peeked read sees end-of-file (or a reset) with nothing before it.
  static func peerLeftWithoutSending(_ fd: Int32) -> Bool {
    var byte: UInt8 = 0
    let n = recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
    return n == 0 || (n < 0 && errno == ECONNRESET)
  }

  /// SO_PEERGROUPS (Linux 4.13): the peer process's own supplementary groups, read
  /// without NSS lookups (which could block the loop on LDAP). nil when unsupported.
  static func peerGroups(_ fd: Int32) -> [UInt32]? {
    var count = 16
    while count <= 65536 {
      var groups = [gid_t](repeating: 0, count: count)
      var length = socklen_t(count * MemoryLayout<gid_t>.size)
      let rc = groups.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, $0.baseAddress, &length) }
      if rc == 0 { return Array(groups.prefix(Int(length) / MemoryLayout<gid_t>.size)) }
      guard errno == ERANGE else { return nil }
      count = max(count * 2, Int(length) / MemoryLayout<gid_t>.size)
    }
    return nil
  }

  /// The groups of the user named by `uid` in the user database (getgrouplist).
  static func userGroups(uid: UInt32, primaryGID: UInt32) -> [UInt32] {
    guard let name = userName(uid: uid) else { return [primaryGID] }
    var count: Int32 = 32
    while true {
      var groups = [gid_t](repeating: 0, count: Int(count))
      var n = count
      if getgrouplist(name, primaryGID, &groups, &n) >= 0 { return Array(groups.prefix(Int(n))) }
      guard n > count else { return [primaryGID] }
      count = n
    }
  }

  static func userName(uid: UInt32) -> String? {
    var pwd = passwd()
    var result: UnsafeMutablePointer<passwd>? = nil
    var buffer = [CChar](repeating: 0, count: 4096)
    while true {
      let rc = getpwuid_r(uid, &pwd, &buffer, buffer.count, &result)
      if rc == ERANGE && buffer.count < 1 << 20 {
        buffer = [CChar](repeating: 0, count: buffer.count * 4)
        continue
      }
      guard rc == 0, result != nil, let name = pwd.pw_name else { return nil }
      return String(cString: name)
    }
  }

  /// Resolves a group given by name or by number.
  public static func groupID(_ nameOrNumber: String) throws -> UInt32 {
    if let n = UInt32(nameOrNumber) { return n }
    var group = Glibc.group()
    var result: UnsafeMutablePointer<Glibc.group>? = nil
    var buffer = [CChar](repeating: 0, count: 4096)
    while true {
      let rc = getgrnam_r(nameOrNumber, &group, &buffer, buffer.count, &result)
      if rc == ERANGE && buffer.count < 1 << 20 {
        buffer = [CChar](repeating: 0, count: buffer.count * 4)
        continue
      }
      if rc != 0 { throw SystemCallError("getgrnam \(nameOrNumber)", Errno(rc)) }
      guard result != nil else { throw SocketError.unknownGroup(nameOrNumber) }
      return group.gr_gid
    }
  }

  /// send(2) with MSG_NOSIGNAL (a vanished peer is EPIPE, never SIGPIPE) and MSG_DONTWAIT.
  static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> IOResult<Int> {
    try Syscall.nonBlocking { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
  }
}

/// Why the listening socket could not be set up, in words an operator can act on.
public enum SocketError: Error, CustomStringConvertible, Equatable {
  /// Empty, longer than `sun_path`, or containing a NUL byte.
  case invalidPath(String)
  case unknownGroup(String)
  case unknownUser(String)
  /// Another process accepts connections on the path: probably a second daemon.
  case inUse(String)
  /// The path exists and is not a socket: refusing to delete someone else's file.
  case notASocket(String)
  /// LISTEN_FDS handed over something that is not a listening AF_UNIX stream socket.
  case badActivatedSocket(fd: Int32, reason: String)

  public var description: String {
    switch self {
    case .invalidPath(let p):
      return "socket path \(JSONEncoding.quoted(p)) is empty, longer than 107 bytes or contains a NUL byte"
    case .unknownGroup(let g): return "unknown group \(JSONEncoding.quoted(g))"
    case .unknownUser(let u): return "unknown user \(JSONEncoding.quoted(u))"
    case .inUse(let p): return "\(p): another process is already listening on this socket (is actiond running?)"
    case .notASocket(let p): return "\(p) exists and is not a socket; refusing to remove it"
    case .badActivatedSocket(let fd, let reason): return "socket-activated fd \(fd): \(reason)"
    }
  }
}
