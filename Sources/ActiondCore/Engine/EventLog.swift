// SPDX-License-Identifier: Apache-2.0
/// How an announcement reads in the log: a level, a sentence for people, a stable event
/// id (journald `ACTIOND_EVENT` / `MESSAGE_ID`) and key=value fields for machines.
public struct EventLogLine: Hashable, Sendable {
  public var level: LogLevel
  public var message: String
  public var event: String
  public var fields: [(key: String, value: String)]

  public static func == (a: EventLogLine, b: EventLogLine) -> Bool {
    a.level == b.level && a.message == b.message && a.event == b.event
      && a.fields.map(\.key) == b.fields.map(\.key) && a.fields.map(\.value) == b.fields.map(\.value)
  }
  public func hash(into hasher: inout Hasher) {
    hasher.combine(message)
    hasher.combine(event)
  }

  /// The log line of `event`. Presses and releases are `info` (a busy button must not
  /// flood `notice`), what changes the world (`performed`, `assigned`, devices) is
  /// `notice`, and failures are `warning`.
  /// The level `event` is logged at, without building its line: announcements below the
  /// log's level cost nothing but this.
  public static func level(of event: Event) -> LogLevel {
    switch event {
    case .pressed, .released, .releasedAfterHold, .held, .longHeld, .doublePressed, .releasedAfterDoublePress,
      .performing, .cancelled:
      .info
    case .performed, .busy, .assigned, .deviceAdded, .deviceRemoved: .notice
    case .failed: .warning
    case .state(let control, _): control.available ? .info : .warning
    case .configReloaded(let applied, _): applied ? .notice : .error
    }
  }

  public init(_ event: Event) {
    self.event = event.name.rawValue
    level = EventLogLine.level(of: event)
    switch event {
    case .pressed(let button, let kind, let hint, _, _, let threshold):
      message = "button \(button) pressed: \(hint ?? "nothing assigned")"
      fields = [("button", button), ("kind", kind ?? ""), ("threshold_ms", String(threshold.milliseconds))]
    case .released(let button, let kind, let hint, _, _, let duration):
      message = "button \(button) short press (\(duration.milliseconds) ms): \(hint ?? "nothing assigned")"
      fields = [("button", button), ("kind", kind ?? ""), ("duration_ms", String(duration.milliseconds))]
    case .releasedAfterHold(let button, let kind, _, let duration, let longHeld):
      message = "button \(button) released after its \(longHeld ? "long hold" : "hold") (\(duration.milliseconds) ms)"
      fields = [("button", button), ("kind", kind ?? ""), ("duration_ms", String(duration.milliseconds))]
    case .held(let button, let kind, _, let longHold):
      message =
        "button \(button) held\(kind.map { ": performing \($0)" } ?? ", but nothing is assigned")"
        + (longHold.map { "; \($0.hint)" } ?? "")
      fields = [("button", button), ("kind", kind ?? "")]
    case .longHeld(let button, let kind, _):
      message = "button \(button) long-held\(kind.map { ": performing \($0)" } ?? ", but nothing is assigned")"
      fields = [("button", button), ("kind", kind ?? "")]
    case .doublePressed(let button, let kind, _, let gap):
      message =
        "button \(button) double-pressed (\(gap.milliseconds) ms apart)"
        + (kind.map { ": performing \($0)" } ?? ", but nothing is assigned")
      fields = [("button", button), ("kind", kind ?? ""), ("gap_ms", String(gap.milliseconds))]
    case .releasedAfterDoublePress(let button, let kind, _, let duration):
      message = "button \(button) released after its double press (\(duration.milliseconds) ms)"
      fields = [("button", button), ("kind", kind ?? ""), ("duration_ms", String(duration.milliseconds))]
    case .performing(let kind, let button, let source, let gesture, let value):
      let target = value.map { $0 ? " (turning on)" : " (turning off)" } ?? ""
      let by = gesture.map { " by \($0)" } ?? ""
      message = "performing \(kind)\(target)\(button.map { " for button \($0)\(by)" } ?? " from \(source.rawValue)")"
      fields = [
        ("kind", kind), ("button", button ?? ""), ("source", source.rawValue), ("gesture", gesture?.rawValue ?? ""),
      ]
    case .performed(let button, let source, _, let control):
      message = "\(control.displayName): \(control.valueText ?? "done")"
      fields = [
        ("kind", control.kind), ("button", button ?? ""), ("source", source.rawValue),
        ("value", control.value.map { $0 ? "on" : "off" } ?? ""),
      ]
    case .failed(let kind, let button, let source, _, let error):
      message = "\(kind) failed: \(error.message)"
      fields = [("kind", kind), ("button", button ?? ""), ("source", source.rawValue), ("code", error.code.rawValue)]
    case .busy(let kind, let button, _, let gesture):
      let what =
        switch gesture {
        case .doublePress?: "double press"
        case .longHold?: "long hold"
        case .hold?, nil: button == nil ? "perform" : "hold"
        }
      message = "\(kind) is still performing: \(what)\(button.map { " on \($0)" } ?? "") ignored, not queued"
      fields = [("kind", kind), ("button", button ?? "")]
    case .cancelled(let button, let kind, let reason):
      message = "button \(button) press cancelled (\(reason))"
      fields = [("button", button), ("kind", kind ?? ""), ("reason", reason)]
    case .state(let control, _):
      let shown = control.available ? control.valueText ?? "" : "unavailable (\(control.reason ?? "unknown"))"
      message = "\(control.displayName) is \(shown); hint \"\(control.hint)\""
      fields = [("kind", control.kind), ("value", control.value.map { $0 ? "on" : "off" } ?? "")]
    case .assigned(let button, let gesture, let momentary, let control):
      // A hold reads as it did before gestures: "button action is assigned ...".
      let what = gesture == .hold ? "" : " \(gesture)"
      let shown = control.map { "\($0.displayName) (\($0.kind))\(momentary ? ", momentary" : "")" } ?? "nothing"
      message = "button \(button)\(what) is assigned \(shown)"
      fields = [("button", button), ("gesture", gesture.rawValue), ("kind", control?.kind ?? "")]
    case .deviceAdded(let device):
      let grabbed = device.grabbed ? ", grabbed" : ""
      message =
        "device \(device.devnode) \"\(device.name)\" bound for \(device.buttons.joined(separator: ", "))\(grabbed)"
      fields = [("devnode", device.devnode), ("name", device.name), ("buttons", device.buttons.joined(separator: ","))]
    case .deviceRemoved(let device, let reason):
      message = "device \(device.devnode) \"\(device.name)\" unbound\(reason.map { " (\($0))" } ?? "")"
      fields = [("devnode", device.devnode), ("name", device.name), ("reason", reason ?? "")]
    case .configReloaded(let applied, let problems):
      message =
        applied
        ? "configuration reloaded"
        : "configuration rejected, the running one stays (\(ConfigurationError.count(problems.count)))"
      fields = [("applied", applied ? "1" : "0")]
    }
  }
}
