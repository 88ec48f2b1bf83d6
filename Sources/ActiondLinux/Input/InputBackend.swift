// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// The loop services the input layer needs: the clock and readiness of fds.
///
/// `EventLoop` provides them; tests drive the input layer with a fake that calls the
/// handlers directly.
public protocol InputEventLoop: AnyObject {
  /// The current CLOCK_MONOTONIC instant.
  func now() -> MonotonicInstant
  /// Calls `handler` on the loop thread while `fd` is readable, hung up or in error
  /// (`hangup` true for the last two). The returned watch stops it.
  func watchReadable(fd: Int32, _ handler: @escaping (_ hangup: Bool) -> Void) throws -> ReadinessWatch
}

/// A registered readiness watch; ``cancel()`` unregisters it (safe inside its handler).
public final class ReadinessWatch {
  private var cancelAction: (() -> Void)?

  public init(cancel: @escaping () -> Void) { cancelAction = cancel }

  /// Stops watching. Idempotent.
  public func cancel() {
    let action = cancelAction
    cancelAction = nil
    action?()
  }

  deinit { cancel() }
}

/// An open input device as ``InputManager`` uses it; ``EvdevDevice`` is the real one.
public protocol InputDeviceHandle: AnyObject {
  var fileDescriptor: Int32 { get }
  var isReadOnly: Bool { get }
  func hasKey(_ code: UInt16) -> Bool
  func isKeyDown(_ code: UInt16) -> Bool
  func grab() throws(Errno)
  func ungrab() throws(Errno)
  func drain(_ sink: (EvdevEvent) -> Void) -> DrainResult
  func close()
}

/// Hotplug notifications as ``InputManager`` uses them; ``UdevMonitor`` is the real one.
public protocol InputDeviceMonitor: AnyObject {
  var fileDescriptor: Int32 { get }
  func receive(_ handler: (DeviceChange) -> Void) -> MonitorReadResult
  func close()
}

/// Where devices come from: libudev and libevdev on Linux, a fake in tests.
public protocol InputDeviceBackend: AnyObject {
  /// Starts following hotplug; created before enumerating so no device falls between.
  func makeMonitor() throws -> any InputDeviceMonitor
  /// The event devices present now.
  func enumerate() throws -> [InputDeviceInfo]
  /// Opens a device's node.
  func open(_ device: InputDeviceInfo) throws -> any InputDeviceHandle
}

extension EvdevDevice: InputDeviceHandle {}
extension UdevMonitor: InputDeviceMonitor {}

/// The real backend: libudev discovery and libevdev devices.
public final class LinuxInputBackend: InputDeviceBackend {
  private let discovery: UdevDiscovery

  public init() throws(Errno) { discovery = try UdevDiscovery() }

  public func makeMonitor() throws -> any InputDeviceMonitor { try discovery.makeMonitor() }

  public func enumerate() throws -> [InputDeviceInfo] { try discovery.enumerate() }

  public func open(_ device: InputDeviceInfo) throws -> any InputDeviceHandle {
    guard let devnode = device.devnode else {
      throw EvdevOpenError(path: device.syspath, step: "open", errno: .notFound)
    }
    return try EvdevDevice(path: devnode)
  }
}

extension EventLoop: InputEventLoop {
  public func watchReadable(fd: Int32, _ handler: @escaping (_ hangup: Bool) -> Void) throws -> ReadinessWatch {
    let id = try register(fd: fd, interest: .readable) { events in
      handler(!events.isDisjoint(with: [.hangup, .error]))
    }
    return ReadinessWatch { [weak self] in self?.unregister(id) }
  }
}
