// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CActiondShim
import Glibc

/// Binds buttons to input devices and turns their key events into ``InputEvent``s.
///
/// It enumerates the event devices at start and follows the udev monitor. Each
/// device is opened only when some button matches it, and only once however many
/// buttons it carries. A button is bound to one device at a time: further matching
/// devices are reported and ignored while the first stays. A button without a device
/// waits quietly and binds when one appears; an unplugged device's buttons are
/// reported lost and rebind when it (or another match) comes back. A device is
/// grabbed while any of its bound buttons asks for it.
///
/// A button is known by its binding's name (``ButtonBinding/name``), as above the input
/// layer: each device keeps its bound buttons' key codes with their names, set at every
/// (re)configuration, so a key event goes out named without a lookup.
///
/// Everything runs on the loop thread. Per key event nothing is allocated.
public final class InputManager: InputSource {
  public var onEvent: (InputEvent) -> Void = { _ in }

  private let loop: any InputEventLoop
  private let backend: any InputDeviceBackend
  private var bindings: [ButtonBinding] = []
  /// Per button name, the syspath of the device it is bound to (no entry: it waits).
  private var boundTo: [String: String] = [:]
  /// Every event device udev reported, in the order they were seen.
  private var known: [InputDeviceInfo] = []
  private var open: [String: OpenDevice] = [:]
  private var monitor: (any InputDeviceMonitor)?
  private var monitorWatch: ReadinessWatch?
  /// Problems already reported, so a refusal is logged once, not at every udev event.
  private var reported: Set<Report> = []
  private var started = false

  private final class OpenDevice {
    var info: InputDeviceInfo
    let handle: any InputDeviceHandle
    var watch: ReadinessWatch?
    /// The bound buttons' key codes with their names: scanned linearly per event (a
    /// device carries one or two buttons), so dispatch needs no dictionary or allocation
    /// (a name is shared, not copied).
    var keys: [(code: UInt16, button: String)] = []
    var grabbed = false
    var draining = false
    /// What was last announced with `deviceBound` (the device with its button names and
    /// grab, as `boundDevices` and `deviceUnbound` report it); nil before the first.
    var announced: BoundInputDevice?

    init(info: InputDeviceInfo, handle: any InputDeviceHandle) {
      self.info = info
      self.handle = handle
    }
  }

  private struct Report: Hashable {
    enum Kind: Hashable { case refused, extraMatch, openFailed, grabFailed }
    var kind: Kind
    var syspath: String
    /// The button's name; empty for a problem of the device itself.
    var button: String
  }

  /// An input manager reading devices from `backend`, watching fds on `loop`.
  public init(loop: any InputEventLoop, backend: any InputDeviceBackend) {
    self.loop = loop
    self.backend = backend
  }

  /// Every event device it knows now, bound or not (what is reported, ``boundDevices``, is
  /// only the bound ones).
  public var knownDevices: [InputDeviceInfo] { known }

  public func device(forButton button: String) -> InputDeviceInfo? {
    guard let syspath = boundTo[button] else { return nil }
    return open[syspath]?.info
  }

  public var boundDevices: [BoundInputDevice] {
    open.values.compactMap(\.announced).sorted { ($0.info.devnode ?? "") < ($1.info.devnode ?? "") }
  }

  /// The syspaths of the devices currently open, for diagnostics and tests.
  public var openDevicePaths: [String] { open.keys.sorted() }

  public func start(_ bindings: [ButtonBinding]) throws {
    if started {
      reconfigure(bindings)
      return
    }
    // The monitor comes first: a device plugged during enumeration is then reported
    // by it rather than falling between the two.
    let monitor = try backend.makeMonitor()
    let watch: ReadinessWatch
    let devices: [InputDeviceInfo]
    do {
      watch = try loop.watchReadable(fd: monitor.fileDescriptor) { [unowned self] hangup in
        self.monitorReadable(hangup: hangup)
      }
      do {
        devices = try backend.enumerate()
      } catch {
        watch.cancel()
        throw error
      }
    } catch {
      monitor.close()
      throw error
    }
    self.monitor = monitor
    monitorWatch = watch
    known = []
    for device in devices { remember(device) }
    self.bindings = bindings
    boundTo = [:]
    started = true
    reconcile()
  }

