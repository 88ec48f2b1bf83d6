// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import ActiondTesting
import Glibc
import Testing

@Suite struct StateStoreTests {
  let sample = StateSnapshot(
    assignments: ["action": [.hold: .init(kind: "org.example.timer", configuration: ["minutes": 25])]],
    values: ["org.example.timer": true])

  @Test func missingThenSavedThenLoaded() throws {
    let dir = try TemporaryDirectory()
    let stateDir = dir.file("var/lib/actiond")  // created on first save
    let sink = RecordingLogSink()
    let store = StateStore(directory: stateDir, logger: Logger(minimumLevel: .debug, sink: sink))
    let (first, outcome) = store.load()
    #expect(first == .empty)
    #expect(outcome == .missing)
    try store.save(sample)
    #expect(readFile(stateDir + "/state.json") == sample.encoded())
    #expect(listDirectory(stateDir) == ["state.json"], "no temporary file left behind")
    let (loaded, loadedOutcome) = StateStore(directory: stateDir).load()
    #expect(loadedOutcome == .loaded)
    #expect(loaded == sample)
    var changed = sample
    changed.values["org.example.timer"] = false
    try store.save(changed)
    #expect(StateStore(directory: stateDir).load().snapshot == changed)
    #expect(sink.records(event: "state-missing").count == 1)
  }

  @Test(arguments: [
    ("garbage {", "invalid JSON"),
    ("", "invalid JSON"),
    ("{\"version\": 7}", "$.version: format version 7"),
    ("{\"version\": 1, \"values\": {\"x\": \"on\"}}", "$.values.x: expected boolean"),
  ])
  func corruptFilesAreKeptAsideAndLogged(content: String, reason: String) throws {
    let dir = try TemporaryDirectory()
    try dir.write("state.json", content)
    let sink = RecordingLogSink()
    let store = StateStore(directory: dir.path, logger: Logger(sink: sink))
    let (snapshot, outcome) = store.load()
    #expect(snapshot == .empty)
    guard case .corrupt(let message, let movedTo) = outcome else {
      Issue.record("expected corrupt, got \(outcome)")
      return
    }
    #expect(message.hasPrefix(reason))
    #expect(movedTo == dir.file("state.json.corrupt-1"))
    #expect(readFile(dir.file("state.json.corrupt-1")) == content, "the corrupt file is kept byte for byte")
    #expect(dir.entries() == ["state.json.corrupt-1"])
    let logged = try #require(sink.records(event: "state-corrupt").first)
    #expect(logged.level == .warning)
    #expect(logged[field: "moved-to"] == dir.file("state.json.corrupt-1"))
    // The daemon keeps working: it saves its defaults, and the next corruption gets -2.
    try store.save(sample)
    try dir.write("state.json", "\u{0}\u{1}")
    guard case .corrupt(_, let second) = store.load().outcome else {
      Issue.record("expected the second file to be corrupt")
      return
    }
    #expect(second == dir.file("state.json.corrupt-2"))
    #expect(dir.entries() == ["state.json.corrupt-1", "state.json.corrupt-2"])
  }

