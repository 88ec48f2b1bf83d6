// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing

@testable import ActiondCore

/// One line (or one file) must cost time linear in its length, whoever sends it: any
/// client that can connect, read-only ones too, reaches the parser (issue 13, item 15).
///
/// No absolute time is asserted. Each test compares inputs of two sizes in one run: the
/// larger is 4 times the smaller, so linear work takes about 4 times as long and quadratic
/// work about 16 times. Time is the thread's CPU time, so time given to other processes
/// does not count; the minimum of several runs of each filters out the rest of the noise
/// (caches, frequency); rounds continue (up to a bound) until the ratio is seen within 8,
/// so noise makes the test slower rather than failing it.
@Suite struct LinearTimeTests {
  /// The reproducer: a `ping` carrying an extra member with thousands of empty strings,
  /// `bytes` long in total. Each `""` used to cost a walk from the start of the line.
  static func pingWithEmptyStrings(bytes: Int) -> [UInt8] {
    let head = #"{"id":1,"request":"ping","x":["#
    let tail = "]}"
    let count = (bytes - head.utf8.count - tail.utf8.count + 1) / 3  // `"",` each, the first without a comma
    var line = Array(head.utf8)
    line.reserveCapacity(bytes + 3)
    for i in 0..<count { line += i == 0 ? Array("\"\"".utf8) : Array(",\"\"".utf8) }
    line += Array(tail.utf8)
    return line
  }

  /// CPU time this thread spent in `body`, in nanoseconds: time the scheduler gave to
  /// other processes (the machine is shared) does not count, unlike a wall clock.
  static func threadCPUTime(_ body: () -> Void) -> Int64 {
    var start = timespec()
    var end = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
    body()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end)
    return Int64(end.tv_sec - start.tv_sec) * 1_000_000_000 + Int64(end.tv_nsec - start.tv_nsec)
  }

  /// How the larger input's time compares with the smaller one's, both the minimum of
  /// the rounds run so far; stops early once the ratio is within `factor`.
  static func timeRatio(factor: Double, maxRounds: Int = 12, small: () -> Void, large: () -> Void) -> Double {
    var smallest = Int64.max
    var largest = Int64.max
    var ratio = Double.infinity
    for round in 0..<maxRounds {
      smallest = min(smallest, threadCPUTime(small))
      largest = min(largest, threadCPUTime(large))
      ratio = Double(largest) / Double(max(smallest, 1))
      if round >= 2 && ratio <= factor { break }
    }
    return ratio
  }

  @Test func aRequestLineOfEmptyStringsParsesInLinearTime() throws {
    let small = Self.pingWithEmptyStrings(bytes: 16 * 1024)
    let large = Self.pingWithEmptyStrings(bytes: 64 * 1024)
    #expect(large.count <= ProtocolVersion.maxLineLength && large.count > ProtocolVersion.maxLineLength - 4)
    // The reproducer is a valid line that the daemon refuses for its extra member.
    let decoded = large.withUnsafeBufferPointer { ClientMessage.decode(line: $0) }
    guard case .failure(let failure) = decoded else {
      Issue.record("expected a bad-request, got \(decoded)")
      return
    }
    #expect(failure.error.code == .badRequest && failure.id == .integer(1), "\(failure)")
    let ratio = Self.timeRatio(
      factor: 8,
      small: { _ = small.withUnsafeBufferPointer { ClientMessage.decode(line: $0) } },
      large: { _ = large.withUnsafeBufferPointer { ClientMessage.decode(line: $0) } })
    #expect(ratio <= 8, "64 KiB took \(ratio) times as long as 16 KiB")
  }

  @Test func aOneLineConfigurationFileLoadsInLinearTime() {
    func file(bytes: Int) -> ConfigurationSource {
      let head = "{ buttons: [], extra: ["
      var text = head
      text.reserveCapacity(bytes + 8)
      while text.utf8.count < bytes - 4 { text += "'', " }
      text += "''] }"
      return ConfigurationSource(name: "one-line.json", text: text)
    }
    let small = file(bytes: 12_800)
    let large = file(bytes: 51_200)
    do {
      _ = try ConfigurationLoader.load(main: large)
      Issue.record("an unknown member must be a problem")
    } catch {
      #expect(error.problems.contains { $0.message.contains("unknown key") && $0.line == 1 })
    }
    let ratio = Self.timeRatio(
      factor: 8,
      small: { _ = try? ConfigurationLoader.load(main: small) },
      large: { _ = try? ConfigurationLoader.load(main: large) })
    #expect(ratio <= 8, "50 KB took \(ratio) times as long as 12.5 KB")
  }

  /// The did-you-mean search compared the key name with every known one by a full
  /// edit-distance matrix: linear in the name's length, but with a factor of about 9,000
  /// (each of the 600 names times their length), so an 8 KiB name took seconds. It may
  /// now cost no more than a short typo does, within the same factor of 8.
  @Test func anUnknownKeyNameOfKilobytesCostsNoMoreThanATypo() {
    func file(key: String) -> ConfigurationSource {
      ConfigurationSource(name: "key.json", text: #"{ buttons: [ { name: "action", key: "\#(key)" } ] }"#)
    }
    let typo = file(key: "KEY_PROGX")
    let long = file(key: "KEY_" + String(repeating: "A", count: 8 * 1024 - 4))
    for source in [typo, long] {
      do {
        _ = try ConfigurationLoader.load(main: source)
        Issue.record("an unknown key name must be a problem")
      } catch {
        #expect(error.problems.contains { $0.message.contains("unknown key name") })
      }
    }
    let ratio = Self.timeRatio(
      factor: 8,
      small: { _ = try? ConfigurationLoader.load(main: typo) },
      large: { _ = try? ConfigurationLoader.load(main: long) })
    #expect(ratio <= 8, "an 8 KiB key took \(ratio) times as long as a 9-byte one")
  }

  @Test func aLongWordIsComparedOnlyWithCandidatesOfNearlyItsLength() {
    #expect(closestMatch(to: "KEY_PROG9", in: ["KEY_PROG1", "KEY_A"]) == "KEY_PROG1")
    let long = String(repeating: "x", count: 8192)
    // Not compared at all: the edit distance of two 8 KiB words took over 30 s (debug).
    #expect(closestMatch(to: long, in: [long.dropLast() + "y", "x"])?.count == nil)
    #expect(closestMatch(to: "KEY_PROG", in: ["KEY_PROG1", "KEY_PROG1" + long]) == "KEY_PROG1")
  }
}
