// SPDX-License-Identifier: Apache-2.0
// actiond-testdev: creates uinput input devices and presses their keys with exact timing, and
// reads input devices printing kernel timestamps. It exists for the VM test tier (Tests/vm),
// where the guest kernel has uinput; the development machine's kernel does not.
//
//   actiond-testdev create [OPTIONS] [COMMAND ...]     (commands from stdin when none are given)
//   actiond-testdev read (DEVNODE | --name NAME) [--timeout D] [--count N] [--wait D] [--grab]
//   actiond-testdev set-led DEVNODE LED 0|1
//   actiond-testdev list
//
// Every timestamp printed is CLOCK_MONOTONIC in seconds with microseconds, the clock actiond
// switches libevdev to, so what was sent and what a reader saw compare directly.
import ActiondCore
import Glibc

@main
struct TestDev {
  static func main() {
    var arguments = Array(CommandLine.arguments.dropFirst())
    guard let mode = arguments.first else {
      usage(exitCode: 2)
    }
    arguments.removeFirst()
    do {
      switch mode {
      case "create":
        try CreateMode(arguments: arguments).run()
      case "read":
        exit(try ReadMode(arguments: arguments).run())
      case "set-led":
        try SetLEDMode(arguments: arguments).run()
      case "list":
        try listDevices()
      case "-h", "--help", "help":
        usage(exitCode: 0)
      default:
        throw TestDevError.usage("unknown mode '\(mode)'")
      }
    } catch let error as TestDevError {
      if case .usage = error {
        writeError("actiond-testdev: \(error)\n(see actiond-testdev --help)")
        exit(2)
      }
      writeError("actiond-testdev: \(error)")
      exit(1)
    } catch {
      writeError("actiond-testdev: \(error)")
      exit(1)
    }
  }

  static func usage(exitCode: Int32) -> Never {
    let text = """
      usage:
        actiond-testdev create [OPTIONS] [COMMAND ...]
            Creates a uinput device, runs the commands (each argument is one command; without
            arguments one command per line from stdin until end of input), then destroys it.
            --preset gpio-keys|usb-keyboard   shape of the device (default gpio-keys)
                gpio-keys:    name "gpio-keys", bus host, id 0001:0001, no EV_REP,
                              keys KEY_POWER KEY_PROG1 (like a GPIO button's device)
                usb-keyboard: name "actiond-testdev USB Keyboard", bus usb, id 1209:0001,
                              EV_REP (the kernel autorepeats held keys), a full key set
            --name NAME  --phys PHYS  --uniq UNIQ  --bus usb|host|bluetooth|i8042|virtual|0xNN
            --id VVVV:PPPP  --version 0xNNNN  --keys K1,K2,...  (replaces the preset's keys)
            --add-keys K1,...  --rep | --no-rep  --rep-delay D  --rep-period D
            --leds L1,...  EV_LED codes (LED_CAPSL or capsl): the device prints every LED
                           change it is sent, as the kernel delivers it to the uinput fd
            --snd S1,...   EV_SND codes (SND_TONE, SND_BELL or tone): prints every sound it is sent
            --ff           EV_FF FF_RUMBLE (ff_effects_max 10): answers effect uploads and
                           erasures from its uinput fd, prints them and every play and stop
          commands:
            down KEY | up KEY | press KEY DURATION | sleep DURATION
            repeat KEY N every DURATION     (N autorepeat events, value 2)
            destroy | recreate | echo TEXT
          durations: 700ms, 1.5s, 250us.  keys: KEY_PROG1, BTN_0, or prog1.
          prints: "created DEVNODE ...", "sent SEC.USEC EV_KEY KEY VALUE", "destroyed SEC.USEC",
            and with --leds "led SEC.USEC LED VALUE" for each LED change the device receives
            (the kernel's stamp; writing an LED's current value delivers nothing); with --snd
            "snd SEC.USEC SND_TONE HZ" (0: silence); with --ff "ff-upload SEC.USEC effect=ID
            FF_RUMBLE strong=S weak=W length=MS", "ff SEC.USEC effect=ID 1|0" (play, stop) and
            "ff-erase SEC.USEC effect=ID".
        actiond-testdev read (DEVNODE | --name NAME) [--timeout D] [--count N] [--wait D] [--grab]
            Prints "opened DEVNODE ...", then "event SEC.USEC TYPE CODE VALUE" for every event
            but SYN_REPORT; ends with "timeout" after D without events (default 10s), "count"
            after N key events, or "gone SEC.USEC" when the device disappears. --wait D waits
            up to D for the device to appear (default 5s). --grab takes the device exclusively.
        actiond-testdev set-led DEVNODE LED 0|1
            Writes EV_LED LED and SYN_REPORT to DEVNODE; prints "set-led SEC.USEC DEVNODE LED VALUE".
        actiond-testdev list
            One line per /dev/input/event* device: node, name, bus, id, EV_REP, key count.
      """
    if exitCode == 0 { emit(text) } else { writeError(text) }
    exit(exitCode)
  }
}

