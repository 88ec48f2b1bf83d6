// SPDX-License-Identifier: Apache-2.0
// Conversions between the control model and the protocol and store types, which keep
// their own plain shapes so the wire and disk formats do not move with the model.

extension ControlPresentation {
  /// The wire picture of this presentation (`list`, `status`, `get` answers and events).
  /// `value` is null unless on or off. `reason` says why it cannot be performed right now
  /// (then `available` is false): a missing required configuration (the hint that asks
  /// for it), a toggle whose value is unavailable, or, with `providerMissing`, a provider
  /// intent whose application is not connected. `performing`: its intent is running.
  public func snapshot(performing: Bool = false, providerMissing: Bool = false) -> ControlSnapshot {
    var reason: String?
    if !missing.isEmpty {
      reason = hint
    } else if case .unavailable(let r) = value, type == .toggle {
      reason = r
    } else if providerMissing {
      reason = "no provider application is connected"
    }
    return ControlSnapshot(
      kind: kind, displayName: displayName, type: type == .toggle ? .toggle : .button,
      configuration: configuration, value: type == .toggle ? value.isOn : nil, valueText: valueText, symbol: symbol,
      tint: tint, hint: hint, configured: missing.isEmpty, available: reason == nil, performing: performing,
      reason: reason)
  }
}

extension StateSnapshot.Assignment {
  /// The persisted form of an assignment: the kind and the explicit configuration.
  public init(_ instance: ControlInstance) {
    self.init(kind: instance.kind, configuration: instance.configuration.mapValues(\.json))
  }

  /// The persisted form of a gesture's assignment: the instance's, plus `momentary`.
  public init(_ assignment: GestureAssignment) {
    self.init(
      kind: assignment.instance.kind, configuration: assignment.instance.configuration.mapValues(\.json),
      momentary: assignment.momentary)
  }
}

extension StateSnapshot.Replaced {
  /// How a run-time assignment remembers the configuration file's one it replaced.
  public init(_ assignment: GestureAssignment) {
    self.init(
      kind: assignment.instance.kind, configuration: assignment.instance.configuration.mapValues(\.json),
      momentary: assignment.momentary)
  }
}
