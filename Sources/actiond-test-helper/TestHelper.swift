// Child-process fixtures for the ActiondLinux tests. Not installed.
//
//   actiond-test-helper write-state DIR FIRST
//     Saves snapshots FIRST, FIRST+1, ... to DIR/state.json forever, printing each number
//     on stdout after its save returned. SIGTERM is ignored so only SIGKILL stops it
//     (the crash-safety test kills it at random points).
import ActiondCore
import ActiondLinux
import Glibc

@main
struct TestHelper {
  static func main() {
    let arguments = CommandLine.arguments
    guard arguments.count == 4, arguments[1] == "write-state", let first = Int64(arguments[3]) else {
      fail("usage: actiond-test-helper write-state DIR FIRST")
    }
    _ = signal(SIGTERM, SIG_IGN)
    let store = StateStore(directory: arguments[2])
    var n = first
    while true {
      do { try store.save(snapshot(n)) } catch { fail("save \(n): \(error)") }
      do { try Syscall.writeAll(STDOUT_FILENO, Array("\(n)\n".utf8)) } catch { fail("stdout: \(error)") }
      n += 1
    }
  }

  /// Snapshot number `n`: its size varies (padding) so files grow and shrink between saves.
  static func snapshot(_ n: Int64) -> StateSnapshot {
    StateSnapshot(
      assignments: [
        "action": .init(
          kind: "org.example.counter",
          configuration: ["n": .integer(n), "padding": .string(String(repeating: "x", count: Int(n % 7) * 1500))])
      ],
      values: ["org.example.timer": n % 2 == 0, "n-\(n % 5)": true])
  }

  static func fail(_ message: String) -> Never {
    try? Syscall.writeAll(STDERR_FILENO, Array("actiond-test-helper: \(message)\n".utf8))
    exit(2)
  }
}
