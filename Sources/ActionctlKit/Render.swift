// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux

/// Human-readable text for replies and events (the default output of `actionctl`).
enum Render {
  /// "Running", "On", "unavailable", ...: the state a person cares about.
  static func state(_ c: ControlSnapshot) -> String {
    if !c.configured { return "not configured" }
    if !c.available { return "unavailable" }
    if c.performing { return "performing…" }
    if let text = c.valueText { return text }
    switch (c.type, c.value) {
    case (.toggle, true?): return "On"
    case (.toggle, false?): return "Off"
    case (.toggle, nil): return "unknown"
    case (.button, _): return "—"
    }
  }

  static func configuration(_ o: JSONObject) -> String {
    o.isEmpty
      ? ""
      : " " + o.map { "\($0.key)=\($0.value.stringValue ?? JSONEncoding.compact($0.value))" }.joined(separator: " ")
  }

  /// Left-aligned columns separated by two spaces.
  static func table(_ rows: [[String]]) -> String {
    guard let width = rows.map(\.count).max() else { return "" }
    var widths = [Int](repeating: 0, count: width)
    for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
    return rows.map { row in
      var line = ""
      for (i, cell) in row.enumerated() {
        line += cell
        if i < row.count - 1 { line += String(repeating: " ", count: widths[i] - cell.count + 2) }
      }
      // Empty last cells (an unassigned button) leave no trailing blanks.
      while line.hasSuffix(" ") { line.removeLast() }
      return line
    }.joined(separator: "\n")
  }

  /// One row per button and assigned gesture: the hold's row first (GESTURE `hold`, or
  /// `hold (momentary)`), then `doublePress` and `longHold` rows without repeating the
  /// button's key and devices.
  static func buttons(_ buttons: [ButtonStatus]) -> String {
    guard !buttons.isEmpty else { return "no buttons configured" }
    var rows = [["BUTTON", "KEY", "DEVICE", "GESTURE", "CONTROL", "KIND", "STATE", "HINT"]]
    for b in buttons {
      let device = b.devices.isEmpty ? "(none)" : b.devices.joined(separator: ",")
      let assigned = Gesture.allCases.compactMap { g in b.control(of: g).map { (g, $0) } }
      guard !assigned.isEmpty else {
        rows.append([b.name, b.key, device, "", "(unassigned)", "", "", ""])
        continue
      }
      for (i, (gesture, c)) in assigned.enumerated() {
        let name = gesture == .hold && b.momentary ? "hold (momentary)" : gesture.rawValue
        rows.append(
          (i == 0 ? [b.name, b.key, device] : ["", "", ""])
            + [name, c.displayName + configuration(c.configuration), c.kind, state(c), c.hint])
      }
    }
    // Feedback outputs under the table, one line per button that has any: a column
    // would be mostly empty, and a button may have several outputs.
    let feedback = buttons.filter { !$0.feedback.isEmpty }.map {
      "feedback of \($0.name): " + $0.feedback.map(\.description).joined(separator: "; ")
    }
    return ([table(rows)] + feedback).joined(separator: "\n")
  }

  static func controls(_ controls: [ControlSnapshot]) -> String {
    guard !controls.isEmpty else { return "no controls" }
    var rows = [["KIND", "NAME", "TYPE", "STATE", "HINT"]]
    for c in controls {
      rows.append([c.kind, c.displayName + configuration(c.configuration), c.type.rawValue, state(c), c.hint])
    }
    return table(rows)
  }

  static func detail(_ c: ControlSnapshot) -> String {
    var lines = ["\(c.displayName) (\(c.kind))", "  type: \(c.type.rawValue)", "  state: \(state(c))"]
    if let v = c.value { lines.append("  value: \(v)") }
    if !c.configuration.isEmpty { lines.append("  configuration:\(configuration(c.configuration))") }
    if let s = c.symbol { lines.append("  symbol: \(s)") }
    if let t = c.tint { lines.append("  tint: \(t)") }
    lines.append("  hint: \(c.hint)")
    if let r = c.reason { lines.append("  reason: \(r)") }
    return lines.joined(separator: "\n")
  }