  @Test func invalidUTF8IsCorrupt() throws {
    let dir = try TemporaryDirectory()
    let fd = try Syscall.open(dir.file("state.json"), O_WRONLY | O_CREAT, mode: 0o644)
    try Syscall.writeAll(fd, [0x7B, 0xFF, 0xFE, 0x7D])
    Syscall.close(fd)
    #expect(
      StateStore(directory: dir.path).load().outcome
        == .corrupt(reason: "not valid UTF-8", movedTo: dir.file("state.json.corrupt-1")))
  }

  @Test func aSymlinkPlantedAtTheTemporaryIsReplacedNotFollowed() throws {
    let dir = try TemporaryDirectory()
    let victim = try dir.write("victim", "precious\n")
    guard symlink(victim, dir.file("state.json.tmp")) == 0 else { throw Errno.current }
    let store = StateStore(directory: dir.path)
    _ = store.load()
    try store.save(sample)
    #expect(readFile(victim) == "precious\n", "the symlink's target was overwritten")
    #expect(readFile(dir.file("state.json")) == sample.encoded())
    var info = stat()
    #expect(lstat(dir.file("state.json"), &info) == 0 && info.st_mode & S_IFMT == S_IFREG)
  }

  /// Root ignores permission bits, so an unwritable state directory is made by putting a
  /// directory where the temporary file goes: the save fails, the old file stays intact.
  @Test func aFailedSaveThrowsAndLeavesTheOldFileIntact() throws {
    let dir = try TemporaryDirectory()
    let store = StateStore(directory: dir.path)
    _ = store.load()
    try store.save(sample)
    guard mkdir(dir.file("state.json.tmp"), 0o755) == 0 else { throw Errno.current }
    var changed = sample
    changed.values["org.example.timer"] = false
    #expect(throws: (any Error).self) { try store.save(changed) }
    #expect(readFile(dir.file("state.json")) == sample.encoded())
    // A file where the state directory should be fails the same way.
    let blocked = StateStore(directory: try dir.write("not-a-directory", ""))
    _ = blocked.load()
    #expect(throws: (any Error).self) { try blocked.save(sample) }
  }

  /// A FIFO named state.json must not hang the daemon at start: it is refused (and
  /// logged) as a file that cannot be read, and saving is off so it is not replaced.
  @Test func aFIFOAsTheStateFileIsRefusedAtOnce() throws {
    let dir = try TemporaryDirectory()
    guard mkfifo(dir.file("state.json"), 0o644) == 0 else { throw Errno.current }
    let (store, sink) = loadRefused(dir, kind: "a FIFO")
    #expect(sink.records(event: "state-unreadable").count == 1)
    #expect(throws: (any Error).self) { try store.save(sample) }
  }

  @Test func aStaleTemporaryFileFromACrashIsHarmless() throws {
    let dir = try TemporaryDirectory()
    let store = StateStore(directory: dir.path)
    try store.save(sample)
    try dir.write("state.json.tmp", "{\"version\": 1, \"val")  // a writer died mid-write
    #expect(store.load().snapshot == sample)
    try store.save(.empty)
    #expect(dir.entries() == ["state.json"])
    #expect(store.load().snapshot == .empty)
  }

  @Test func anUnreadableFileIsNeitherMovedNorOverwritten() throws {
    let dir = try TemporaryDirectory()
    #expect(mkdir(dir.file("state.json"), 0o755) == 0)  // refused: not a regular file
    let (store, sink) = loadRefused(dir, kind: "a directory")
    #expect(throws: StateStoreError.self) { try store.save(sample) }
    #expect(dir.entries() == ["state.json"])
    #expect(sink.records(event: "state-unreadable").first?.level == .error)
  }

  /// A writer saving snapshot after snapshot is SIGKILLed at random points, many times.
  /// After every kill the file must load, and hold the last snapshot whose save returned
  /// or the one being written (never older, never corrupt); the next writer continues
  /// from what was loaded.
  ///
  /// The kill points are random but counted in the writer's own progress, not in time: a
  /// round lets the writer report a random number of saves (0 to 8), then SIGTERMs it
  /// (ignored) and SIGKILLs it a random 0-5 ms later. So a slow or loaded machine changes
  /// only where in a save the kill lands, never whether saves happen. Seeded: a failure
  /// names its seed; `ACTIOND_TEST_SEED=N swift test --filter crashSafety` replays it.
  @Test func crashSafetyUnderRandomSIGKILL() throws {
    let helper = try builtExecutablePath("actiond-test-helper")
    let seed = testSeed()
    print("crashSafetyUnderRandomSIGKILL: seed \(seed) (ACTIOND_TEST_SEED=\(seed) to replay)")
    var generator = SplitMix64(seed: seed)
    let dir = try TemporaryDirectory()
    let loop = try EventLoop()
    let runner = ProcessRunner(loop: loop)
    var next: Int64 = 0
    var progressed = 0
    for round in 0..<40 {
      let context = "seed \(seed), round \(round)"
      var lastSaved: Int64?
      var saves = 0
      var errors: [String] = []
      var result: ProcessResult?
      let savesBeforeKill = Int.random(in: 0...8, using: &generator)
      let request = ProcessRequest(
        argv: [helper, "write-state", dir.path, String(next)],
        timeout: .seconds(120),
        killGracePeriod: .microseconds(Int64.random(in: 0...5000, using: &generator)),
        outputLimits: ProcessOutputLimits(maxLineBytes: 64, maxLines: 10_000_000, maxBytes: 1 << 30))
      runner.run(
        request,
        output: { line in
          if line.stream == .stdout, let n = Int64(line.text) {
            lastSaved = n
            saves += 1
          } else {
            errors.append(line.text)
          }
        },
        completion: { result = $0 })
      var killed = false
      while result == nil {
        if !killed && saves >= savesBeforeKill {
          runner.terminateAll()
          killed = true
        }
        try loop.runOnce(until: loop.now() + .seconds(30))
      }
      #expect(killed, "\(context): the writer exited by itself: \(String(describing: result))")
      #expect(result?.outcome == .stopped, "\(context): \(String(describing: result))")
      #expect(errors.isEmpty, "\(context): \(errors)")
      let (snapshot, outcome) = StateStore(directory: dir.path).load()
      if next == 0 && lastSaved == nil && outcome == .missing { continue }  // killed before the first save
      #expect(outcome == .loaded, "\(context): \(outcome)")
      let loaded = try #require(
        snapshot.assignments["action"]?[.hold]?.configuration["n"]?.integerValue, "\(context)")
      let floor = lastSaved ?? (next - 1)
      #expect(loaded == floor || loaded == floor + 1, "\(context): loaded \(loaded), last saved \(floor)")
      #expect(snapshot == helperSnapshot(loaded), "\(context)")
      if loaded >= next { progressed += 1 }
      next = loaded + 1
    }
    #expect(progressed > 0, "seed \(seed): the writer completed saves in some rounds")
    #expect(!listDirectory(dir.path).contains { $0.contains("corrupt") }, "seed \(seed)")
  }
}

