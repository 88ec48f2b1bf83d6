// SPDX-License-Identifier: Apache-2.0
/// What a person does with a button to perform a control. Every button has the hold;
/// the others exist only where a control is assigned to them (docs/configuration.md,
/// "Gestures"). The raw value is the name in configuration files and on the wire.
public enum Gesture: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
  /// Held to the hold threshold: performs there, while the key is down.
  case hold
  /// A second key-down within the double-press window after a short press: performs at
  /// that key-down.
  case doublePress
  /// Held on to the long-hold threshold: performs there (after the hold's control).
  case longHold

  public var description: String { rawValue }
}

/// A control assigned to one gesture of a button.
public struct GestureAssignment: Hashable, Sendable {
  public var instance: ControlInstance
  /// Only for a toggle on the hold: on while held, off when the press ends.
  public var momentary: Bool

  public init(instance: ControlInstance, momentary: Bool = false) {
    self.instance = instance
    self.momentary = momentary
  }
}
