// Conversions between the control model and the protocol and store types, which keep
// their own plain shapes so the wire and disk formats do not move with the model.

extension ControlPresentation {
  /// The wire picture of this presentation (`list`, `status`, `get` answers and events).
  /// `value` is null unless on or off; `reason` says why a toggle is unavailable or what an
  /// unconfigured instance is missing.
  public func snapshot(performing: Bool = false) -> ControlSnapshot {
    var reason: String?
    if !missing.isEmpty {
      reason = "choose " + ControlPresentation.listing(missing)
    } else if case .unavailable(let r) = value {
      reason = r
    }
    var available = true
    if case .unavailable = value { available = false }
    return ControlSnapshot(
      kind: kind, displayName: displayName, type: type == .toggle ? .toggle : .button,
      configuration: configuration, value: type == .toggle ? value.isOn : nil, valueText: valueText, symbol: symbol,
      tint: tint, hint: hint, configured: missing.isEmpty, available: available, performing: performing,
      reason: reason)
  }
}

extension StateSnapshot.Assignment {
  /// The persisted form of an assignment: the kind and the explicit configuration.
  public init(_ instance: ControlInstance) {
    self.init(kind: instance.kind, configuration: instance.configuration.mapValues(\.json))
  }
}
