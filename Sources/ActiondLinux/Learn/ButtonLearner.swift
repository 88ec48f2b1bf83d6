// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import Glibc

/// Waits for the next key-down on any input device this process can read, then closes
/// every device: what `actiond learn` runs on.
///
/// It opens every event node discovery reports (at start and hot-plugged later, through
/// the udev monitor: no polling) and watches them all. The first `EV_KEY` event with value
/// 1 decides: only a key that goes down now counts, so autorepeat (2) and releases (0),
/// among them those of keys already held at start (the Enter that started the command),
/// are never taken. Touch and pen-tool contacts (`BTN_TOUCH`, `BTN_TOOL_*`) are not
/// presses a button makes and are skipped. At that key-down the device being read is
/// closed before anything after it in its buffer is read, then every other one is closed
/// unread, so nothing after the one key is read.
public final class ButtonLearner {
  /// Called once, with the device and the key that went down; every device is closed already.
  public var onLearned: (InputDeviceInfo, UInt16) -> Void = { _, _ in }
  /// A problem worth telling the person waiting (a hot-plugged device could not be opened).
  public var onProblem: (String) -> Void = { _ in }
  /// A device that appeared while waiting is read from now on.
  public var onAdded: (InputDeviceInfo) -> Void = { _ in }

  private let loop: any InputEventLoop
  private let backend: any InputDeviceBackend
  private let access: (_ path: String, _ error: Errno?) -> InputNodeAccess
  private var monitor: (any InputDeviceMonitor)?
  private var monitorWatch: ReadinessWatch?
  private var open: [String: Reading] = [:]
  private var finished = false

  private final class Reading {
    let info: InputDeviceInfo
    let handle: any InputDeviceHandle
    var watch: ReadinessWatch?
    init(info: InputDeviceInfo, handle: any InputDeviceHandle) {
      self.info = info
      self.handle = handle
    }
  }

  /// `access` describes a node for the report: readable (error nil) or why not; the real
  /// one is ``InputAccessProbe/node(path:error:)``.
  public init(
    loop: any InputEventLoop, backend: any InputDeviceBackend,
    access: @escaping (_ path: String, _ error: Errno?) -> InputNodeAccess
  ) {
    self.loop = loop
    self.backend = backend
    self.access = access
  }

  /// The syspaths of the devices being read.
  public var openDevices: [String] { open.keys.sorted() }
  /// Every event device discovery reported (readable or not, also after ``stop()``),
  /// for links another device shares (``LearnedButton/sharedLinks``).
  public private(set) var seenDevices: [String: InputDeviceInfo] = [:]

  /// Follows hotplug, opens every device present and returns how each node fared. With
  /// no readable device the caller stops (``stop()``) and explains the report.
  public func start() throws -> [InputNodeAccess] {
    // The monitor first, so a device plugged during enumeration is not missed.
    let monitor = try backend.makeMonitor()
    self.monitor = monitor
    monitorWatch = try loop.watchReadable(fd: monitor.fileDescriptor) { [unowned self] hangup in
      self.monitorReadable(hangup: hangup)
    }
    var nodes: [InputNodeAccess] = []
    for info in try backend.enumerate() {
      guard let devnode = info.devnode else { continue }
      seenDevices[info.syspath] = info
      nodes.append(access(devnode, startReading(info)))
    }
    return nodes
  }

  /// Closes every device and the monitor. Idempotent.
  public func stop() {
    finished = true
    monitorWatch?.cancel()
    monitorWatch = nil
    monitor?.close()
    monitor = nil
    let readings = open.values
    open = [:]
    for reading in readings {
      reading.watch?.cancel()
      reading.handle.close()
    }
  }

  /// Opens and watches a device; nil when it is being read, else why it cannot be.
  private func startReading(_ info: InputDeviceInfo) -> Errno? {
    guard open[info.syspath] == nil else { return nil }
    let handle: any InputDeviceHandle
    do {
      handle = try backend.open(info)
    } catch let error as EvdevOpenError {
      return error.errno
    } catch let error as Errno {
      return error
    } catch {
      return Errno(EIO)
    }
    let reading = Reading(info: info, handle: handle)
    do {
      reading.watch = try loop.watchReadable(fd: handle.fileDescriptor) { [unowned self, unowned reading] hangup in
        self.read(reading, hangup: hangup)
      }
    } catch {
      handle.close()
      return (error as? Errno) ?? Errno(EIO)
    }
    open[info.syspath] = reading
    return nil
  }

