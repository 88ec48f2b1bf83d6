# SPDX-License-Identifier: Apache-2.0
# EXPERIMENT ONLY (never committed): CLOCK_MONOTONIC stamps of the deadline turn's steps,
# printed to stderr at stop: "stamp D wake handler runIntent reqStart reqEnd runEntry
# prepStart spawn0 spawn1 runRet". Against the tree of its day, commit f17e010 (2026-12-01),
# where the daemon was Sources/ActiondLinux/Daemon/ and the deadline turn EngineEffects':
# run it on a checkout of that commit. Not ported: the turn has since moved to another
# module than the loop and the runner it stamps (Sources/ActiondDaemon/EffectInterpreter.swift)
# and changed its order, so the same marks would measure other steps.
import sys
root = sys.argv[1]
def edit(path, pairs):
    p = root + "/" + path
    s = open(p).read()
    for a, b in pairs:
        assert s.count(a) == 1, (path, a, s.count(a))
        s = s.replace(a, b)
    open(p, "w").write(s)
edit("Sources/ActiondLinux/Daemon/EngineEffects.swift", [
("final class EngineEffects {", '''enum ExpStamps {
  static let enabled = getenv("ACTIOND_EXP_STAMPS") != nil
  nonisolated(unsafe) static var wake: Int64 = 0
  nonisolated(unsafe) static var current: [Int64] = []
  nonisolated(unsafe) static var lines: [String] = []
  nonisolated(unsafe) static var active = false
  static func mark(_ index: Int) {
    guard active else { return }
    if current[index] == 0 { current[index] = Syscall.monotonicNanoseconds() }
  }
  static func dump() {
    for line in lines { _ = line.withCString { write(2, $0, strlen($0)) } }
    lines.removeAll()
  }
}

final class EngineEffects {'''),
("""  func stop() {
    stopping = true""", """  func stop() {
    ExpStamps.dump()
    stopping = true"""),
("""    timer = loop.schedule(at: deadline) { [unowned self] now in
      self.timer = nil""", """    timer = loop.schedule(at: deadline) { [unowned self] now in
      if ExpStamps.enabled {
        ExpStamps.active = true
        ExpStamps.current = [deadline.nanoseconds, ExpStamps.wake, Syscall.monotonicNanoseconds()] + Array(repeating: 0, count: 8)
      }
      self.timer = nil"""),
("""      self.handlingDeadline = false
      if let quiet { self.loop.endQuiet(quiet) }""", """      self.handlingDeadline = false
      if let quiet { self.loop.endQuiet(quiet) }
      if ExpStamps.active {
        ExpStamps.active = false
        ExpStamps.lines.append("stamp " + ExpStamps.current.map(String.init).joined(separator: " ") + "\\n")
      }"""),
("""  func runIntent(_ job: ControlEngine.PerformJob) {
""", """  func runIntent(_ job: ControlEngine.PerformJob) {
    ExpStamps.mark(3)
"""),
("""    let request: ProcessRequest
    switch processRequest(spec, extra: extra) {
    case .success(let made): request = made""", """    let request: ProcessRequest
    ExpStamps.mark(4)
    let made = processRequest(spec, extra: extra)
    ExpStamps.mark(5)
    switch made {
    case .success(let made): request = made"""),
])
edit("Sources/ActiondLinux/Loop/EventLoop.swift", [
("""    let count = try wait(epollFD, &events, timeout: timeout)
""", """    let count = try wait(epollFD, &events, timeout: timeout)
    if ExpStamps.enabled { ExpStamps.wake = Syscall.monotonicNanoseconds() }
"""),
])
edit("Sources/ActiondLinux/Process/ProcessRunner.swift", [
("""    let id = next
    next += 1
    let started = loop.now()
    switch spawn(request) {""", """    ExpStamps.mark(6)
    let id = next
    next += 1
    let started = loop.now()
    defer { ExpStamps.mark(10) }
    switch spawn(request) {"""),
("""    let cArgv = CStringArray(argv)""", """    ExpStamps.mark(7)
    let cArgv = CStringArray(argv)"""),
("""    let rc = posix_spawn(&pid, executable, &actions, &attributes, cArgv.pointer, envp.pointer)""", """    ExpStamps.mark(8)
    let rc = posix_spawn(&pid, executable, &actions, &attributes, cArgv.pointer, envp.pointer)
    ExpStamps.mark(9)"""),
])