/// The seed of a randomized test: `ACTIOND_TEST_SEED` when set (to replay a failure),
/// else a fresh one.
/// A store on `dir`, whose state.json is not a regular file (`kind`: "a FIFO", "a
/// directory"), loaded: nothing is loaded and the reason says what the file is. The sink
/// holds what it logged.
private func loadRefused(_ dir: TemporaryDirectory, kind: String) -> (StateStore, RecordingLogSink) {
  let sink = RecordingLogSink()
  let store = StateStore(directory: dir.path, logger: Logger(sink: sink))
  let (snapshot, outcome) = store.load()
  #expect(snapshot == .empty)
  if case .unreadable(let reason) = outcome {
    #expect(reason.contains("not a regular file (\(kind))"), "\(reason)")
  } else {
    Issue.record("expected unreadable, got \(outcome)")
  }
  return (store, sink)
}

private func testSeed() -> UInt64 {
  if let text = getenv("ACTIOND_TEST_SEED"), let seed = UInt64(String(cString: text)) { return seed }
  var system = SystemRandomNumberGenerator()
  return system.next()
}

/// The snapshot the helper writes for `n`, a copy of `TestHelper.snapshot(_:)`: the helper cannot
/// link ActiondTesting (swift-testing) and this target cannot import the helper (ActiondDaemon).
private func helperSnapshot(_ n: Int64) -> StateSnapshot {
  StateSnapshot(
    assignments: [
      "action": [
        .hold: .init(
          kind: "org.example.counter",
          configuration: ["n": .integer(n), "padding": .string(String(repeating: "x", count: Int(n % 7) * 1500))])
      ]
    ],
    values: ["org.example.timer": n % 2 == 0, "n-\(n % 5)": true])
}