  public func reconfigure(_ bindings: [ButtonBinding], keeping unchanged: Set<String>) {
    guard started else {
      self.bindings = bindings
      boundTo = [:]
      return
    }
    let previous = boundTo
    self.bindings = bindings
    boundTo = [:]
    for device in open.values { device.keys = [] }
    // An unchanged button stays on its device, wherever it moved in the list, without a
    // new `appeared`: the engine kept its recognizer, so a press in progress goes on.
    for binding in bindings where unchanged.contains(binding.name) {
      guard let syspath = previous[binding.name], let device = open[syspath] else { continue }
      boundTo[binding.name] = syspath
      device.keys.append((binding.keyCode, binding.name))
    }
    // A reload is also how an administrator asks to retry: forget every report.
    reported = []
    reconcile()
  }

  public func drain(button: String) {
    guard let syspath = boundTo[button], let device = open[syspath] else { return }
    read(device, hangup: false)
  }

  public func shutdown() {
    monitorWatch?.cancel()
    monitorWatch = nil
    monitor?.close()
    monitor = nil
    let devices = open.values.sorted { $0.info.syspath < $1.info.syspath }
    open = [:]
    boundTo = [:]
    started = false
    var events: [InputEvent] = []
    for device in devices {
      device.watch?.cancel()
      device.handle.close()
      if let announced = device.announced { events.append(.deviceUnbound(announced, reason: .shutdown)) }
    }
    for event in events { onEvent(event) }
  }

  // MARK: - Discovery

  private func remember(_ device: InputDeviceInfo) {
    if let index = known.firstIndex(where: { $0.syspath == device.syspath }) {
      known[index] = device
    } else {
      known.append(device)
    }
    open[device.syspath]?.info = device
  }

  private func monitorReadable(hangup: Bool) {
    guard let monitor else { return }
    var removed: [InputDeviceInfo] = []
    let result = monitor.receive { change in
      switch change.action {
      case .add:
        reported = reported.filter { $0.syspath != change.device.syspath }
        remember(change.device)
      case .change:
        // Permissions or rules may have been fixed: let a failed open be retried.
        reported = reported.filter {
          $0.syspath != change.device.syspath || ($0.kind != .openFailed && $0.kind != .grabFailed)
        }
        remember(change.device)
      case .remove:
        known.removeAll { $0.syspath == change.device.syspath }
        reported = reported.filter { $0.syspath != change.device.syspath }
        removed.append(change.device)
      }
    }
    for device in removed {
      if let openDevice = open[device.syspath] { unbind(openDevice, reason: .removed) }
    }
    switch result {
    case .drained where !hangup:
      break
    case .drained, .failed:
      let why = if case .failed(let error) = result { "\(error)" } else { "hang-up" }
      restartMonitor(after: "udev monitor failed (\(why))")
    case .overflowed:
      rediscover(after: "udev monitor overflowed")
    }
    reconcile()
  }

  /// Replaces a broken monitor and enumerates again, so hotplug keeps being followed.
  private func restartMonitor(after problem: String) {
    monitorWatch?.cancel()
    monitorWatch = nil
    monitor?.close()
    monitor = nil
    do {
      let monitor = try backend.makeMonitor()
      do {
        monitorWatch = try loop.watchReadable(fd: monitor.fileDescriptor) { [unowned self] hangup in
          self.monitorReadable(hangup: hangup)
        }
      } catch {
        monitor.close()
        throw error
      }
      self.monitor = monitor
    } catch {
      onEvent(.discoveryProblem("\(problem); hotplug is no longer followed: \(error)"))
      return
    }
    rediscover(after: problem)
  }

  /// Enumerates again after events may have been lost, unbinding devices that went away.
  private func rediscover(after problem: String) {
    let devices: [InputDeviceInfo]
    do {
      devices = try backend.enumerate()
    } catch {
      onEvent(.discoveryProblem("\(problem); enumerating again failed: \(error)"))
      return
    }
    onEvent(.discoveryProblem("\(problem); devices enumerated again"))
    let present = Set(devices.map(\.syspath))
    known.removeAll { !present.contains($0.syspath) }
    for device in devices { remember(device) }
    for device in open.values.sorted(by: { $0.info.syspath < $1.info.syspath })
    where !present.contains(device.info.syspath) {
      unbind(device, reason: .removed)
    }
  }

  // MARK: - Binding

