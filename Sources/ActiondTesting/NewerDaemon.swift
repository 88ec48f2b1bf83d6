// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// protocol.md, Versioning: what a newer daemon may write, for the tests that every client
/// (actionctl, actiond-mqtt) reads it as it reads this version's.
public enum NewerDaemonJSON {
  /// `value` with extra members in every object, at every depth, except inside a
  /// `configuration` (its members are parameter values, not protocol members).
  public static func withNewMembers(_ value: JSONValue, depth: Int = 0) -> JSONValue {
    switch value {
    case .object(let object):
      var out = JSONObject()
      for member in object {
        out[member.key] = member.key == "configuration" ? member.value : withNewMembers(member.value, depth: depth + 1)
      }
      out["newAtDepth\(depth)"] = ["nested": ["deeper": [1, "two", nil]], "list": [true, 2.5]]
      out["newString\(depth)"] = "x"
      return .object(out)
    case .array(let elements):
      return .array(elements.map { withNewMembers($0, depth: depth + 1) })
    default:
      return value
    }
  }
}
