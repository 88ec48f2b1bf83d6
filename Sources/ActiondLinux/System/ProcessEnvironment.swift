// SPDX-License-Identifier: Apache-2.0
import CActiondShim

/// The process environment as a dictionary, read once where needed. Components take an
/// explicit environment so tests can supply their own.
public enum ProcessEnvironment {
  /// A snapshot of `environ`.
  public static func current() -> [String: String] {
    var result: [String: String] = [:]
    guard var pointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = actiond_environ() else { return result }
    while let entry = pointer.pointee {
      let text = String(cString: entry)
      if let equals = text.firstIndex(of: "=") {
        result[String(text[..<equals])] = String(text[text.index(after: equals)...])
      }
      pointer += 1
    }
    return result
  }
}
