// SPDX-License-Identifier: Apache-2.0
import ActiondLinux
import CActiondShim
import Glibc

/// A fresh directory under /tmp, removed (recursively) when the value is deinitialised.
public final class TemporaryDirectory {
  public let path: String

  public init(_ label: String = "actiond-test") throws {
    var template = Array("/tmp/\(label)-XXXXXX".utf8CString)
    let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    guard result != nil else { throw Errno.current }
    path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  deinit { removeTree(path) }

  /// The path of `name` in this directory.
  public func file(_ name: String) -> String { path + "/" + name }

  /// Writes `text` to `name` in this directory with `mode`, returning the path.
  @discardableResult
  public func write(_ name: String, _ text: String, mode: mode_t = 0o644) throws -> String {
    let target = file(name)
    let fd = try Syscall.open(target, O_WRONLY | O_CREAT | O_TRUNC, mode: mode)
    defer { Syscall.close(fd) }
    try Syscall.writeAll(fd, Array(text.utf8))
    _ = fchmod(fd, mode)
    return target
  }

  /// Names of the entries in this directory.
  public func entries() -> [String] { listDirectory(path) }
}

/// The names in the directory at `path` but `.` and `..`, sorted; none when it cannot be read.
public func listDirectory(_ path: String) -> [String] {
  (try? directoryEntries(path)) ?? []
}

/// Names in a directory (not `.`/`..`), sorted; the error when it cannot be opened.
public func directoryEntries(_ path: String) throws -> [String] {
  guard let dir = opendir(path) else { throw Errno.current }
  defer { closedir(dir) }
  var names: [String] = []
  while let entry = readdir(dir) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    if name != "." && name != ".." { names.append(name) }
  }
  return names.sorted()
}

/// Removes `path` and, for a directory, everything below it (links are not followed).
public func removeTree(_ path: String) {
  var info = stat()
  guard lstat(path, &info) == 0 else { return }
  if info.st_mode & S_IFMT == S_IFDIR {
    for child in listDirectory(path) { removeTree(path + "/" + child) }
    rmdir(path)
  } else {
    unlink(path)
  }
}

/// Reads a whole file (nil when it cannot be opened).
public func readFile(_ path: String) -> String? {
  guard let fd = try? Syscall.open(path, O_RDONLY) else { return nil }
  defer { Syscall.close(fd) }
  var data: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 65536)
  while true {
    guard case .done(let n)? = try? buffer.withUnsafeMutableBytes({ try Syscall.read(fd, into: $0) }), n > 0 else {
      break
    }
    data += buffer[0..<n]
  }
  return String(decoding: data, as: UTF8.self)
}

/// A bound AF_UNIX datagram socket standing in for systemd's notify socket or journald.
public final class DatagramReceiver {
  public let fd: Int32
  public let address: UnixAddress

  public init(_ address: UnixAddress) throws {
    self.address = address
    fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | actiond_SOCK_CLOEXEC | actiond_SOCK_NONBLOCK, 0)
    guard fd >= 0 else { throw Errno.current }
    let rc = address.withSockaddr { bind(fd, $0, $1) }
    guard rc == 0 else { throw Errno.current }
  }

  deinit { Syscall.close(fd) }

  /// The next datagram, or nil when none is queued (everything is sent synchronously,
  /// so a datagram that was sent is already here).
  public func receive() -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 65536)
    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    return n >= 0 ? Array(buffer[0..<n]) : nil
  }

  /// The next datagram as text.
  public func receiveText() -> String? { receive().map { String(decoding: $0, as: UTF8.self) } }
}

/// The path of `relative` (a document, an example) in the repository the calling test's
/// source is in: the nearest directory above `file` that holds Package.swift. The top
/// itself when `relative` is empty.
public func repositoryPath(_ relative: String = "", file: String = #filePath) -> String {
  var top = file
  while let slash = top.lastIndex(of: "/") {
    top = String(top[..<slash])
    if access(top + "/Package.swift", F_OK) == 0 { break }
  }
  return relative.isEmpty ? top : top + "/" + relative
}
