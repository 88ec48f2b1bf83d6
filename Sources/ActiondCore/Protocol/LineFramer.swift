// SPDX-License-Identifier: Apache-2.0
/// Splits a byte stream into newline-terminated lines, however the bytes arrive:
/// one at a time, or many lines in one read.
///
/// A line longer than `maxLineLength` (the newline and a `\r` before it excluded) is reported as soon as the
/// limit is crossed, without waiting for its end, so a peer cannot make the daemon
/// buffer without bound; after that the framer yields nothing more (the stream has
/// lost its framing and the server closes it). A `\r` before the newline is dropped
/// and empty lines are skipped, so hand-typed input through `socat` works.
///
/// Scanning resumes where the previous search stopped, so feeding a long line one
/// byte at a time stays linear.
public struct LineFramer {
  public enum Output: Hashable, Sendable {
    case line([UInt8])
    /// The current line exceeded `maxLineLength`; the stream cannot be resynchronised.
    case tooLong
  }

  public let maxLineLength: Int
  private var buffer: [UInt8] = []
  /// Index of the first byte of the current (incomplete) line.
  private var start = 0
  /// Bytes from `start` up to here contain no newline.
  private var scanned = 0
  /// Set once a line was too long; nothing is yielded afterwards.
  public private(set) var failed = false

  public init(maxLineLength: Int = ProtocolVersion.maxLineLength) {
    precondition(maxLineLength > 0, "a line limit must be positive")
    self.maxLineLength = maxLineLength
  }

  /// Bytes held that do not yet form a complete line.
  public var bufferedCount: Int { buffer.count - start }

  public mutating func append(_ bytes: UnsafeRawBufferPointer) {
    guard !failed else { return }
    buffer.append(contentsOf: bytes)
  }

  public mutating func append<S: Sequence<UInt8>>(contentsOf bytes: S) {
    guard !failed else { return }
    buffer.append(contentsOf: bytes)
  }

  /// The next complete line, `.tooLong` once, or nil when more bytes are needed.
  public mutating func next() -> Output? {
    while !failed {
      var newline: Int? = nil
      var i = scanned
      while i < buffer.count {
        if buffer[i] == UInt8(ascii: "\n") {
          newline = i
          break
        }
        i += 1
      }
      guard let end = newline else {
        scanned = buffer.count
        // One byte over the limit may still be the `\r` of a `\r\n` that is not here yet.
        let pending = buffer.count - start
        if pending > maxLineLength + 1 || (pending == maxLineLength + 1 && buffer.last != UInt8(ascii: "\r")) {
          return fail()
        }
        compact()
        return nil
      }
      var lineEnd = end
      if lineEnd > start && buffer[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
      let lineStart = start
      start = end + 1
      scanned = start
      // protocol.md: a `\r` before the newline is ignored, so the limit does not count it.
      if lineEnd - lineStart > maxLineLength { return fail() }
      if lineEnd == lineStart { continue }  // empty line
      return .line(Array(buffer[lineStart..<lineEnd]))
    }
    return nil
  }

  private mutating func fail() -> Output {
    failed = true
    buffer = []
    start = 0
    scanned = 0
    return .tooLong
  }

  /// Drops consumed bytes once they dominate the buffer, keeping appends amortised O(1).
  private mutating func compact() {
    if start == buffer.count {
      buffer.removeAll(keepingCapacity: buffer.capacity <= 2 * maxLineLength)
      start = 0
      scanned = 0
    } else if start >= 4096 && start * 2 >= buffer.count {
      buffer.removeFirst(start)
      scanned -= start
      start = 0
    }
  }
}
