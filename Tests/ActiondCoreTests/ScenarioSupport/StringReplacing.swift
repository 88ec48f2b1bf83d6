// SPDX-License-Identifier: Apache-2.0
extension String {
  /// The tests' substring replace (the core has none: its one use was on a number's ASCII bytes,
  /// and String's own search would link the regex modules into every program).
  func replacingOccurrences(of target: String, with replacement: String) -> String {
    guard !target.isEmpty else { return self }
    var out = ""
    var rest = Substring(self)
    while let r = rest.firstRange(of: target) {
      out += rest[..<r.lowerBound]
      out += replacement
      rest = rest[r.upperBound...]
    }
    out += rest
    return out
  }
}
