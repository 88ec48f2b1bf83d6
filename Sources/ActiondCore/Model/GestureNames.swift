// SPDX-License-Identifier: Apache-2.0
extension Gesture {
  /// The gesture names, comma separated, in declaration order (for messages:
  /// `must be one of hold, doublePress, longHold`).
  public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

extension GestureAssignment: CustomStringConvertible {
  /// The instance id, marked when momentary (`org.example.mic (momentary)`), for logs.
  public var description: String { momentary ? "\(instance.id) (momentary)" : instance.id }
}
