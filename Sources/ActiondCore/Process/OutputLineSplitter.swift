// SPDX-License-Identifier: Apache-2.0
/// Splits one stream of a command's output into lines under a shared budget.
///
/// Memory is bounded by ``ProcessOutputLimits/maxLineBytes`` whatever the command prints:
/// a long line is cut and the rest skipped up to its newline; once the run's budget of
/// lines or bytes is spent, lines are only counted.
public struct OutputLineSplitter {
  /// What a run may still forward; shared by its stdout and stderr splitters.
  public struct Budget {
    public var limits: ProcessOutputLimits
    public var forwardedLines = 0
    public var forwardedBytes = 0
    public var discardedLines = 0
    public var discardedBytes = 0
    /// Once a line is refused, every later one is too: the log shows a prefix of the
    /// output, never one with holes.
    public private(set) var exhausted = false
    public init(limits: ProcessOutputLimits) { self.limits = limits }

    mutating func admit(byteCount: Int) -> Bool {
      if !exhausted && forwardedLines < limits.maxLines && forwardedBytes + byteCount <= limits.maxBytes {
        forwardedLines += 1
        forwardedBytes += byteCount
        return true
      }
      exhausted = true
      discardedLines += 1
      discardedBytes += byteCount
      return false
    }
  }

  public let stream: ProcessOutputStream
  private var pending: [UInt8] = []
  /// Inside a line that was already cut: skip until its newline.
  private var skipping = false
  /// Bytes of the current line were seen but not kept (the budget is exhausted).
  private var openDiscarded = false

  public init(stream: ProcessOutputStream) { self.stream = stream }

  /// Feeds bytes as read; calls `emit` for each complete line the budget admits.
  public mutating func feed(
    _ bytes: UnsafeRawBufferPointer, budget: inout Budget, emit: (ProcessOutputLine) -> Void
  ) {
    guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
    let count = bytes.count
    let maxLine = max(budget.limits.maxLineBytes, 1)
    var start = 0
    while start < count {
      // A plain pointer scan: this runs over every byte a command prints (100 MB in the
      // tests), and generic collection searching is slow in unoptimised builds.
      var end = start
      while end < count && base[end] != 0x0A { end += 1 }
      let hasNewline = end < count
      let length = end - start
      if skipping {
        budget.discardedBytes += length
      } else if budget.exhausted {
        budget.discardedBytes += length
        if length > 0 { openDiscarded = true }
      } else {
        let take = min(maxLine - pending.count, length)
        pending.append(contentsOf: UnsafeBufferPointer(start: base + start, count: take))
        if length > take {
          // The line is longer than allowed: deliver the cut part now, skip the rest.
          budget.discardedBytes += length - take
          deliver(truncated: true, budget: &budget, emit: emit)
          skipping = true
        }
      }
      guard hasNewline else { return }
      if skipping {
        skipping = false
      } else {
        deliver(truncated: false, budget: &budget, emit: emit)
      }
      start = end + 1
    }
  }

  /// At end of output: a last line without a newline is still a line.
  public mutating func finish(budget: inout Budget, emit: (ProcessOutputLine) -> Void) {
    if !pending.isEmpty || openDiscarded { deliver(truncated: false, budget: &budget, emit: emit) }
    skipping = false
  }

  private mutating func deliver(truncated: Bool, budget: inout Budget, emit: (ProcessOutputLine) -> Void) {
    var line = pending[...]
    if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
    if budget.admit(byteCount: line.count) {
      emit(ProcessOutputLine(stream: stream, text: String(decoding: line, as: UTF8.self), truncated: truncated))
    }
    pending.removeAll(keepingCapacity: true)
    openDiscarded = false
  }
}
