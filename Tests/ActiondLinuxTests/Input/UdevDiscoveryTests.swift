// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import Glibc
import Testing

@testable import ActiondLinux

/// Lines `KEY=value` of a sysfs `uevent` file.
private func ueventProperties(_ path: String) throws -> [String: String] {
  let fd = open(path, O_RDONLY | O_CLOEXEC)
  try #require(fd >= 0)
  defer { close(fd) }
  var bytes: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 4096)
  while true {
    let n = read(fd, &buffer, buffer.count)
    try #require(n >= 0)
    if n == 0 { break }
    bytes += buffer[0..<n]
  }
  var result: [String: String] = [:]
  for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
    guard let eq = line.firstIndex(of: "=") else { continue }
    result[String(line[..<eq])] = String(line[line.index(after: eq)...])
  }
  return result
}

/// The `event*` entries of /sys/class/input.
private func sysfsEventNodes() -> [String] {
  guard let dir = opendir("/sys/class/input") else { return [] }
  defer { closedir(dir) }
  var names: [String] = []
  while let entry = readdir(dir) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
    if UdevDiscovery.isEventNode(sysname: name) { names.append(name) }
  }
  return names.sorted()
}

@Suite struct UdevDiscoveryTests {
  @Test func onlyEvdevNodesCount() {
    #expect(UdevDiscovery.isEventNode(sysname: "event0"))
    #expect(UdevDiscovery.isEventNode(sysname: "event17"))
    for name in ["event", "input3", "js0", "mouse1", "mice", "eventx", "event1a", "xevent1"] {
      #expect(!UdevDiscovery.isEventNode(sysname: name), "\(name)")
    }
  }

  @Test func enumerationFindsExactlyTheEventNodesInSysfs() throws {
    let discovery = try UdevDiscovery()
    let devices = try discovery.enumerate()
    for device in devices {
      #expect(device.devnode?.hasPrefix("/dev/input/event") == true)
      #expect(device.syspath.hasPrefix("/sys/"))
    }
    let names = devices.compactMap { $0.syspath.split(separator: "/").last.map(String.init) }.sorted()
    // With udevd running, nodes it has not processed yet are left to the monitor.
    if !discovery.udevIsActive { #expect(names == sysfsEventNodes()) }
  }

  @Test func aDeviceInfoCarriesTheNodeAndEveryProperty() throws {
    let discovery = try UdevDiscovery()
    let info = try #require(discovery.info(syspath: "/sys/devices/virtual/mem/null"))
    #expect(info.syspath == "/sys/devices/virtual/mem/null")
    #expect(info.devnode == "/dev/null")
    #expect(info.properties["SUBSYSTEM"] == "mem")
    #expect(info.properties["DEVNAME"] == "/dev/null")
    #expect(info.properties["DEVPATH"] == "/devices/virtual/mem/null")
    for (key, value) in try ueventProperties("/sys/devices/virtual/mem/null/uevent") where key != "DEVNAME" {
      #expect(info.properties[key] == value, "\(key)")
    }
    // Not an input device: no input parent to take a name or ids from.
    #expect(info.name == "")
    #expect(info.phys == nil && info.bustype == 0 && info.vendor == 0)
  }

  @Test func aMissingDeviceHasNoInfo() throws {
    #expect(try UdevDiscovery().info(syspath: "/sys/devices/virtual/mem/no-such-device") == nil)
  }

  @Test func kernelQuotesAreStrippedFromNames() {
    #expect(unquoted("\"gpio-keys\"") == "gpio-keys")
    #expect(unquoted("gpio-keys") == "gpio-keys")
    #expect(unquoted("\"") == "\"")
    #expect(unquoted("\"\"") == "")
  }

  @Test func theMonitorIsNonBlockingAndWatchedByTheLoop() throws {
    let discovery = try UdevDiscovery()
    let monitor = try discovery.makeMonitor()
    let fd = monitor.fileDescriptor
    #expect(fd >= 0)
    #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
    #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
    #expect(monitor.receive { _ in Issue.record("no udev event expected") } == .drained)
    let loop = try EventLoop()
    var wakeups = 0
    let watch = try loop.watchReadable(fd: fd) { _ in wakeups += 1 }
    try loop.runOnce(until: loop.now())
    #expect(wakeups == 0)
    watch.cancel()
    monitor.close()
    monitor.close()
    #expect(monitor.fileDescriptor == -1)
    #expect(monitor.receive { _ in } == .drained)
  }
}

@Suite struct ReadinessWatchTests {
  @Test func theLoopReportsReadableAndHangupUntilCancelled() throws {
    let loop = try EventLoop()
    let (readEnd, writeEnd) = try Syscall.pipe(nonBlocking: true)
    defer { Syscall.close(readEnd) }
    var seen: [Bool] = []
    let watch = try loop.watchReadable(fd: readEnd) { hangup in seen.append(hangup) }
    try loop.runOnce(until: loop.now())
    #expect(seen.isEmpty)
    var byte: UInt8 = 1
    #expect(write(writeEnd, &byte, 1) == 1)
    try loop.runOnce(until: loop.now())
    #expect(seen == [false])
    #expect(read(readEnd, &byte, 1) == 1)
    Syscall.close(writeEnd)
    try loop.runOnce(until: loop.now())
    #expect(seen == [false, true])
    watch.cancel()
    watch.cancel()
    try loop.runOnce(until: loop.now())
    #expect(seen == [false, true])
  }
}
