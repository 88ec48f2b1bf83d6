// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CUdev
import Glibc

/// What happened to a device, as the udev monitor reports it.
public enum DeviceChangeAction: String, Hashable, Sendable {
  case add, remove, change
}

/// One udev event for an input event node.
public struct DeviceChange: Hashable, Sendable {
  public var action: DeviceChangeAction
  /// For `remove`, only what the event itself carried (syspath, properties): sysfs is gone.
  public var device: InputDeviceInfo

  public init(action: DeviceChangeAction, device: InputDeviceInfo) {
    self.action = action
    self.device = device
  }
}

/// How reading the monitor ended.
public enum MonitorReadResult: Equatable, Sendable {
  /// Every pending event was delivered.
  case drained
  /// The kernel dropped events (`ENOBUFS`): the caller must enumerate again.
  case overflowed
  /// Receiving failed otherwise.
  case failed(Errno)
}

/// Finds input event nodes through libudev: enumeration at start, a monitor for hotplug.
///
/// Only event nodes (`/dev/input/event*`) are reported; `js*`, `mouse*` and the
/// `inputN` parents are not devices a button can be read from.
public final class UdevDiscovery {
  private let udev: OpaquePointer

  /// Creates the libudev context.
  public init() throws(Errno) {
    guard let udev = udev_new() else { throw Errno.current }
    self.udev = udev
  }

  deinit { udev_unref(udev) }

  /// Whether `sysname` names an evdev node (`event` followed by digits).
  public static func isEventNode(sysname: String) -> Bool {
    let prefix = "event"
    guard sysname.hasPrefix(prefix) else { return false }
    let digits = sysname.utf8.dropFirst(prefix.utf8.count)
    return !digits.isEmpty && digits.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
  }

  /// Whether udevd is running. Without it (containers, minimal VMs) devices are never
  /// "initialized" and carry no tags or rule properties, but can still be used.
  public var udevIsActive: Bool {
    guard let queue = udev_queue_new(udev) else { return false }
    defer { udev_queue_unref(queue) }
    return udev_queue_get_udev_is_active(queue) == 1
  }

  /// Every input event node present now, in sysfs order.
  ///
  /// When udevd runs, nodes it has not processed yet are skipped: their tags and
  /// properties are incomplete, and the monitor reports them once udev is done.
  public func enumerate() throws(Errno) -> [InputDeviceInfo] {
    guard let enumerator = udev_enumerate_new(udev) else { throw Errno.current }
    defer { udev_enumerate_unref(enumerator) }
    var rc = udev_enumerate_add_match_subsystem(enumerator, "input")
    if rc >= 0 { rc = udev_enumerate_add_match_sysname(enumerator, "event*") }
    if rc >= 0 { rc = udev_enumerate_scan_devices(enumerator) }
    guard rc >= 0 else { throw Errno(-rc) }
    let requireInitialized = udevIsActive
    var result: [InputDeviceInfo] = []
    for syspath in UdevDiscovery.names(udev_enumerate_get_list_entry(enumerator)) {
      guard let device = udev_device_new_from_syspath(udev, syspath) else { continue }  // gone meanwhile
      defer { udev_device_unref(device) }
      if requireInitialized && udev_device_get_is_initialized(device) != 1 { continue }
      guard let sysname = udev_device_get_sysname(device), UdevDiscovery.isEventNode(sysname: String(cString: sysname)),
        udev_device_get_devnode(device) != nil
      else { continue }
      result.append(UdevDiscovery.info(device))
    }
    return result
  }

  /// The information for any device by syspath, whatever its subsystem; nil if it
  /// does not exist. The input layer only uses event nodes; this is for diagnostics.
  public func info(syspath: String) -> InputDeviceInfo? {
    guard let device = udev_device_new_from_syspath(udev, syspath) else { return nil }
    defer { udev_device_unref(device) }
    return UdevDiscovery.info(device)
  }

  /// A monitor for input event nodes, reading udev's (not the kernel's) events, so a
  /// device is reported only after the rules have tagged it and set its permissions.
  public func makeMonitor() throws(Errno) -> UdevMonitor {
    try UdevMonitor(udev: udev)
  }

