// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import Glibc

/// Reads and writes the daemon's ``StateSnapshot`` under the state directory.
///
/// Saving is atomic and durable: the snapshot goes to `<file>.tmp` in the same
/// directory, is fsync'ed, renamed over the file, and the directory is fsync'ed, so
/// after a crash or power loss the file is either the previous snapshot or the new one,
/// never a mix. Loading never crashes: a missing file is an empty state; a corrupt one
/// (bad JSON, another format version, a wrong shape) is moved aside as
/// `<file>.corrupt-<n>` and logged, and the daemon starts from its defaults. Only the
/// newest ``keptCorruptCopies`` such copies are kept, so a daemon restarted again and
/// again on a corrupt file does not fill its state directory. A file that
/// exists but cannot be read (permissions, I/O error) is left alone, and saving is then
/// refused so a valid state is never overwritten by defaults.
///
/// Blocking file I/O on the loop thread: the file is small (a few KiB) and written only
/// when an assignment or a store-backed value changes.
public final class StateStore {
  /// What ``load()`` found.
  public enum LoadOutcome: Equatable, Sendable {
    /// A valid snapshot.
    case loaded
    /// No state file yet (first start).
    case missing
    /// The file was corrupt; it was moved to `movedTo` (nil if even that failed).
    case corrupt(reason: String, movedTo: String?)
    /// The file exists but could not be read; saving is disabled.
    case unreadable(reason: String)
  }

  /// Larger files are not parsed (they cannot be ours): treated as corrupt.
  public static let maxFileSize = 16 * 1024 * 1024

  /// How many copies of corrupt state files (`<file>.corrupt-<n>`) are kept: the newest,
  /// which have the highest numbers. Older ones are removed when a new one is made, each
  /// logged by name (`state-corrupt-removed`). docs/configuration.md says so.
  public static let keptCorruptCopies = 3

  public let directory: String
  public let path: String
  private let logger: Logger?
  private var savingDisabledReason: String?

  /// A store for `directory/fileName`. Nothing is touched until ``load()`` or ``save(_:)``.
  public init(directory: String, fileName: String = "state.json", logger: Logger? = nil) {
    self.directory = directory
    self.path = directory + "/" + fileName
    self.logger = logger
  }

  /// Reads the snapshot; never throws. See ``LoadOutcome``.
  public func load() -> (snapshot: StateSnapshot, outcome: LoadOutcome) {
    let bytes: [UInt8]
    switch readFile() {
    case .success(nil):
      savingDisabledReason = nil
      logger?.info("No state file yet; starting from the configuration", event: "state-missing", ["path": path])
      return (.empty, .missing)
    case .success(let data?):
      bytes = data
    case .failure(let failure):
      let reason = failure.message
      savingDisabledReason = reason
      logger?.error(
        "State file cannot be read; not saving state until it can", event: "state-unreadable",
        ["path": path, "reason": reason])
      return (.empty, .unreadable(reason: reason))
    }
    savingDisabledReason = nil
    let reason: String
    if bytes.count > Self.maxFileSize {
      reason = "file is larger than \(Self.maxFileSize) bytes"
    } else if let text = String(validating: bytes, as: UTF8.self) {
      do {
        let snapshot = try StateSnapshot.decode(text)
        logger?.debug("State loaded", event: "state-loaded", ["path": path])
        return (snapshot, .loaded)
      } catch {
        reason = error.message
      }
    } else {
      reason = "not valid UTF-8"
    }
    let movedTo = moveAside()
    logger?.warning(
      "State file is corrupt; kept aside, starting from the configuration", event: "state-corrupt",
      ["path": path, "reason": reason, "moved-to": movedTo ?? "(could not be moved)"])
    return (.empty, .corrupt(reason: reason, movedTo: movedTo))
  }

