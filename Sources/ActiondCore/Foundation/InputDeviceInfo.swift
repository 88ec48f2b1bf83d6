// SPDX-License-Identifier: Apache-2.0
/// What udev and the evdev node tell about one input device, as plain data.
///
/// The Linux adapter fills this from libudev (tags, properties, links) and the
/// kernel (name, phys, ids); the core's match rules decide from it alone whether a
/// button lives on the device, so matching is testable without udev.
public struct InputDeviceInfo: Hashable, Sendable {
  /// The sysfs path of the event device, e.g. `/sys/devices/.../input/input5/event3`.
  public var syspath: String
  /// The device node, e.g. `/dev/input/event3`; nil for non-event nodes (never bound).
  public var devnode: String?
  /// The kernel's device name (`EVIOCGNAME`), e.g. `gpio-keys`.
  public var name: String
  /// The physical path (`EVIOCGPHYS`), e.g. `usb-0000:00:14.0-2/input0`.
  public var phys: String?
  /// The unique id (`EVIOCGUNIQ`), often a serial number or empty.
  public var uniq: String?
  /// `BUS_USB`, `BUS_HOST`, ... from `linux/input.h`.
  public var bustype: UInt16
  public var vendor: UInt16
  public var product: UInt16
  public var version: UInt16
  /// udev tags (`TAG+=`), e.g. `actiond`, `systemd`, `seat`.
  public var tags: Set<String>
  /// udev properties (`ENV{}`), e.g. `ACTIOND_BUTTON=action`, `ID_INPUT_KEY=1`.
  public var properties: [String: String]
  /// Symlinks udev made for the node: `/dev/input/by-id/...`, `/dev/input/by-path/...`.
  public var links: [String]

  public init(
    syspath: String, devnode: String?, name: String, phys: String? = nil, uniq: String? = nil,
    bustype: UInt16 = 0, vendor: UInt16 = 0, product: UInt16 = 0, version: UInt16 = 0,
    tags: Set<String> = [], properties: [String: String] = [:], links: [String] = []
  ) {
    self.syspath = syspath
    self.devnode = devnode
    self.name = name
    self.phys = phys
    self.uniq = uniq
    self.bustype = bustype
    self.vendor = vendor
    self.product = product
    self.version = version
    self.tags = tags
    self.properties = properties
    self.links = links
  }
}
