/// What the user does with a button to perform a control: the iPhone's one gesture
/// (press and hold) plus two a Linux button can offer on top. The raw value is the name
/// used everywhere: configuration keys, the wire (`gesture`), the state file and
/// `ACTIOND_GESTURE`.
public enum Gesture: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
  /// Hold until `holdThresholdMs`: performs once, at the threshold, while the key is down.
  case hold
  /// Press, release and press again within `doublePressWindowMs`: performs at the second key-down.
  case doublePress
  /// Keep holding until `longHoldThresholdMs`: performs at that second threshold.
  case longHold

  public var description: String { rawValue }

  /// The gesture names, comma separated, in declaration order (for messages).
  public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// One gesture's assignment on a button: the control instance it performs and, for a
/// hold of a toggle, whether it is momentary (on while held, off at the release).
public struct GestureAssignment: Hashable, Sendable, CustomStringConvertible {
  public var instance: ControlInstance
  /// Only ever true for the `hold` of a toggle: the configuration loader, the `assign`
  /// request and ``ControlEngine/assign(_:to:gesture:momentary:)`` refuse anything else.
  public var momentary: Bool

  public init(_ instance: ControlInstance, momentary: Bool = false) {
    self.instance = instance
    self.momentary = momentary
  }

  public var description: String { momentary ? "\(instance.id) (momentary)" : instance.id }
}
