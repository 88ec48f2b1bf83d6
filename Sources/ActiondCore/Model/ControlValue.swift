// SPDX-License-Identifier: Apache-2.0
/// What the daemon knows about a toggle's current value.
///
/// The cases keep "not known yet" and "cannot be known" apart from on and off, so
/// nothing ever presents a guess as a value: lists show `previewValue` while the value
/// is `unknown`, and a hold on an `unavailable` toggle fails with the reason.
public enum ControlValue: Hashable, Sendable, CustomStringConvertible {
  case on
  case off
  /// No value has been read yet (startup, just assigned): show the definition's `previewValue`.
  case unknown
  /// The value provider failed or timed out; `reason` says why ("exited with status 2").
  case unavailable(reason: String)

  /// `.on` for true, `.off` for false.
  public init(_ isOn: Bool) { self = isOn ? .on : .off }

  /// true/false when known, nil when unknown or unavailable.
  public var isOn: Bool? {
    switch self {
    case .on: return true
    case .off: return false
    case .unknown, .unavailable: return nil
    }
  }

  /// The state's name on the wire and in logs: `on`, `off`, `unknown`, `unavailable`.
  public var stateName: String {
    switch self {
    case .on: return "on"
    case .off: return "off"
    case .unknown: return "unknown"
    case .unavailable: return "unavailable"
    }
  }

  public var description: String {
    if case .unavailable(let reason) = self { return "unavailable (\(reason))" }
    return stateName
  }
}