  private func monitorReadable(hangup: Bool) {
    guard let monitor, !finished else { return }
    let result = monitor.receive { change in
      guard !finished else { return }
      switch change.action {
      case .add, .change:
        // `change`: the rules may just have made a refused node readable.
        guard change.device.devnode != nil else { return }
        seenDevices[change.device.syspath] = change.device
        guard open[change.device.syspath] == nil else { return }
        if let error = startReading(change.device) {
          if change.action == .add {
            onProblem(
              "\(change.device.devnode ?? change.device.syspath) (\(change.device.name)) appeared but cannot be read: \(error)"
            )
          }
        } else {
          onAdded(change.device)
        }
      case .remove:
        seenDevices[change.device.syspath] = nil
        if let reading = open.removeValue(forKey: change.device.syspath) {
          reading.watch?.cancel()
          reading.handle.close()
        }
      }
    }
    guard !finished else { return }
    switch result {
    case .drained where !hangup, .overflowed:
      // An overflow loses hotplug news only; devices already open keep being read.
      break
    case .drained, .failed:
      monitorWatch?.cancel()
      monitorWatch = nil
      monitor.close()
      self.monitor = nil
      onProblem("the udev monitor failed: devices plugged in from now on are not seen")
    }
  }

  /// Whether an `EV_KEY` code is a contact rather than a press: `BTN_TOOL_*` and
  /// `BTN_TOUCH` (0x140...0x14a, 0x14d...0x14f), not the stylus buttons 0x14b/0x14c.
  public static func isContact(_ code: UInt16) -> Bool {
    (0x140...0x14a).contains(code) || (0x14d...0x14f).contains(code)
  }

  private func read(_ reading: Reading, hangup: Bool) {
    guard !finished, open[reading.info.syspath] === reading else { return }
    var learned: UInt16?
    let result = reading.handle.drain { event in
      guard learned == nil, case .key(let code, let value, _) = event, value == 1, !Self.isContact(code) else {
        return
      }
      learned = code
      // Closed inside the sink: drain reads nothing after this event.
      reading.handle.close()
    }
    if let learned {
      stop()
      onLearned(reading.info, learned)
      return
    }
    if case .lost = result {
      open[reading.info.syspath] = nil
      reading.watch?.cancel()
      reading.handle.close()
    } else if hangup {
      open[reading.info.syspath] = nil
      reading.watch?.cancel()
      reading.handle.close()
    }
  }
}

/// Describes event nodes for ``InputAccessReport``: `stat` for the group and mode, the
/// group database for membership.
public enum InputAccessProbe {
  /// One node: `error` is why opening it failed (nil: it opened).
  public static func node(path: String, error: Errno?) -> InputNodeAccess {
    var st = stat()
    guard stat(path, &st) == 0 else {
      return InputNodeAccess(path: path, error: error?.name, group: "?", mode: 0)
    }
    let gid = st.st_gid
    return InputNodeAccess(
      path: path, error: error?.name, group: groupName(gid) ?? String(gid), mode: st.st_mode & 0o7777,
      processInGroup: processGroups().contains(gid), userListedInGroup: userGroups().contains(gid))
  }

  /// Every `/dev/input/event*` node and whether this process may read it (`access(2)`,
  /// which honours ACLs such as uaccess's; nothing is opened), for the daemon's advice.
  public static func eventNodes(directory: String = "/dev/input") -> [InputNodeAccess] {
    guard let dir = opendir(directory) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) {
        String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
      }
      if UdevDiscovery.isEventNode(sysname: name) { names.append(name) }
    }
    return names.sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }.map { name in
      let path = "\(directory)/\(name)"
      return node(path: path, error: access(path, R_OK) == 0 ? nil : Errno.current)
    }
  }

  /// Who this process runs as, and how each node fares.
  public static func report(nodes: [InputNodeAccess]) -> InputAccessReport {
    InputAccessReport(user: userName(), isRoot: geteuid() == 0, nodes: nodes)
  }

  /// The effective user's name, or the uid as text.
  public static func userName() -> String {
    var pw = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    let uid = geteuid()
    guard getpwuid_r(uid, &pw, &buffer, buffer.count, &result) == 0, let result, let name = result.pointee.pw_name
    else { return String(uid) }
    return String(cString: name)
  }

  static func groupName(_ gid: gid_t) -> String? {
    var group = Glibc.group()
    var result: UnsafeMutablePointer<Glibc.group>?
    var buffer = [CChar](repeating: 0, count: 16384)
    guard getgrgid_r(gid, &group, &buffer, buffer.count, &result) == 0, let result, let name = result.pointee.gr_name
    else { return nil }
    return String(cString: name)
  }

  static func processGroups() -> Set<gid_t> {
    var groups = [gid_t](repeating: 0, count: Int(max(getgroups(0, nil), 0)) + 1)
    let n = getgroups(Int32(groups.count), &groups)
    return Set(groups.prefix(Int(max(n, 0)))).union([getegid()])
  }

  /// The groups the group database gives the user (what a new login would carry).
  static func userGroups() -> Set<gid_t> {
    var pw = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getpwuid_r(geteuid(), &pw, &buffer, buffer.count, &result) == 0, let result, let name = result.pointee.pw_name
    else { return [] }
    var count: Int32 = 64
    var groups = [gid_t](repeating: 0, count: Int(count))
    if getgrouplist(name, result.pointee.pw_gid, &groups, &count) < 0 {
      groups = [gid_t](repeating: 0, count: Int(count))
      guard getgrouplist(name, result.pointee.pw_gid, &groups, &count) >= 0 else { return [] }
    }
    return Set(groups.prefix(Int(count)))
  }
}
