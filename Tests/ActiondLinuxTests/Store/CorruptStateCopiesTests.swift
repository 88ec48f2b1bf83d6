// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import ActiondTesting
import Glibc
import Testing

/// docs/configuration.md (state file): a corrupt state file is moved aside as
/// `state.json.corrupt-N`, and only the newest three such copies are kept; each one
/// removed is logged by name.
@Suite struct CorruptStateCopiesTests {
  /// One start of the daemon's store on a corrupt file: load, as `Daemon` does at start.
  private func start(_ dir: TemporaryDirectory, content: String) throws -> RecordingLogSink {
    try dir.write("state.json", content)
    let sink = RecordingLogSink()
    let store = StateStore(directory: dir.path, logger: Logger(minimumLevel: .debug, sink: sink))
    guard case .corrupt = store.load().outcome else {
      Issue.record("expected corrupt")
      return sink
    }
    return sink
  }

  private func removed(_ sink: RecordingLogSink) -> [String] {
    sink.records(event: "state-corrupt-removed").map { $0[field: "path"] ?? "?" }
  }

  @Test func twentyStartsOnACorruptFileKeepTheNewestThree() throws {
    #expect(StateStore.keptCorruptCopies == 3)
    let dir = try TemporaryDirectory()
    var removedAll: [String] = []
    for i in 1...20 {
      let sink = try start(dir, content: "corrupt \(i) {")
      let removedNow = removed(sink)
      // From the fourth start on, each start removes exactly the one copy that fell out.
      #expect(removedNow == (i <= 3 ? [] : [dir.file("state.json.corrupt-\(i - 3)")]), "start \(i)")
      #expect(sink.records(event: "state-corrupt-removed").allSatisfy { $0.level == .notice })
      removedAll += removedNow
    }
    #expect(dir.entries() == ["state.json.corrupt-18", "state.json.corrupt-19", "state.json.corrupt-20"])
    for i in 18...20 {
      #expect(readFile(dir.file("state.json.corrupt-\(i)")) == "corrupt \(i) {", "kept byte for byte")
    }
    #expect(removedAll == (1...17).map { dir.file("state.json.corrupt-\($0)") })
  }

  /// Gaps in the numbering: the new copy is numbered above the highest, and the newest
  /// are the highest numbers. Names the store does not write are not its copies.
  @Test func gapsInTheNumbering() throws {
    let dir = try TemporaryDirectory()
    for name in [
      "state.json.corrupt-1", "state.json.corrupt-5", "state.json.corrupt-9", "state.json.corrupt-07",
      "state.json.corrupt-0", "state.json.corrupt-x", "state.json.corrupt-", "state.json.corrupt--2",
      "other.json.corrupt-1",
    ] {
      try dir.write(name, name)
    }
    let sink = try start(dir, content: "new {")
    #expect(readFile(dir.file("state.json.corrupt-10")) == "new {")
    #expect(removed(sink) == [dir.file("state.json.corrupt-1")])
    #expect(
      dir.entries() == [
        "other.json.corrupt-1", "state.json.corrupt-", "state.json.corrupt--2", "state.json.corrupt-0",
        "state.json.corrupt-07", "state.json.corrupt-10", "state.json.corrupt-5", "state.json.corrupt-9",
        "state.json.corrupt-x",
      ])
  }

  /// A directory or a symlink with a copy's name is not the store's: it is neither
  /// removed nor counted (and the log says so), and a symlink's target is untouched.
  @Test func somethingOtherThanAFileWithACopysName() throws {
    let dir = try TemporaryDirectory()
    for n in [1, 4, 5] { try dir.write("state.json.corrupt-\(n)", "old \(n)") }
    #expect(mkdir(dir.file("state.json.corrupt-2"), 0o755) == 0)
    try dir.write("state.json.corrupt-2/inside", "keep me")
    let victim = try dir.write("victim", "precious")
    #expect(symlink(victim, dir.file("state.json.corrupt-3")) == 0)
    #expect(mkfifo(dir.file("state.json.corrupt-7"), 0o644) == 0)
    let sink = try start(dir, content: "new {")
    #expect(readFile(dir.file("state.json.corrupt-8")) == "new {")
    // The regular files are 8, 5, 4 and 1: 1 goes.
    #expect(removed(sink) == [dir.file("state.json.corrupt-1")])
    #expect(readFile(dir.file("state.json.corrupt-2/inside")) == "keep me")
    #expect(readFile(victim) == "precious")
    var info = stat()
    #expect(lstat(dir.file("state.json.corrupt-3"), &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
    #expect(lstat(dir.file("state.json.corrupt-7"), &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
    let leftAlone = Set(sink.records(event: "state-corrupt-not-removed").map { $0[field: "path"] ?? "?" })
    #expect(leftAlone == Set([2, 3, 7].map { dir.file("state.json.corrupt-\($0)") }))
  }

  /// The state file under another name: its copies are `<name>.corrupt-N`.
  @Test func anotherFileName() throws {
    let dir = try TemporaryDirectory()
    for n in 1...4 { try dir.write("custom.json.corrupt-\(n)", "old") }
    try dir.write("state.json.corrupt-1", "not this store's")
    try dir.write("custom.json", "{")
    let sink = RecordingLogSink()
    _ = StateStore(directory: dir.path, fileName: "custom.json", logger: Logger(sink: sink)).load()
    #expect(removed(sink) == [1, 2].map { dir.file("custom.json.corrupt-\($0)") })
    #expect(
      dir.entries() == [
        "custom.json.corrupt-3", "custom.json.corrupt-4", "custom.json.corrupt-5", "state.json.corrupt-1",
      ])
  }
}
