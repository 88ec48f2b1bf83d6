// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CEvdev
import Glibc

/// One event read from an evdev node, reduced to what the input layer needs.
public enum EvdevEvent: Equatable, Sendable {
  /// An `EV_KEY` event: value 1 press, 0 release, 2 autorepeat, stamped by the kernel
  /// on CLOCK_MONOTONIC.
  case key(code: UInt16, value: Int32, at: MonotonicInstant)
  /// The kernel dropped events (`SYN_DROPPED`, stamped `at`) and libevdev has re-read
  /// the device state. The key events lost in between are not reported: ask
  /// ``EvdevDevice/isKeyDown(_:)`` for the keys that matter.
  case resynced(at: MonotonicInstant)
  /// The kernel released keys itself and ended the frame with `SYN_REPORT` value 1 (at
  /// `at`): it does so when the device goes away (`input_disconnect_device`, the read
  /// then fails with `ENODEV`) or is reset. Nothing was dropped; the releases are not
  /// the user's. Every key is up now.
  case releasedByKernel(at: MonotonicInstant)
}

/// How a ``EvdevDevice/drain(_:)`` ended.
public enum DrainResult: Equatable, Sendable {
  /// Everything pending was read (or the device was closed by the sink).
  case drained
  /// Reading failed (`ENODEV` when unplugged or revoked): the device must be closed.
  case lost(Errno)
}

/// Why opening an evdev node failed, with the node's path.
public struct EvdevOpenError: Error, Hashable, Sendable, CustomStringConvertible {
  public var path: String
  /// What was attempted: "open", "libevdev_new_from_fd", "set CLOCK_MONOTONIC".
  public var step: String
  public var errno: Errno

  public init(path: String, step: String, errno: Errno) {
    self.path = path
    self.step = step
    self.errno = errno
  }

  public var description: String {
    if step == "libevdev_new_from_fd" && (errno.rawValue == ENOTTY || errno.rawValue == EINVAL) {
      return "\(path): not an evdev device (\(errno))"
    }
    return "\(path): \(step): \(errno)"
  }
}

/// An open evdev node read through libevdev.
///
/// Opened non-blocking, close-on-exec and read-write (read-only when the node does
/// not allow writing: reading and grabbing do not need write access), with the
/// event clock switched to CLOCK_MONOTONIC so kernel timestamps compare with the
/// daemon's deadlines. Used on the loop thread only.
public final class EvdevDevice {
  /// The node that was opened, e.g. `/dev/input/event3`.
  public let path: String
  /// The non-blocking fd to watch for readability.
  public let fileDescriptor: Int32
  /// True when the node could only be opened read-only.
  public let isReadOnly: Bool
  /// `EVIOCGNAME`, e.g. `gpio-keys`.
  public let name: String
  /// `EVIOCGPHYS`; nil when the kernel reports none.
  public let phys: String?
  /// `EVIOCGUNIQ`; nil when the kernel reports none.
  public let uniq: String?
  public let bustype: UInt16
  public let vendor: UInt16
  public let product: UInt16
  public let version: UInt16
  /// Whether this client holds the exclusive grab.
  public private(set) var isGrabbed = false
  /// Whether ``close()`` has been called.
  public private(set) var isClosed = false

  private let device: OpaquePointer

