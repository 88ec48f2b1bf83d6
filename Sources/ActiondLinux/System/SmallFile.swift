// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Small files read and written whole, with one call each: sysfs attributes, FIFOs, a
/// value provider's flag file, the file a `write` intent writes.
package enum SmallFile {
  /// Writes `text` to an existing file (sysfs attributes, FIFOs, regular files), the way
  /// a `write` intent does: no creation, truncation for regular files, one write.
  package static func write(_ path: String, _ text: String) -> String? {
    let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
    guard fd >= 0 else { return SystemCallError.last("cannot open \(path)").description }
    defer { close(fd) }
    do {
      try Syscall.writeAll(fd, Array(text.utf8))
      return nil
    } catch {
      return "cannot write \(path): \(error)"
    }
  }

  /// Reads at most 64 KiB of a file (a value provider's file is a flag, not a document).
  package static func read(_ path: String) -> (text: String?, error: String?) {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
    guard fd >= 0 else { return (nil, SystemCallError.last("cannot open \(path)").description) }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 65536)
    let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
    guard n >= 0 else { return (nil, SystemCallError.last("cannot read \(path)").description) }
    return (String(decoding: buffer[0..<n], as: UTF8.self), nil)
  }
}