  /// Brings bindings in line with the known devices: unbinds buttons whose device no
  /// longer matches, binds waiting buttons, closes devices nobody needs, adjusts
  /// grabs, then reports, in that order, losses and problems, bound devices and the
  /// buttons' initial states.
  private func reconcile() {
    guard started else { return }
    let now = loop.now()
    var problems: [InputEvent] = []
    var appeared: [ButtonBinding] = []

    for binding in bindings {
      guard let syspath = boundTo[binding.name] else { continue }
      if let device = open[syspath], binding.matches(device.info) { continue }
      boundTo[binding.name] = nil
      open[syspath]?.keys.removeAll { $0.button == binding.name }
      problems.append(.lost(button: binding.name, at: now))
    }

    for binding in bindings where boundTo[binding.name] == nil {
      // Devices already open first, so a reload keeps what it can.
      let candidates = known.filter { binding.matches($0) && $0.devnode != nil }
      for info in candidates.filter({ open[$0.syspath] != nil }) + candidates.filter({ open[$0.syspath] == nil }) {
        let refusal = Report(kind: .refused, syspath: info.syspath, button: binding.name)
        if reported.contains(refusal) { continue }
        guard let device = open[info.syspath] ?? openDevice(info, problems: &problems) else { continue }
        guard device.handle.hasKey(binding.keyCode) else {
          reported.insert(refusal)
          let reason = "\(info.devnode ?? info.syspath) (\(info.name)) has no key with code \(binding.keyCode)"
          problems.append(.refused(button: binding.name, device: info, reason: reason))
          continue
        }
        boundTo[binding.name] = info.syspath
        device.keys.append((binding.keyCode, binding.name))
        appeared.append(binding)
        break
      }
    }

    for binding in bindings {
      guard let syspath = boundTo[binding.name], let boundInfo = open[syspath]?.info else { continue }
      for info in known where info.syspath != syspath && info.devnode != nil && binding.matches(info) {
        let report = Report(kind: .extraMatch, syspath: info.syspath, button: binding.name)
        guard !reported.contains(report) else { continue }
        reported.insert(report)
        problems.append(.ignoredExtraMatch(button: binding.name, device: info, boundTo: boundInfo))
      }
    }

    var boundEvents: [InputEvent] = []
    for device in open.values.sorted(by: { $0.info.syspath < $1.info.syspath }) {
      if device.keys.isEmpty {
        close(device)
        if let announced = device.announced {
          problems.append(.deviceUnbound(announced, reason: .noLongerMatched))
        }
        continue
      }
      let served = bindings.filter { binding in device.keys.contains { $0.button == binding.name } }
      let wantsGrab = served.contains { $0.grab }
      if wantsGrab != device.grabbed { setGrab(device, wantsGrab, problems: &problems) }
      // Announced again when the set of buttons or the grab changed: a reload that only
      // moves buttons in the list changes nothing about the device.
      let names = served.map(\.name)
      if let announced = device.announced, Set(announced.buttons) == Set(names),
        announced.grabbed == device.grabbed
      {
        continue
      }
      let bound = BoundInputDevice(info: device.info, buttons: names, grabbed: device.grabbed)
      device.announced = bound
      boundEvents.append(.deviceBound(bound, readOnly: device.handle.isReadOnly))
    }

    var events = problems + boundEvents
    for binding in appeared {
      guard let syspath = boundTo[binding.name], let device = open[syspath] else { continue }
      events.append(
        .appeared(
          button: binding.name, device: device.info, isDown: device.handle.isKeyDown(binding.keyCode), at: now))
    }
    for event in events { onEvent(event) }
  }

  private func openDevice(_ info: InputDeviceInfo, problems: inout [InputEvent]) -> OpenDevice? {
    let failure = Report(kind: .openFailed, syspath: info.syspath, button: "")
    guard !reported.contains(failure) else { return nil }
    let handle: any InputDeviceHandle
    do {
      handle = try backend.open(info)
    } catch {
      reported.insert(failure)
      problems.append(.deviceFailed(info, reason: "cannot open: \(error)"))
      return nil
    }
    let device = OpenDevice(info: info, handle: handle)
    do {
      device.watch = try loop.watchReadable(fd: handle.fileDescriptor) { [unowned self, unowned device] hangup in
        self.read(device, hangup: hangup)
      }
    } catch {
      handle.close()
      reported.insert(failure)
      problems.append(.deviceFailed(info, reason: "cannot watch its fd: \(error)"))
      return nil
    }
    open[info.syspath] = device
    return device
  }

