// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import CEvdev
import Glibc

/// An opened evdev device node with libevdev on top, timestamps on CLOCK_MONOTONIC.
final class InputNode {
  let path: String
  let fd: Int32
  let dev: OpaquePointer

  init(path: String) throws {
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    if fd < 0 { throw TestDevError.system("cannot open \(path)", errno) }
    var created: OpaquePointer?
    let rc = libevdev_new_from_fd(fd, &created)
    guard rc == 0, let created else {
      close(fd)
      throw TestDevError.system("libevdev cannot use \(path)", -rc)
    }
    self.path = path
    dev = created
  }

  deinit {
    libevdev_free(dev)
    close(fd)
  }

  var name: String { libevdev_get_name(dev).map { String(cString: $0) } ?? "" }

  var summary: String {
    let bus = libevdev_get_id_bustype(dev)
    let id = "\(Names.hex4(libevdev_get_id_vendor(dev))):\(Names.hex4(libevdev_get_id_product(dev)))"
    let rep = libevdev_has_event_type(dev, UInt32(EV_REP)) != 0
    var keys = 0
    for code in 0...UInt32(KEY_MAX) where libevdev_has_event_code(dev, UInt32(EV_KEY), code) != 0 { keys += 1 }
    return "name=\"\(name)\" bus=\(Names.busName(bus)) id=\(id) rep=\(rep ? "yes" : "no") keys=\(keys)"
  }

  /// The `/dev/input/event*` nodes in numeric order.
  static func eventNodes() -> [String] {
    guard let dir = opendir("/dev/input") else { return [] }
    defer { closedir(dir) }
    var numbers: [Int] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
      }
      if name.hasPrefix("event"), let n = Int(name.dropFirst(5)) { numbers.append(n) }
    }
    return numbers.sorted().map { "/dev/input/event\($0)" }
  }
}

func listDevices() throws {
  for path in InputNode.eventNodes() {
    do {
      emit("\(path) \(try InputNode(path: path).summary)")
    } catch {
      emit("\(path) error=\"\(error)\"")
    }
  }
}

/// `actiond-testdev read`: prints what a reader of the device sees.
struct ReadMode {
  enum Target {
    case node(String)
    case name(String)
  }
  var target: Target
  var timeout = TimeSpan.seconds(10)
  var wait = TimeSpan.seconds(5)
  var count: Int?
  var grab = false

  init(arguments: [String]) throws {
    var target: Target?
    var cursor = ArgumentCursor(arguments)
    while let argument = cursor.next() {
      switch argument {
      case "--name": target = .name(try cursor.value(for: argument))
      case "--timeout": timeout = try parseDuration(try cursor.value(for: argument))
      case "--wait": wait = try parseDuration(try cursor.value(for: argument))
      case "--count":
        let text = try cursor.value(for: argument)
        guard let n = Int(text), n > 0 else { throw TestDevError.usage("bad --count '\(text)'") }
        count = n
      case "--grab": grab = true
      default:
        if argument.hasPrefix("--") || target != nil {
          throw TestDevError.usage("unexpected argument '\(argument)'")
        }
        target = .node(argument)
      }
    }
    guard let target else { throw TestDevError.usage("read needs a DEVNODE or --name NAME") }
    self.target = target
  }

  /// Finds the device, waiting up to `wait` for it to appear.
  private func open() throws -> InputNode {
    let deadline = monotonicNow() + wait
    while true {
      switch target {
      case .node(let path):
        if access(path, F_OK) == 0 { return try InputNode(path: path) }
      case .name(let name):
        for path in InputNode.eventNodes() {
          // A node can vanish between listing and opening: that is "not this one".
          if let node = try? InputNode(path: path), node.name == name { return node }
        }
      }
      if monotonicNow() >= deadline {
        switch target {
        case .node(let path): throw TestDevError.failed("\(path) did not appear within \(wait)")
        case .name(let name): throw TestDevError.failed("no input device named \"\(name)\" within \(wait)")
        }
      }
      sleep(until: monotonicNow() + .milliseconds(20))
    }
  }

  /// Returns the exit status: 0 when the read ended as asked (timeout, count, device gone).
  func run() throws -> Int32 {
    let node = try open()
    var rc = libevdev_set_clock_id(node.dev, CLOCK_MONOTONIC)
    if rc < 0 { throw TestDevError.system("cannot switch \(node.path) to CLOCK_MONOTONIC", -rc) }
    if grab {
      rc = libevdev_grab(node.dev, LIBEVDEV_GRAB)
      if rc < 0 { throw TestDevError.system("cannot grab \(node.path)", -rc) }
    }
    emit("opened \(node.path) \(node.summary)\(grab ? " grabbed" : "")")
    var keyEvents = 0
    var deadline = monotonicNow() + timeout
    while true {
      let remaining = deadline - monotonicNow()
      if remaining <= .zero {
        emit("timeout")
        return 0
      }
      var pfd = pollfd(fd: node.fd, events: Int16(POLLIN), revents: 0)
      let ready = poll(&pfd, 1, Int32(max(1, (remaining.nanoseconds + 999_999) / 1_000_000)))
      if ready < 0 {
        if errno == EINTR { continue }
        throw TestDevError.system("poll \(node.path)", errno)
      }
      if ready == 0 { continue }
      // Drain everything readable; libevdev reports a removed device as -ENODEV.
      var flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
      while true {
        var event = input_event()
        let status = libevdev_next_event(node.dev, flags, &event)
        if status == -EAGAIN {
          if flags == LIBEVDEV_READ_FLAG_SYNC.rawValue {
            flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
            continue
          }
          break
        }
        if status == -ENODEV || (status < 0 && pfd.revents & Int16(POLLHUP | POLLERR) != 0) {
          emit("gone \(formatTimestamp(monotonicNow()))")
          return 0
        }
        if status < 0 { throw TestDevError.system("reading \(node.path)", -status) }
        if status == LIBEVDEV_READ_STATUS_SYNC.rawValue {
          // The kernel's buffer overflowed (SYN_DROPPED): say so, then replay the resync.
          if flags == LIBEVDEV_READ_FLAG_NORMAL.rawValue { emit("dropped") }
          flags = LIBEVDEV_READ_FLAG_SYNC.rawValue
        }
        if event.type == EV_SYN && event.code == SYN_REPORT { continue }
        let stamp = MonotonicInstant(
          seconds: Int64(event.time.tv_sec), microseconds: Int64(event.time.tv_usec))
        let type = UInt32(event.type)
        emit(
          "event \(formatTimestamp(stamp)) \(Names.typeName(type)) \(Names.codeName(type: type, code: UInt32(event.code)))"
            + " \(event.value)")
        if event.type == EV_KEY {
          keyEvents += 1
          if let count, keyEvents >= count {
            emit("count")
            return 0
          }
        }
        deadline = monotonicNow() + timeout
      }
      if pfd.revents & Int16(POLLHUP | POLLERR) != 0 {
        emit("gone \(formatTimestamp(monotonicNow()))")
        return 0
      }
    }
  }
}
