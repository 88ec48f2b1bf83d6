// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Foundation
import Testing

/// docs/configuration.md's Gestures section shows how a long hold's threshold reads in its
/// hint ("`2300` → `Hold 2.3 s to Reboot`"): each example is what the daemon produces for a
/// button control named Reboot with that `longHoldThresholdMs` (issue 30 item 8).
@Suite struct ConfigurationDocTests {
  static let text: String = {
    let path = repositoryPath("docs/configuration.md")
    return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
  }()

  /// The "`MS` → `HINT`" pairs of the paragraph on a long hold's seconds (line breaks folded).
  static var secondsExamples: [(ms: Int64, hint: String)] {
    let folded = text.split(separator: "\n").joined(separator: " ")
    var pairs: [(Int64, String)] = []
    var rest = Substring(folded)
    while let arrow = rest.range(of: "` → `") {
      let before = rest[..<arrow.lowerBound]
      let after = rest[arrow.upperBound...]
      defer { rest = after }
      guard let open = before.lastIndex(of: "`"), let ms = Int64(before[before.index(after: open)...]),
        let close = after.firstIndex(of: "`")
      else { continue }
      pairs.append((ms, String(after[..<close])))
    }
    return pairs
  }

  @Test func aLongHoldsSecondsReadAsDocumented() {
    let reboot = ControlDefinition(
      kind: "org.example.reboot", type: .button, displayName: "Reboot",
      intent: .exec(ExecSpec(argv: ["/usr/bin/systemctl", "reboot"])))
    let examples = Self.secondsExamples
    #expect(examples.map(\.ms) == [3000, 2300, 1250, 2005, 60000])
    for (ms, hint) in examples {
      let produced = ControlPresentation.hint(
        .longHold(.milliseconds(ms)), for: reboot, missing: [], value: .unknown)
      #expect(produced == hint, "longHoldThresholdMs \(ms)")
    }
  }
}