  /// Builds the info of an event node: name, phys, uniq and ids from the parent
  /// `inputN` device (sysattrs, else its NAME/PHYS/UNIQ/PRODUCT properties), tags,
  /// properties and links from the node itself.
  static func info(_ device: OpaquePointer) -> InputDeviceInfo {
    let properties = Dictionary(
      UdevDiscovery.pairs(udev_device_get_properties_list_entry(device)), uniquingKeysWith: { _, last in last })
    let parent = udev_device_get_parent_with_subsystem_devtype(device, "input", nil)  // owned by `device`
    func sysattr(_ name: String) -> String? {
      parent.flatMap { udev_device_get_sysattr_value($0, name) }.map { String(cString: $0) }
    }
    func property(_ name: String) -> String? {
      let value = parent.flatMap { udev_device_get_property_value($0, name) }.map { String(cString: $0) }
      return (value ?? properties[name]).map(unquoted)
    }
    var ids: [UInt16] = ["bustype", "vendor", "product", "version"].map {
      sysattr("id/\($0)").flatMap { UInt16($0, radix: 16) } ?? 0
    }
    if ids == [0, 0, 0, 0], let product = property("PRODUCT") {
      // PRODUCT=bustype/vendor/product/version in hex, e.g. "19/1/1/100".
      let fields = product.split(separator: "/").map { UInt16($0, radix: 16) ?? 0 }
      if fields.count == 4 { ids = fields }
    }
    func nonEmpty(_ s: String?) -> String? { s.flatMap { $0.isEmpty ? nil : $0 } }
    return InputDeviceInfo(
      syspath: String(cString: udev_device_get_syspath(device)),
      devnode: udev_device_get_devnode(device).map { String(cString: $0) },
      name: sysattr("name") ?? property("NAME") ?? "",
      phys: nonEmpty(sysattr("phys") ?? property("PHYS")),
      uniq: nonEmpty(sysattr("uniq") ?? property("UNIQ")),
      bustype: ids[0], vendor: ids[1], product: ids[2], version: ids[3],
      // Current tags, not all tags ever set: a tag removed from the rules and
      // re-triggered with a `change` must unbind the button.
      tags: Set(UdevDiscovery.names(udev_device_get_current_tags_list_entry(device))),
      properties: properties,
      links: UdevDiscovery.names(udev_device_get_devlinks_list_entry(device)))
  }

  /// The names along a libudev list (its `udev_list_entry_foreach` is a macro).
  static func names(_ first: OpaquePointer?) -> [String] {
    var result: [String] = []
    var entry = first
    while let current = entry {
      if let name = udev_list_entry_get_name(current) { result.append(String(cString: name)) }
      entry = udev_list_entry_get_next(current)
    }
    return result
  }

  /// The name/value pairs along a libudev list.
  static func pairs(_ first: OpaquePointer?) -> [(String, String)] {
    var result: [(String, String)] = []
    var entry = first
    while let current = entry {
      if let name = udev_list_entry_get_name(current) {
        let value = udev_list_entry_get_value(current).map { String(cString: $0) } ?? ""
        result.append((String(cString: name), value))
      }
      entry = udev_list_entry_get_next(current)
    }
    return result
  }
}

/// The kernel quotes NAME/PHYS/UNIQ in the input device's uevent: `NAME="gpio-keys"`.
func unquoted(_ value: String) -> String {
  if value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") {
    return String(value.dropFirst().dropLast())
  }
  return value
}

/// A udev monitor for input event nodes; its fd is non-blocking and close-on-exec.
public final class UdevMonitor {
  private let udev: OpaquePointer
  private var monitor: OpaquePointer?
  /// The fd to watch for readability; -1 once closed.
  public private(set) var fileDescriptor: Int32

  init(udev: OpaquePointer) throws(Errno) {
    guard let monitor = udev_monitor_new_from_netlink(udev, "udev") else { throw Errno.current }
    var rc = udev_monitor_filter_add_match_subsystem_devtype(monitor, "input", nil)
    if rc >= 0 { rc = udev_monitor_enable_receiving(monitor) }
    guard rc >= 0 else {
      udev_monitor_unref(monitor)
      throw Errno(-rc)
    }
    let fd = udev_monitor_get_fd(monitor)
    guard fd >= 0 else {
      udev_monitor_unref(monitor)
      throw Errno(-fd)
    }
    do {
      // libudev creates the socket with both flags; make sure, since the loop relies on it.
      try Syscall.setNonBlocking(fd)
      try Syscall.setCloseOnExec(fd)
    } catch {
      udev_monitor_unref(monitor)
      throw error
    }
    self.udev = udev_ref(udev)
    self.monitor = monitor
    self.fileDescriptor = fd
  }

  deinit {
    close()
    udev_unref(udev)
  }

  /// Delivers every pending add/remove/change of an input event node to `handler`.
  public func receive(_ handler: (DeviceChange) -> Void) -> MonitorReadResult {
    while let monitor {
      errno = 0
      guard let device = udev_monitor_receive_device(monitor) else {
        let error = Errno.current
        switch error.rawValue {
        case EAGAIN, EWOULDBLOCK, 0: return .drained
        case EINTR: continue
        case ENOBUFS: return .overflowed
        default: return .failed(error)
        }
      }
      defer { udev_device_unref(device) }
      guard let actionName = udev_device_get_action(device),
        let action = DeviceChangeAction(rawValue: String(cString: actionName)),
        let sysname = udev_device_get_sysname(device),
        UdevDiscovery.isEventNode(sysname: String(cString: sysname))
      else { continue }
      handler(DeviceChange(action: action, device: UdevDiscovery.info(device)))
    }
    return .drained
  }

  /// Stops monitoring and closes the fd. Idempotent.
  public func close() {
    guard let monitor else { return }
    udev_monitor_unref(monitor)
    self.monitor = nil
    fileDescriptor = -1
  }
}