  /// Opens `path`. Throws ``EvdevOpenError`` (the fd is closed again on failure).
  public init(path: String) throws(EvdevOpenError) {
    self.path = path
    let flags = O_RDWR | O_NOCTTY | O_NONBLOCK
    var readOnly = false
    var fd: Int32
    do {
      fd = try Syscall.open(path, flags)
    } catch let error where error.rawValue == EACCES || error.rawValue == EROFS {
      do {
        fd = try Syscall.open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK)
        readOnly = true
      } catch {
        throw EvdevOpenError(path: path, step: "open", errno: error)
      }
    } catch {
      throw EvdevOpenError(path: path, step: "open", errno: error)
    }
    var created: OpaquePointer?
    let rc = libevdev_new_from_fd(fd, &created)
    guard rc == 0, let created else {
      Syscall.close(fd)
      throw EvdevOpenError(path: path, step: "libevdev_new_from_fd", errno: Errno(-rc))
    }
    // Timestamps must be on the clock the hold deadlines use; a device stamped with
    // CLOCK_REALTIME would turn a clock step into a phantom hold, so refuse it.
    let clockResult = libevdev_set_clock_id(created, CLOCK_MONOTONIC)
    guard clockResult == 0 else {
      libevdev_free(created)
      Syscall.close(fd)
      throw EvdevOpenError(path: path, step: "set CLOCK_MONOTONIC", errno: Errno(-clockResult))
    }
    device = created
    fileDescriptor = fd
    isReadOnly = readOnly
    name = libevdev_get_name(created).map { String(cString: $0) } ?? ""
    phys = libevdev_get_phys(created).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    uniq = libevdev_get_uniq(created).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    bustype = UInt16(truncatingIfNeeded: libevdev_get_id_bustype(created))
    vendor = UInt16(truncatingIfNeeded: libevdev_get_id_vendor(created))
    product = UInt16(truncatingIfNeeded: libevdev_get_id_product(created))
    version = UInt16(truncatingIfNeeded: libevdev_get_id_version(created))
  }

  deinit { close() }

  /// Whether the device can report `EV_KEY` `code` at all.
  public func hasKey(_ code: UInt16) -> Bool {
    !isClosed && libevdev_has_event_code(device, UInt32(EV_KEY), UInt32(code)) == 1
  }

  /// The key's state as of the last event read (initially as of opening).
  public func isKeyDown(_ code: UInt16) -> Bool {
    !isClosed && libevdev_get_event_value(device, UInt32(EV_KEY), UInt32(code)) != 0
  }

  /// Takes the exclusive grab: no other reader (console, X, other daemons) sees events.
  public func grab() throws(Errno) {
    guard !isClosed, !isGrabbed else { return }
    let rc = libevdev_grab(device, LIBEVDEV_GRAB)
    guard rc == 0 else { throw Errno(-rc) }
    isGrabbed = true
  }

  /// Releases the exclusive grab.
  public func ungrab() throws(Errno) {
    guard !isClosed, isGrabbed else { return }
    let rc = libevdev_grab(device, LIBEVDEV_UNGRAB)
    isGrabbed = false
    guard rc == 0 else { throw Errno(-rc) }
  }

  /// Reads every pending event, calling `sink` for key events and resynchronisations,
  /// until the fd would block. Nothing is allocated per event.
  ///
  /// `sink` may close the device; reading then stops.
  public func drain(_ sink: (EvdevEvent) -> Void) -> DrainResult {
    guard !isClosed else { return .drained }
    let device = self.device
    return EvdevDevice.drain(
      next: { event, flags in libevdev_next_event(device, flags, &event) },
      isClosed: { self.isClosed },
      sink)
  }

  /// The read loop, separate from libevdev so its handling of `SYN_DROPPED` can be
  /// tested with a scripted sequence of `libevdev_next_event` results.
  ///
  /// On `LIBEVDEV_READ_STATUS_SYNC` in normal mode (the `SYN_DROPPED` event) it
  /// switches to `LIBEVDEV_READ_FLAG_SYNC` and discards the synthesized delta events
  /// until `-EAGAIN`, then reports ``EvdevEvent/resynced(at:)``: the delta has no real
  /// timestamps, so the caller re-reads state instead of treating it as presses.
  static func drain(
    next: (inout input_event, UInt32) -> Int32, isClosed: () -> Bool, _ sink: (EvdevEvent) -> Void
  ) -> DrainResult {
    let normal = LIBEVDEV_READ_FLAG_NORMAL.rawValue
    let sync = LIBEVDEV_READ_FLAG_SYNC.rawValue
    let statusSuccess = Int32(LIBEVDEV_READ_STATUS_SUCCESS.rawValue)
    let statusSync = Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue)
    var flags = normal
    var droppedAt = MonotonicInstant.zero
    var event = input_event()
    // Releases wait for their frame's SYN_REPORT: when a device goes away (or is reset)
    // the kernel releases every held key itself and ends that frame with SYN_REPORT
    // value 1 instead of 0 (input_disconnect_device). Those releases are not the user's,
    // so a press cut short by an unplug must not become a short press: the frame is
    // reported as `releasedByKernel`, which cancels the press as `device-lost` (not as a
    // resync: nothing was dropped).
    var releases = PendingReleases()
    while true {
      let rc = next(&event, flags)
      if rc == statusSuccess {
        if event.type == UInt16(EV_KEY) {
          if event.value == 0 && releases.append(code: event.code, at: event.monotonicInstant) { continue }
          if releases.flush(sink, isClosed) { return .drained }
          sink(.key(code: event.code, value: event.value, at: event.monotonicInstant))
          if isClosed() { return .drained }
        } else if event.type == UInt16(EV_SYN) && event.code == UInt16(SYN_REPORT) && !releases.isEmpty {
          if event.value == 1 {
            releases.removeAll()
            sink(.releasedByKernel(at: event.monotonicInstant))
            if isClosed() { return .drained }
          } else if releases.flush(sink, isClosed) {
            return .drained
          }
        }
        continue
      }
      // Anything but an event ends the frame as far as this read is concerned.
      if releases.flush(sink, isClosed) { return .drained }
      if rc == statusSync {
        if flags == normal {
          droppedAt = event.monotonicInstant
          flags = sync
        }
        // In sync mode: one event of the state delta. Ignored; state is re-read at the end.
      } else if rc == -EAGAIN {
        guard flags == sync else { return .drained }
        flags = normal
        sink(.resynced(at: droppedAt))
        if isClosed() { return .drained }
      } else if rc == -EINTR {
        continue
      } else {
        return .lost(Errno(rc < 0 ? -rc : EIO))
      }
    }
  }

  /// Ungrabs (the kernel would on close too) and closes. Idempotent.
  public func close() {
    guard !isClosed else { return }
    if isGrabbed { _ = libevdev_grab(device, LIBEVDEV_UNGRAB) }
    isGrabbed = false
    isClosed = true
    libevdev_free(device)
    Syscall.close(fileDescriptor)
  }
}

