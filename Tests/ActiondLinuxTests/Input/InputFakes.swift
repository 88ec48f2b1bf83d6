// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import Glibc

/// A loop whose readiness the test triggers by hand, with a manual clock.
final class FakeInputLoop: InputEventLoop {
  struct Watch {
    var fd: Int32
    var handler: (Bool) -> Void
  }
  var clock = MonotonicInstant(nanoseconds: 1_000_000_000)
  private(set) var watches: [Int: Watch] = [:]
  private var nextWatch = 0
  /// When set, the next `watchReadable` throws it.
  var failNextWatch: Errno?

  func now() -> MonotonicInstant { clock }

  func watchReadable(fd: Int32, _ handler: @escaping (Bool) -> Void) throws -> ReadinessWatch {
    if let error = failNextWatch {
      failNextWatch = nil
      throw error
    }
    nextWatch += 1
    let id = nextWatch
    watches[id] = Watch(fd: fd, handler: handler)
    return ReadinessWatch { [weak self] in self?.watches[id] = nil }
  }

  var watchedFDs: [Int32] { watches.values.map(\.fd).sorted() }

  /// Runs the handler watching `fd`, as epoll would when it is ready.
  func fire(_ fd: Int32, hangup: Bool = false) {
    for watch in watches.values where watch.fd == fd { watch.handler(hangup) }
  }
}

/// A device as the fake backend opens it.
final class FakeDevice: InputDeviceHandle {
  let fileDescriptor: Int32
  let isReadOnly: Bool
  var keys: Set<UInt16>
  var down: Set<UInt16>
  /// Events the next drain delivers; `.resynced` also applies `downAfterResync`.
  var pending: [EvdevEvent] = []
  var downAfterResync: Set<UInt16>?
  /// When set, the next drain ends with it after delivering `pending`.
  var failure: Errno?
  var grabError: Errno?
  private(set) var isGrabbed = false
  private(set) var isClosed = false
  private(set) var drainCount = 0
  /// Called after each delivered event, e.g. to re-enter the manager.
  var afterEvent: (() -> Void)?

  init(fd: Int32, keys: Set<UInt16>, down: Set<UInt16>, readOnly: Bool) {
    fileDescriptor = fd
    self.keys = keys
    self.down = down
    isReadOnly = readOnly
  }

  func hasKey(_ code: UInt16) -> Bool { keys.contains(code) }
  func isKeyDown(_ code: UInt16) -> Bool { down.contains(code) }
  func grab() throws(Errno) {
    if let grabError { throw grabError }
    isGrabbed = true
  }
  func ungrab() throws(Errno) { isGrabbed = false }

  func drain(_ sink: (EvdevEvent) -> Void) -> DrainResult {
    drainCount += 1
    while !pending.isEmpty && !isClosed {
      let event = pending.removeFirst()
      switch event {
      case .key(let code, let value, _):
        if value == 1 { down.insert(code) } else if value == 0 { down.remove(code) }
      case .resynced:
        if let downAfterResync { down = downAfterResync }
      case .releasedByKernel:
        down = []
      }
      sink(event)
      afterEvent?()
    }
    if isClosed { return .drained }
    if let failure {
      self.failure = nil
      return .lost(failure)
    }
    return .drained
  }

  func close() {
    isClosed = true
    isGrabbed = false
  }
}

final class FakeMonitor: InputDeviceMonitor {
  let fileDescriptor: Int32 = 500
  var pending: [DeviceChange] = []
  var result: MonitorReadResult = .drained
  private(set) var isClosed = false

  func receive(_ handler: (DeviceChange) -> Void) -> MonitorReadResult {
    let changes = pending
    pending = []
    for change in changes { handler(change) }
    let result = self.result
    self.result = .drained
    return result
  }

  func close() { isClosed = true }
}