/// What goes wrong, worded for the scenario log that shows it.
enum TestDevError: Error, CustomStringConvertible {
  case usage(String)
  case system(String, Int32)
  case failed(String)

  var description: String {
    switch self {
    case .usage(let message): return message
    case .system(let what, let code): return "\(what): \(String(cString: strerror(code)))"
    case .failed(let message): return message
    }
  }
}

/// Writes one line to stdout with a single write(2): unbuffered, because scenarios wait for
/// lines while the tool still runs, and whole, because several tools may share one log.
func emit(_ line: String) {
  writeAll(1, line + "\n")
}

func writeError(_ text: String) {
  writeAll(2, text + "\n")
}

private func writeAll(_ fd: Int32, _ text: String) {
  var bytes = Array(text.utf8)
  var offset = 0
  while offset < bytes.count {
    let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
    if n < 0 && errno == EINTR { continue }
    if n <= 0 { return }
    offset += n
  }
}

/// CLOCK_MONOTONIC now.
func monotonicNow() -> MonotonicInstant {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return MonotonicInstant(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
}

/// Sleeps until `deadline` on CLOCK_MONOTONIC (absolute, so wake-up latency does not accumulate).
func sleep(until deadline: MonotonicInstant) {
  var ts = timespec(
    tv_sec: Int(deadline.nanoseconds / 1_000_000_000), tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
  while true {
    let rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil)
    if rc != EINTR { return }
  }
}

/// "SEC.USEC", the format of every timestamp this tool prints.
func formatTimestamp(_ instant: MonotonicInstant) -> String {
  let micros = instant.nanoseconds / 1_000
  let fraction = String(micros % 1_000_000)
  return "\(micros / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
}

/// Parses "700ms", "1.5s", "250us".
func parseDuration(_ text: String) throws -> TimeSpan {
  let units: [(String, Double)] = [("ms", 1e6), ("us", 1e3), ("s", 1e9)]
  for (suffix, scale) in units where text.hasSuffix(suffix) {
    let number = text.dropLast(suffix.count)
    guard let value = Double(number), value >= 0, value.isFinite else { break }
    return TimeSpan(nanoseconds: Int64((value * scale).rounded()))
  }
  throw TestDevError.usage("bad duration '\(text)' (expected e.g. 700ms, 1.5s, 250us)")
}

/// Walks a mode's arguments: each in turn, the value an option takes, or all that is left.
struct ArgumentCursor {
  private let arguments: [String]
  private var index = 0

  init(_ arguments: [String]) { self.arguments = arguments }

  /// The next argument, nil at the end.
  mutating func next() -> String? {
    guard index < arguments.count else { return nil }
    defer { index += 1 }
    return arguments[index]
  }

  /// The argument after `option`, which needs one.
  mutating func value(for option: String) throws -> String {
    guard let value = next() else { throw TestDevError.usage("\(option) needs a value") }
    return value
  }

  /// Everything not consumed yet (after `--`).
  mutating func rest() -> [String] {
    defer { index = arguments.count }
    return Array(arguments[index...])
  }
}