/// Key releases of the frame being read, held until its SYN_REPORT says whether they
/// were real. Fixed capacity so reading never allocates; a frame releasing more keys
/// than that is flushed early (real keyboards release a few keys per frame).
struct PendingReleases {
  private var codes: (UInt16, UInt16, UInt16, UInt16) = (0, 0, 0, 0)
  private var stamps: (MonotonicInstant, MonotonicInstant, MonotonicInstant, MonotonicInstant) = (
    .zero, .zero, .zero, .zero
  )
  private(set) var count = 0

  var isEmpty: Bool { count == 0 }

  /// Keeps a release; false when full (the caller then delivers it at once).
  mutating func append(code: UInt16, at: MonotonicInstant) -> Bool {
    switch count {
    case 0: (codes.0, stamps.0) = (code, at)
    case 1: (codes.1, stamps.1) = (code, at)
    case 2: (codes.2, stamps.2) = (code, at)
    case 3: (codes.3, stamps.3) = (code, at)
    default: return false
    }
    count += 1
    return true
  }

  mutating func removeAll() { count = 0 }

  /// Delivers the kept releases as real ones; true when the sink closed the device.
  mutating func flush(_ sink: (EvdevEvent) -> Void, _ isClosed: () -> Bool) -> Bool {
    let n = count
    count = 0
    for i in 0..<n {
      let (code, at) =
        i == 0 ? (codes.0, stamps.0) : i == 1 ? (codes.1, stamps.1) : i == 2 ? (codes.2, stamps.2) : (codes.3, stamps.3)
      sink(.key(code: code, value: 0, at: at))
      if isClosed() { return true }
    }
    return false
  }
}

extension input_event {
  /// The kernel timestamp; CLOCK_MONOTONIC once the device's clock is switched.
  var monotonicInstant: MonotonicInstant {
    MonotonicInstant(seconds: Int64(time.tv_sec), microseconds: Int64(time.tv_usec))
  }
}