  /// Writes `snapshot` atomically and durably (creating the directory if needed).
  public func save(_ snapshot: StateSnapshot) throws {
    if let savingDisabledReason {
      throw StateStoreError("not saving \(path): it could not be read at start (\(savingDisabledReason))")
    }
    try makeDirectory()
    let temporary = path + ".tmp"
    // A stale temporary (a crash between open and rename) or anything planted there is
    // removed, never written through: a symlink would send the state to its target. The
    // temporary is then created afresh and only as a new regular file.
    if unlink(temporary) != 0 && errno != ENOENT {
      throw SystemCallError.last("remove the stale \(temporary)")
    }
    let fd: Int32
    do {
      fd = try Syscall.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode: 0o644)
    } catch {
      throw SystemCallError("open \(temporary)", error)
    }
    do {
      do { try Syscall.writeAll(fd, Array(snapshot.encoded().utf8)) } catch {
        throw SystemCallError("write \(temporary)", error)
      }
      do { _ = try Syscall.retrying { fsync(fd) } } catch { throw SystemCallError("fsync \(temporary)", error) }
    } catch {
      Syscall.close(fd)
      _ = unlink(temporary)
      throw error
    }
    Syscall.close(fd)
    do { _ = try Syscall.retrying { rename(temporary, path) } } catch {
      _ = unlink(temporary)
      throw SystemCallError("rename \(temporary) to \(path)", error)
    }
    try syncDirectory()
  }

  // MARK: Internals

  /// The file's bytes, nil when it does not exist, or why it cannot be read. Opened
  /// non-blocking (a FIFO planted as the file would otherwise hang the daemon at start)
  /// and refused unless it is a regular file.
  private func readFile() -> Result<[UInt8]?, StateStoreError> {
    let fd: Int32
    do { fd = try Syscall.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) } catch {
      if error == .notFound { return .success(nil) }
      return .failure(StateStoreError("open: \(error)"))
    }
    defer { Syscall.close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { return .failure(StateStoreError(SystemCallError.last("fstat").description)) }
    guard info.st_mode & S_IFMT == S_IFREG else {
      return .failure(StateStoreError("not a regular file (\(StateStore.fileType(info.st_mode)))"))
    }
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let result: IOResult<Int>
      do { result = try buffer.withUnsafeMutableBytes { try Syscall.read(fd, into: $0) } } catch {
        return .failure(StateStoreError("read: \(error)"))
      }
      guard case .done(let n) = result, n > 0 else { break }
      data += buffer[0..<n]
      // Stop early: an oversized file is corrupt whatever the rest says.
      if data.count > Self.maxFileSize { break }
    }
    return .success(data)
  }

  private static func fileType(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFDIR: "a directory"
    case S_IFIFO: "a FIFO"
    case S_IFSOCK: "a socket"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    default: "type \(String(mode & S_IFMT, radix: 8))"
    }
  }

  /// A `<file>.corrupt-<n>` entry of the state directory.
  private struct CorruptCopy {
    var number: Int
    var path: String
    /// Only regular files are ever removed: anything else with such a name was put there
    /// by someone else.
    var isRegularFile: Bool
  }

  /// Renames the file to `<file>.corrupt-<n>`, `n` one above the highest there is (so the
  /// highest numbers are the newest copies, whatever gaps there are), then removes the
  /// copies beyond the newest ``keptCorruptCopies``.
  private func moveAside() -> String? {
    let copies: [CorruptCopy]?
    switch corruptCopies() {
    case .success(let found): copies = found
    case .failure(let error):
      // The file is still moved aside (numbered by probing, as before there was a bound);
      // nothing is removed, so nothing is lost, and the log says why the bound does not hold.
      copies = nil
      logger?.error(
        "Cannot list the state directory; old copies of corrupt state files are not removed",
        event: "state-corrupt-cleanup-failed", ["path": directory, "reason": error.description])
    }
    var n = (copies?.map(\.number).max() ?? 0) + 1
    var info = stat()
    // A name taken since the listing (or any, without one) is skipped, never replaced.
    while lstat("\(path).corrupt-\(n)", &info) == 0 {
      guard n < Int.max else { return nil }
      n += 1
    }
    let candidate = "\(path).corrupt-\(n)"
    guard rename(path, candidate) == 0 else {
      let error = Errno.current  // before the log's fields are built: that may change errno
      logger?.error(
        "Cannot move the corrupt state file aside", event: "state-corrupt-move-failed",
        ["path": path, "reason": error.description])
      return nil
    }
    if let copies {
      removeOldCopies(copies + [CorruptCopy(number: n, path: candidate, isRegularFile: true)])
    }
    try? syncDirectory()
    return candidate
  }

  /// The `<file>.corrupt-<n>` entries of the state directory (`n` written as the store
  /// writes it: decimal, no sign, no leading zero), or why the directory cannot be listed.
  private func corruptCopies() -> Result<[CorruptCopy], Errno> {
    guard let dir = opendir(directory) else { return .failure(Errno.current) }
    defer { closedir(dir) }
    let fileName = String(path.dropFirst(directory.count + 1))
    let prefix = fileName + ".corrupt-"
    var copies: [CorruptCopy] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      guard name.hasPrefix(prefix) else { continue }
      let digits = name.dropFirst(prefix.count)
      guard let n = Int(digits), n > 0, String(n) == digits else { continue }
      let full = directory + "/" + name
      var info = stat()
      // lstat: a symlink is not followed, and counts as not ours.
      guard lstat(full, &info) == 0 else { continue }
      copies.append(CorruptCopy(number: n, path: full, isRegularFile: info.st_mode & S_IFMT == S_IFREG))
    }
    return .success(copies)
  }

  /// Removes the regular files among `copies` beyond the newest ``keptCorruptCopies``,
  /// logging each by name; entries that are not regular files are left alone (and said so).
  private func removeOldCopies(_ copies: [CorruptCopy]) {
    let files = copies.filter(\.isRegularFile).sorted { $0.number > $1.number }
    for other in copies where !other.isRegularFile {
      logger?.warning(
        "Not a regular file; left alone, and not counted among the kept corrupt state copies",
        event: "state-corrupt-not-removed", ["path": other.path])
    }
    // Oldest first: stopped half-way, the store has still kept the newer ones.
    for old in files.dropFirst(Self.keptCorruptCopies).reversed() {
      if unlink(old.path) == 0 {
        logger?.notice(
          "Removed an old copy of a corrupt state file (the newest \(Self.keptCorruptCopies) are kept)",
          event: "state-corrupt-removed", ["path": old.path])
      } else {
        let error = Errno.current
        logger?.error(
          "Cannot remove an old copy of a corrupt state file", event: "state-corrupt-remove-failed",
          ["path": old.path, "reason": error.description])
      }
    }
  }

  private func makeDirectory() throws {
    var prefix = directory.hasPrefix("/") ? "" : "."
    for component in directory.split(separator: "/") {
      prefix += "/" + component
      if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
        throw SystemCallError.last("mkdir \(prefix)")
      }
    }
  }

  private func syncDirectory() throws {
    let fd: Int32
    do { fd = try Syscall.open(directory, O_RDONLY | O_DIRECTORY) } catch {
      throw SystemCallError("open \(directory)", error)
    }
    defer { Syscall.close(fd) }
    do { _ = try Syscall.retrying { fsync(fd) } } catch { throw SystemCallError("fsync \(directory)", error) }
  }
}

/// A state store refusal that is not a system call failure.
public struct StateStoreError: Error, CustomStringConvertible, Sendable {
  public var message: String
  public init(_ message: String) { self.message = message }
  public var description: String { message }
}