  static func reply(_ reply: Reply, hello: Hello) -> String {
    switch reply.result {
    case .buttons(let b): return buttons(b)
    case .controls(let c): return reply.request == .get ? c.map(detail).joined(separator: "\n") : controls(c)
    case .control(let c): return "\(c.displayName): \(state(c))"
    case .button(let b):
      let assigned = Gesture.allCases.compactMap { g in b.control(of: g).map { (g, $0) } }
      guard !assigned.isEmpty else { return "\(b.name): (unassigned)" }
      if reply.request == .press {
        // A control's hint speaks of its hold ("Hold to Start"): the other gestures are named instead.
        if let c = b.control { return "\(b.name): \(c.hint)" }
        return "\(b.name): " + assigned.map { "\($0.0) \($0.1.displayName)" }.joined(separator: ", ")
      }
      // The hold alone reads as before gestures; other gestures get a line each, named.
      return assigned.map { gesture, c in
        let named = gesture == .hold ? (b.momentary ? " (hold, momentary)" : "") : " (\(gesture))"
        return
          "\(b.name)\(named) → \(c.displayName)\(configuration(c.configuration)) (\(c.kind)): \(state(c)), \(c.hint)"
      }.joined(separator: "\n")
    case .devices(let d):
      guard !d.isEmpty else { return "no devices bound" }
      var rows = [["DEVICE", "NAME", "ID", "BUTTONS", "GRABBED"]]
      for x in d {
        rows.append([x.devnode, x.name, x.id ?? "", x.buttons.joined(separator: ","), x.grabbed ? "yes" : "no"])
      }
      return table(rows)
    case .subscribed: return "subscribed"
    case .registered(let kinds): return "providing " + kinds.joined(separator: ", ")
    case .version(let p, let d): return "actiond \(d) (protocol \(p)), actionctl \(ActiondVersion.string)"
    case .empty: return "ok"
    }
  }

  /// One plain line per event (the format off a terminal).
  static func event(_ e: Event) -> String {
    func on(_ button: String?) -> String { button.map { " \($0)" } ?? "" }
    switch e {
    case .pressed(let b, let k, let hint, _, _, let threshold):
      return
        "pressed \(b)\(k.map { " \($0)" } ?? ""): \(hint ?? "no control assigned") (hold \(threshold.milliseconds) ms)"
    case .released(let b, _, let hint, _, _, _): return "released \(b): \(hint ?? "no control assigned")"
    case .releasedAfterHold(let b, _, _, let d, let long):
      return "released-after-hold \(b) (\(d.milliseconds) ms\(long ? ", long hold" : ""))"
    case .held(let b, let k, _, let longHold):
      return "held \(b)\(k.map { " \($0)" } ?? "")\(longHold.map { "; \($0.hint)" } ?? "")"
    case .longHeld(let b, let k, _): return "long-held \(b)\(k.map { " \($0)" } ?? "")"
    case .doublePressed(let b, let k, _, let gap):
      return "double-pressed \(b)\(k.map { " \($0)" } ?? "") (\(gap.milliseconds) ms apart)"
    case .releasedAfterDoublePress(let b, _, _, let d): return "released-after-double-press \(b) (\(d.milliseconds) ms)"
    case .performing(let k, let b, let source, let gesture, _):
      return "performing \(k)\(on(b)) (\(gesture?.rawValue ?? source.rawValue))"
    case .performed(let b, _, _, let c): return "performed \(c.kind)\(on(b)): \(c.displayName) \(state(c))"
    case .failed(let k, let b, _, _, let error): return "failed \(k)\(on(b)): \(error.message) (\(error.code))"
    case .busy(let k, let b, _, _): return "busy \(k)\(on(b)): still performing"
    case .cancelled(let b, _, let reason): return "cancelled \(b): \(reason)"
    case .state(let c, _): return "state \(c.kind): \(c.displayName) \(state(c))"
    case .assigned(let b, let gesture, let momentary, let c):
      let named = gesture == .hold ? (momentary ? " (hold, momentary)" : "") : " (\(gesture))"
      return "assigned \(b)\(named): " + (c.map { "\($0.displayName) (\($0.kind))" } ?? "(unassigned)")
    case .deviceAdded(let d): return "device-added \(d.devnode) \(d.name) [\(d.buttons.joined(separator: ","))]"
    case .deviceRemoved(let d, let reason):
      return "device-removed \(d.devnode) \(d.name)\(reason.map { ": \($0)" } ?? "")"
    case .configReloaded(let applied, let problems):
      return applied
        ? "config-reloaded"
        : "config-reloaded: rejected, keeping the previous configuration\n"
          + problems.map { "  \($0)" }.joined(separator: "\n")
    }
  }
}
