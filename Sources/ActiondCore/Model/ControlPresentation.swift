// SPDX-License-Identifier: Apache-2.0
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
    hint(.hold, for: definition, missing: missing, value: value)
  }

  /// Which gesture a hint is for: it decides how the hint begins ("Hold to", "Press
  /// twice to", "Hold 3 s to", "Keep holding to") and, for a momentary toggle, the verb.
  public enum HintGesture: Hashable, Sendable {
    /// The hold (also the `hint` of ``ControlPresentation`` and of `list`).
    case hold
    /// A hold of a momentary toggle: on while held, so the verb is always the one that
    /// turns it on.
    case momentaryHold
    case doublePress
    /// A long hold, with its threshold (the hint says how long).
    case longHold(TimeSpan)
    /// What keeping on holding will do, announced with `held` on a long-hold button.
    case keepHolding

    var lead: String {
      switch self {
      case .hold, .momentaryHold: "Hold to"
      case .doublePress: "Press twice to"
      case .longHold(let threshold): "Hold \(ControlPresentation.seconds(threshold)) to"
      case .keepHolding: "Keep holding to"
      }
    }
  }

  /// The hint of `definition` for `gesture`: the same rules as ``hint(for:missing:value:)``
  /// (which is the hold's), with the gesture's own beginning. What stands in the way
  /// (missing parameters, an unavailable value) reads the same for every gesture.
  public static func hint(
    _ gesture: HintGesture, for definition: ControlDefinition, missing: [String], value: ControlValue
  ) -> String {
    if !missing.isEmpty {
      return "Configure \(definition.displayName): choose \(listing(missing))"
    }
    switch definition.type {
    case .button:
      return "\(gesture.lead) \(definition.actionHint.on)"
    case .toggle:
      if case .unavailable = value { return "\(definition.displayName) unavailable" }
      if gesture == .momentaryHold { return "\(gesture.lead) \(definition.actionHint.off)" }
      return "\(gesture.lead) \(definition.actionHint[value.isOn ?? definition.previewValue])"
    }
  }

  /// The hints of several gestures as one line: `Hold to Start · Press twice to Mute`.
  public static func joined(_ hints: [String]) -> String { hints.joined(separator: " · ") }

  /// "3 s", "2.5 s", "0.75 s": a threshold as people say it.
  static func seconds(_ span: TimeSpan) -> String {
    let ms = span.milliseconds
    var text = String(ms / 1000)
    let fraction = ms % 1000
    if fraction != 0 {
      var digits = String(fraction)
      digits = String(repeating: "0", count: 3 - digits.count) + digits
      while digits.hasSuffix("0") { digits.removeLast() }
      text += "." + digits
    }
    return text + " s"
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
