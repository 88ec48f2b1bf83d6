// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CActiondShim
import Glibc

/// The listening socket of the server: created at a path, or inherited from systemd.
public final class Listener {
  public let fd: Int32
  /// The path whose file this listener created (and removes on close); nil when inherited.
  public let createdPath: String?
  private var inode: ino_t = 0
  private var closed = false

  private init(fd: Int32, createdPath: String?) {
    self.fd = fd
    self.createdPath = createdPath
    if let createdPath {
      var st = stat()
      if lstat(createdPath, &st) == 0 { inode = st.st_ino }
    }
  }

  /// Adopts an inherited descriptor after checking it is a listening AF_UNIX stream socket.
  public static func adopt(fd: Int32) throws -> Listener {
    func option(_ name: Int32) -> Int32? {
      var value: Int32 = 0
      var length = socklen_t(MemoryLayout<Int32>.size)
      return getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
    }
    guard let domain = option(SO_DOMAIN) else {
      let error = Errno.current
      throw SocketError.badActivatedSocket(fd: fd, reason: "not a socket (\(error))")
    }
    guard domain == AF_UNIX, option(SO_TYPE) == Int32(SOCK_STREAM.rawValue) else {
      throw SocketError.badActivatedSocket(fd: fd, reason: "not an AF_UNIX stream socket (check ListenStream=)")
    }
    guard option(SO_ACCEPTCONN) == 1 else {
      throw SocketError.badActivatedSocket(fd: fd, reason: "not listening (Accept=yes is not supported)")
    }
    do {
      try Syscall.setNonBlocking(fd)
      try Syscall.setCloseOnExec(fd)
    } catch { throw SystemCallError("fcntl fd \(fd)", error) }
    return Listener(fd: fd, createdPath: nil)
  }

  /// Creates, binds and listens on `path`. A stale socket file (nobody accepts on it) is
  /// removed; a live socket or a non-socket file at the path is an error. Ownership and
  /// mode are set before `listen`, so nobody can connect while they are still wider.
  public static func bind(path: String, mode: mode_t, group: UInt32?, backlog: Int32 = 128) throws -> Listener {
    guard let address = UnixAddress(path) else { throw SocketError.invalidPath(path) }
    // An abstract name (`@name`, used by tests) has no file: no stale file, owner or mode.
    if !address.isAbstract { try removeStaleSocket(at: path) }
    let fd: Int32
    do { fd = try UnixSocket.makeStreamSocket(nonBlocking: true) } catch { throw SystemCallError("socket", error) }
    do {
      if address.withSockaddr({ Glibc.bind(fd, $0, $1) }) != 0 { throw SystemCallError.last("bind \(path)") }
      if !address.isAbstract {
        if let group, lchown(path, uid_t.max, group) != 0 {
          throw SystemCallError.last("chown \(path) to group \(group)")
        }
        if chmod(path, mode) != 0 { throw SystemCallError.last("chmod \(path)") }
      }
      if Glibc.listen(fd, backlog) != 0 { throw SystemCallError.last("listen \(path)") }
    } catch {
      Syscall.close(fd)
      if !address.isAbstract { _ = unlink(path) }
      throw error
    }
    return Listener(fd: fd, createdPath: address.isAbstract ? nil : path)
  }

  static func removeStaleSocket(at path: String) throws {
    var st = stat()
    if lstat(path, &st) != 0 {
      if errno == ENOENT { return }
      throw SystemCallError.last("stat \(path)")
    }
    guard st.st_mode & S_IFMT == S_IFSOCK else { throw SocketError.notASocket(path) }
    // A live socket answers a connect; a stale one refuses it.
    let probe: Int32
    do { probe = try UnixSocket.makeStreamSocket(nonBlocking: true) } catch { throw SystemCallError("socket", error) }
    defer { Syscall.close(probe) }
    guard let address = UnixAddress(path) else { throw SocketError.invalidPath(path) }
    let rc = address.withSockaddr { Glibc.connect(probe, $0, $1) }
    if rc == 0 || errno == EAGAIN || errno == EINPROGRESS { throw SocketError.inUse(path) }
    guard errno == ECONNREFUSED else {
      throw SystemCallError.last("connect \(path) (probing for a stale socket)")
    }
    if unlink(path) != 0 && errno != ENOENT { throw SystemCallError.last("unlink stale socket \(path)") }
  }

  /// Closes the socket and removes the file it created, unless the path now belongs to
  /// another socket (a newer daemon that replaced it).
  public func close() {
    guard !closed else { return }
    closed = true
    Syscall.close(fd)
    if let createdPath {
      var st = stat()
      if lstat(createdPath, &st) == 0 && st.st_ino == inode { _ = unlink(createdPath) }
    }
  }

  deinit { close() }
}