  private func setGrab(_ device: OpenDevice, _ grab: Bool, problems: inout [InputEvent]) {
    do {
      if grab { try device.handle.grab() } else { try device.handle.ungrab() }
      device.grabbed = grab
      reported.remove(Report(kind: .grabFailed, syspath: device.info.syspath, button: ""))
    } catch {
      if !grab { device.grabbed = false }
      let report = Report(kind: .grabFailed, syspath: device.info.syspath, button: "")
      guard !reported.contains(report) else { return }
      reported.insert(report)
      let what = grab ? "cannot grab (another program may hold it; events can be missed)" : "cannot ungrab"
      problems.append(.deviceFailed(device.info, reason: "\(what): \(error)"))
    }
  }

  private func close(_ device: OpenDevice) {
    device.watch?.cancel()
    device.watch = nil
    device.handle.close()
    if open[device.info.syspath] === device { open[device.info.syspath] = nil }
  }

  /// Closes a device that went away or failed: its buttons are lost, then it is unbound.
  private func unbind(_ device: OpenDevice, reason: DeviceUnbindReason) {
    guard open[device.info.syspath] === device else { return }
    let now = loop.now()
    let buttons = device.keys.map(\.button)
    for button in buttons { boundTo[button] = nil }
    device.keys = []
    close(device)
    var events: [InputEvent] = buttons.map { .lost(button: $0, at: now) }
    if let announced = device.announced { events.append(.deviceUnbound(announced, reason: reason)) }
    for event in events { onEvent(event) }
  }

  // MARK: - Reading

  /// Delivers the device's pending events; a failed read or hang-up unbinds it and
  /// forgets it until udev reports it again (so a broken device is not reopened in a loop).
  private func read(_ device: OpenDevice, hangup: Bool) {
    guard !device.draining, open[device.info.syspath] === device else { return }
    device.draining = true
    let result = device.handle.drain { event in
      switch event {
      case .key(let code, let value, let at):
        for key in device.keys where key.code == code {
          onEvent(.key(button: key.button, code: code, value: value, at: at))
        }
      case .resynced(let at):
        for key in device.keys {
          onEvent(.resync(button: key.button, isDown: device.handle.isKeyDown(key.code), at: at))
        }
      case .releasedByKernel(let at):
        for key in device.keys { onEvent(.releasedByKernel(button: key.button, at: at)) }
      }
    }
    device.draining = false
    guard open[device.info.syspath] === device else { return }  // closed by a handler meanwhile
    let reason: DeviceUnbindReason
    switch result {
    case .lost(let error): reason = .readFailed("\(error)")
    case .drained where hangup: reason = .readFailed("hang-up")
    case .drained: return
    }
    known.removeAll { $0.syspath == device.info.syspath }
    unbind(device, reason: reason)
    reconcile()
  }
}

extension InputManager {
  /// An input manager on real devices: libudev discovery, libevdev reading.
  public convenience init(loop: EventLoop) throws(Errno) {
    self.init(loop: loop, backend: try LinuxInputBackend())
  }
}

// MARK: - LEDs of the bound devices (feedback)

extension InputManager: ButtonDeviceLEDs {
  public func ledDevice(forButton button: String) -> String? {
    guard let syspath = boundTo[button], open[syspath] != nil else { return nil }
    return syspath
  }

  public func isLEDOn(device syspath: String, code: UInt16) throws(SystemCallError) -> Bool {
    let (fd, name) = try ledDescriptor(syspath)
    let state = actiond_evdev_led_state(fd, UInt32(code))
    guard state >= 0 else { throw SystemCallError.last("EVIOCGLED on \(name)") }
    return state == 1
  }

  public func setLED(device syspath: String, code: UInt16, on: Bool) throws(SystemCallError) {
    let (fd, name) = try ledDescriptor(syspath)
    guard actiond_evdev_write_led(fd, UInt32(code), on ? 1 : 0) == 0 else {
      throw SystemCallError.last("cannot write EV_LED to \(name)")
    }
  }

  public func isOpen(device syspath: String) -> Bool { open[syspath] != nil }

  public func descriptor(device syspath: String) -> Int32? { open[syspath]?.handle.fileDescriptor }

  private func ledDescriptor(_ syspath: String) throws(SystemCallError) -> (Int32, String) {
    guard let device = open[syspath] else { throw SystemCallError("write an LED of \(syspath)", Errno(ENODEV)) }
    return (device.handle.fileDescriptor, device.info.devnode ?? syspath)
  }
}
