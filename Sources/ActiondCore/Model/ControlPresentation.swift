/// How a control instance looks right now: the hint a short press announces, the value
/// text, symbol and tint clients render. The one place the hint rules live.
///
/// Hint rules (`hint(for:missing:value:)`):
///
/// | situation                                  | hint                                   |
/// | ------------------------------------------ | -------------------------------------- |
/// | required parameters missing                | `Configure Flashlight: choose led`     |
/// | button                                     | `Hold to <actionHint>` (default: displayName) |
/// | toggle, value on                           | `Hold to <actionHint.on>` (default "Turn Off") |
/// | toggle, value off                          | `Hold to <actionHint.off>` (default "Turn On") |
/// | toggle, value unknown (nothing read yet)   | as if the value were `previewValue`    |
/// | toggle, value unavailable                  | `Work Timer unavailable`               |
///
/// An unavailable toggle gets no "Hold to" verb because the verb would be a guess: a
/// hold on it fails with the reason instead of flipping an unknown state.
public struct ControlPresentation: Hashable, Sendable {
  public var kind: String
  /// `ControlInstance.id`.
  public var instanceID: String
  public var displayName: String
  public var type: ControlType
  /// What a short press announces.
  public var hint: String
  /// The value as known (not replaced by the preview): clients can tell a preview from a real value.
  public var value: ControlValue
  /// The label of the value: `valueText.on/off`, for an unknown value the preview's,
  /// "Unavailable" when unavailable; nil for buttons.
  public var valueText: String?
  /// The symbol for the shown state (the preview's while unknown); nil when none is defined.
  public var symbol: String?
  public var tint: String?
  /// Required parameters without a value (empty when configured).
  public var missing: [String]
  /// The instance's explicit configuration (`ControlInstance.configurationJSON`).
  public var configuration: JSONObject

  /// The text shown as the value of an unavailable toggle.
  public static let unavailableText = "Unavailable"

  public init(definition: ControlDefinition, instance: ControlInstance, value: ControlValue) {
    kind = definition.kind
    instanceID = instance.id
    displayName = definition.displayName
    type = definition.type
    missing = instance.missing
    configuration = instance.configurationJSON
    hint = ControlPresentation.hint(for: definition, missing: instance.missing, value: value)
    tint = definition.tint
    switch definition.type {
    case .button:
      self.value = .unknown
      valueText = nil
      symbol = definition.symbol?.on
    case .toggle:
      self.value = value
      let shown = value.isOn ?? definition.previewValue
      if case .unavailable = value {
        valueText = ControlPresentation.unavailableText
      } else {
        valueText = (definition.valueText ?? ControlDefinition.defaultValueText)[shown]
      }
      symbol = definition.symbol?[shown]
    }
  }

  /// The hint for a short press (see the table on `ControlPresentation`). Buttons ignore `value`.
  public static func hint(for definition: ControlDefinition, missing: [String], value: ControlValue) -> String {
    if !missing.isEmpty {
      return "Configure \(definition.displayName): choose \(listing(missing))"
    }
    switch definition.type {
    case .button:
      return "Hold to \(definition.actionHint.on)"
    case .toggle:
      switch value {
      case .on: return "Hold to \(definition.actionHint.on)"
      case .off: return "Hold to \(definition.actionHint.off)"
      case .unknown: return "Hold to \(definition.actionHint[definition.previewValue])"
      case .unavailable: return "\(definition.displayName) unavailable"
      }
    }
  }

  /// The hint of a button without an assignment.
  public static func unassignedHint(button: String) -> String { "No control assigned to \(button)" }

  /// The text of a toggle's value after a perform or a change: `valueText` for on/off,
  /// the preview's for unknown, "Unavailable" otherwise; nil for buttons.
  public static func valueText(for definition: ControlDefinition, value: ControlValue) -> String? {
    guard definition.type == .toggle else { return nil }
    if case .unavailable = value { return unavailableText }
    return (definition.valueText ?? ControlDefinition.defaultValueText)[value.isOn ?? definition.previewValue]
  }

  /// "a", "a and b", "a, b and c".
  static func listing(_ items: [String]) -> String {
    switch items.count {
    case 0: return ""
    case 1: return items[0]
    default: return items.dropLast().joined(separator: ", ") + " and " + items.last!
    }
  }
}