/// Devices that "exist", what their nodes look like when opened, and every open.
final class FakeBackend: InputDeviceBackend {
  struct Spec {
    var keys: Set<UInt16>
    var down: Set<UInt16> = []
    var readOnly = false
    var openError: Errno?
    var grabError: Errno?
    /// A real descriptor to hand out (a pipe, to read what is written to the device).
    var fd: Int32?
  }
  var present: [InputDeviceInfo] = []
  var specs: [String: Spec] = [:]
  private(set) var monitors: [FakeMonitor] = []
  private(set) var opened: [String: [FakeDevice]] = [:]
  var enumerateError: Errno?
  var monitorError: Errno?
  private var nextFD: Int32 = 10

  var monitor: FakeMonitor { monitors.last! }

  func makeMonitor() throws -> any InputDeviceMonitor {
    if let monitorError { throw monitorError }
    let monitor = FakeMonitor()
    monitors.append(monitor)
    return monitor
  }

  func enumerate() throws -> [InputDeviceInfo] {
    if let enumerateError { throw enumerateError }
    return present
  }

  func open(_ device: InputDeviceInfo) throws -> any InputDeviceHandle {
    let spec = specs[device.syspath] ?? Spec(keys: [])
    if let error = spec.openError { throw error }
    nextFD += 1
    let handle = FakeDevice(fd: spec.fd ?? nextFD, keys: spec.keys, down: spec.down, readOnly: spec.readOnly)
    handle.grabError = spec.grabError
    opened[device.syspath, default: []].append(handle)
    return handle
  }

  /// The handle currently open for a device (the last one opened).
  func handle(_ syspath: String) -> FakeDevice? { opened[syspath]?.last }
  func openCount(_ syspath: String) -> Int { opened[syspath]?.count ?? 0 }

  /// Adds a device both to what exists and to what its node offers.
  @discardableResult
  func plug(
    _ info: InputDeviceInfo, keys: Set<UInt16>, down: Set<UInt16> = [], readOnly: Bool = false
  )
    -> InputDeviceInfo
  {
    present.append(info)
    specs[info.syspath] = Spec(keys: keys, down: down, readOnly: readOnly)
    return info
  }
}

func eventDevice(
  _ n: Int, name: String = "test keys", tags: Set<String> = [], properties: [String: String] = [:]
)
  -> InputDeviceInfo
{
  InputDeviceInfo(
    syspath: "/sys/devices/virtual/input/input\(n)/event\(n)", devnode: "/dev/input/event\(n)", name: name,
    tags: tags, properties: properties)
}

/// A readable rendering of events, so expectations read like the log.
func describe(_ event: InputEvent) -> String {
  switch event {
  case .deviceBound(let device, let readOnly):
    "bound \(device.info.devnode ?? "?") [\(device.buttons.joined(separator: ", "))]"
      + "\(device.grabbed ? " grabbed" : "")\(readOnly ? " read-only" : "")"
  case .deviceUnbound(let device, let reason): "unbound \(device.info.devnode ?? "?") \(reason)"
  case .appeared(let button, let info, let isDown, let at):
    "appeared \(button) on \(info.devnode ?? "?") \(isDown ? "down" : "up") @\(at)"
  case .key(let button, _, let value, let at): "key \(button)=\(value) @\(at)"
  case .resync(let button, let isDown, let at): "resync \(button) \(isDown ? "down" : "up") @\(at)"
  case .releasedByKernel(let button, let at): "released-by-kernel \(button) @\(at)"
  case .lost(let button, let at): "lost \(button) @\(at)"
  case .refused(let button, let info, _): "refused \(button) on \(info.devnode ?? "?")"
  case .ignoredExtraMatch(let button, let info, let boundTo):
    "extra \(button) on \(info.devnode ?? "?") (bound to \(boundTo.devnode ?? "?"))"
  case .deviceFailed(let info, let reason): "failed \(info.devnode ?? "?"): \(reason)"
  case .discoveryProblem(let message): "discovery: \(message)"
  }
}
