// SPDX-License-Identifier: Apache-2.0
/// The name of an announcement, as written in an event's `event` member.
public enum EventName: String, Hashable, Sendable, CaseIterable {
  case pressed, released
  case releasedAfterHold = "released-after-hold"
  case longHeld = "long-held"
  case doublePressed = "double-pressed"
  case releasedAfterDoublePress = "released-after-double-press"
  case held, performing, performed, failed, busy, cancelled, state, assigned
  case deviceAdded = "device-added"
  case deviceRemoved = "device-removed"
  case configReloaded = "config-reloaded"
}

/// Where a perform came from: a hold on a button, or a `perform` request on the socket.
///
/// An open set, like ``ProtocolErrorCode``: a newer daemon may name a source this version
/// does not know (protocol.md, Versioning), which reads as itself and compares unequal to
/// both constants, rather than making its whole event unreadable.
public struct PerformSource: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  public var rawValue: String
  public init(rawValue: String) { self.rawValue = rawValue }
  public var description: String { rawValue }

  /// A gesture of a button (`gesture` says which).
  public static let button = PerformSource(rawValue: "button")
  /// A `perform` request on the socket.
  public static let socket = PerformSource(rawValue: "socket")
}

/// One gesture's hint, as `pressed` and `released` list them: what that gesture of the
/// button will do (`{"gesture":"doublePress","kind":"…","hint":"Press twice to Mute"}`).
public struct GestureHint: Hashable, Sendable {
  public var gesture: Gesture
  public var kind: String
  public var hint: String

  public init(gesture: Gesture, kind: String, hint: String) {
    self.gesture = gesture
    self.kind = kind
    self.hint = hint
  }

  public var json: JSONValue {
    var b = ObjectBuilder()
    b.set("gesture", gesture.rawValue)
    b.set("kind", kind)
    b.set("hint", hint)
    return b.value
  }

  init(json: JSONValue) throws(ProtocolError) {
    var r = try FieldReader(json, context: "hint")
    let name = try r.string("gesture")
    guard let gesture = Gesture(rawValue: name) else { throw .badRequest("unknown gesture \"\(name)\" in a hint") }
    self.init(gesture: gesture, kind: try r.string("kind"), hint: try r.string("hint"))
  }
}

/// What keeping on holding will do, announced with `held` on a button with a long hold.
public struct LongHoldNotice: Hashable, Sendable {
  /// The long hold's control.
  public var kind: String
  /// `Keep holding to Reboot`.
  public var hint: String
  /// When the long hold is reached (the press's key-down + the long-hold threshold).
  public var deadline: MonotonicInstant

  public init(kind: String, hint: String, deadline: MonotonicInstant) {
    self.kind = kind
    self.hint = hint
    self.deadline = deadline
  }

  public var json: JSONValue {
    var b = ObjectBuilder()
    b.set("kind", kind)
    b.set("hint", hint)
    b.set("deadline", deadline.microseconds)
    return b.value
  }

  init(json: JSONValue) throws(ProtocolError) {
    var r = try FieldReader(json, context: "longHold")
    self.init(
      kind: try r.string("kind"), hint: try r.string("hint"),
      deadline: MonotonicInstant(nanoseconds: try r.integer("deadline") * 1_000))
  }
}

/// An announcement broadcast to subscribers.
///
/// Times are CLOCK_MONOTONIC in microseconds (`time`, `deadline`): client and daemon
/// run on the same machine, so a client can compare them with its own monotonic
/// clock, e.g. to draw the hold bar toward `deadline`.
public enum Event: Hashable, Sendable {
  /// A button went down. A hold reaching `deadline` performs the intent. `kind` is the
  /// hold's control; `hint` every gesture's hint in one line, `hints` the same per gesture.
  case pressed(
    button: String, kind: String?, hint: String?, hints: [GestureHint] = [], time: MonotonicInstant,
    threshold: TimeSpan)
  /// A short press: released before the threshold. Nothing was performed; the hint is the
  /// announcement. On a button with a double press it comes once the window has passed.
  case released(
    button: String, kind: String?, hint: String?, hints: [GestureHint] = [], time: MonotonicInstant,
    duration: TimeSpan)
  /// The key went up after `held` (and `long-held` when `longHeld`): the hold is over (the
  /// intent was already performed at the threshold). With `held` it lets a client build
  /// "while held" behaviour; a momentary toggle's off runs here.
  case releasedAfterHold(
    button: String, kind: String?, time: MonotonicInstant, duration: TimeSpan, longHeld: Bool = false)
  /// The hold reached the threshold; the intent is about to run. `longHold`: what holding
  /// on will do, on a button with a long hold.
  case held(button: String, kind: String?, time: MonotonicInstant, longHold: LongHoldNotice? = nil)
  /// The same press reached the long-hold threshold; `kind` (the long hold's control) performs.
  case longHeld(button: String, kind: String?, time: MonotonicInstant)
  /// A second key-down within the window after a short press; `kind` (the double press's
  /// control) performs. `gap`: how long the key was up between the presses.
  case doublePressed(button: String, kind: String?, time: MonotonicInstant, gap: TimeSpan)
  /// The second press of a double press was released (nothing more happens).
  case releasedAfterDoublePress(button: String, kind: String?, time: MonotonicInstant, duration: TimeSpan)
  /// The intent started. `value` is the target value of a toggle; `gesture` the button
  /// gesture that performed it (nil for socket performs).
  case performing(kind: String, button: String?, source: PerformSource, gesture: Gesture? = nil, value: Bool?)
  /// The intent finished; `control` is the resulting state ("Running").
  case performed(button: String?, source: PerformSource, gesture: Gesture? = nil, control: ControlSnapshot)
  /// The intent (or the value read after it) failed; the state is unchanged.
  case failed(kind: String, button: String?, source: PerformSource, gesture: Gesture? = nil, error: ProtocolError)
  /// A hold or perform arrived while the control's intent was still running; it was not queued.
  case busy(kind: String, button: String?, source: PerformSource, gesture: Gesture? = nil)
  /// A press announced as `pressed` ended before it was decided (neither a short press
  /// nor a hold): its device was lost, events were dropped, or a reload changed its button.
  /// `reason` is a ``PressCancelReason`` description. A press that reached `held` is
  /// never cancelled.
  case cancelled(button: String, kind: String?, reason: String)
  /// A control's state changed, from any source. `buttons` are those it is assigned to.
  case state(control: ControlSnapshot, buttons: [String])
  /// The assignment of one gesture of a button changed; nil control = unassigned.
  /// `momentary`: the hold is now momentary (always false for other gestures).
  case assigned(button: String, gesture: Gesture = .hold, momentary: Bool = false, control: ControlSnapshot?)
  case deviceAdded(DeviceSnapshot)
  /// A bound device went away; `reason` is a ``DeviceUnbindReason/code``.
  case deviceRemoved(DeviceSnapshot, reason: String?)
  /// The configuration file was re-read (SIGHUP; the `reload` request re-runs value
  /// providers and does not announce this). When `problems` is not empty the new
  /// configuration was rejected and the old one stays active.
  case configReloaded(applied: Bool, problems: [String])

  public var name: EventName {
    switch self {
    case .pressed: return .pressed
    case .released: return .released
    case .releasedAfterHold: return .releasedAfterHold
    case .longHeld: return .longHeld
    case .doublePressed: return .doublePressed
    case .releasedAfterDoublePress: return .releasedAfterDoublePress
    case .held: return .held
    case .performing: return .performing
    case .performed: return .performed
    case .failed: return .failed
    case .busy: return .busy
    case .cancelled: return .cancelled
    case .state: return .state
    case .assigned: return .assigned
    case .deviceAdded: return .deviceAdded
    case .deviceRemoved: return .deviceRemoved
    case .configReloaded: return .configReloaded
    }
  }

  /// The buttons this event concerns (for subscription filters).
  public var buttons: [String] {
    switch self {
    case .pressed(let b, _, _, _, _, _), .released(let b, _, _, _, _, _), .releasedAfterHold(let b, _, _, _, _),
      .held(let b, _, _, _), .longHeld(let b, _, _), .doublePressed(let b, _, _, _),
      .releasedAfterDoublePress(let b, _, _, _), .cancelled(let b, _, _), .assigned(let b, _, _, _):
      return [b]
    case .performing(_, let b, _, _, _), .failed(_, let b, _, _, _), .busy(_, let b, _, _), .performed(let b, _, _, _):
      return b.map { [$0] } ?? []
    case .state(_, let buttons): return buttons
    case .deviceAdded(let d), .deviceRemoved(let d, _): return d.buttons
    case .configReloaded: return []
    }
  }

  /// The control kinds this event concerns (for subscription filters): a press concerns
  /// the control of every gesture its hints list.
  public var kinds: [String] {
    switch self {
    case .pressed(_, let k, _, let hints, _, _), .released(_, let k, _, let hints, _, _):
      var kinds = k.map { [$0] } ?? []
      for hint in hints where !kinds.contains(hint.kind) { kinds.append(hint.kind) }
      return kinds
    case .held(_, let k, _, let longHold?):
      return (k.map { [$0] } ?? []) + (longHold.kind == k ? [] : [longHold.kind])
    default:
      return kind.map { [$0] } ?? []
    }
  }

  /// The control kind this event concerns, if any: for a press, the hold's control.
  public var kind: String? {
    switch self {
    case .pressed(_, let k, _, _, _, _), .released(_, let k, _, _, _, _), .releasedAfterHold(_, let k, _, _, _),
      .held(_, let k, _, _), .longHeld(_, let k, _), .doublePressed(_, let k, _, _),
      .releasedAfterDoublePress(_, let k, _, _), .cancelled(_, let k, _):
      return k
    case .performing(let k, _, _, _, _), .failed(let k, _, _, _, _), .busy(let k, _, _, _): return k
    case .performed(_, _, _, let c), .state(let c, _): return c.kind
    case .assigned(_, _, _, let c): return c?.kind
    case .deviceAdded, .deviceRemoved, .configReloaded: return nil
    }
  }

  public var json: JSONValue {
    var b = ObjectBuilder("type", "event")
    b.set("event", name.rawValue)
    switch self {
    case .pressed(let button, let kind, let hint, let hints, let time, let threshold):
      b.set("button", button)
      b.set("kind", kind)
      b.set("hint", hint)
      b.set("hints", .array(hints.map(\.json)))
      b.set("time", time.microseconds)
      b.set("thresholdMs", threshold.milliseconds)
      b.set("deadline", (time + threshold).microseconds)
    case .released(let button, let kind, let hint, let hints, let time, let duration):
      b.set("button", button)
      b.set("kind", kind)
      b.set("hint", hint)
      b.set("hints", .array(hints.map(\.json)))
      b.set("time", time.microseconds)
      b.set("durationMs", duration.milliseconds)
    case .releasedAfterHold(let button, let kind, let time, let duration, let longHeld):
      b.set("button", button)
      b.set("kind", kind)
      b.set("time", time.microseconds)
      b.set("durationMs", duration.milliseconds)
      b.set("longHeld", longHeld)
    case .held(let button, let kind, let time, let longHold):
      b.set("button", button)
      b.set("kind", kind)
      b.set("time", time.microseconds)
      if let longHold { b.set("longHold", longHold.json) }
    case .longHeld(let button, let kind, let time):
      b.set("button", button)
      b.set("kind", kind)
      b.set("time", time.microseconds)
    case .doublePressed(let button, let kind, let time, let gap):
      b.set("button", button)
      b.set("kind", kind)
      b.set("time", time.microseconds)
      b.set("gapMs", gap.milliseconds)
    case .releasedAfterDoublePress(let button, let kind, let time, let duration):
      b.set("button", button)
      b.set("kind", kind)
      b.set("time", time.microseconds)
      b.set("durationMs", duration.milliseconds)
    case .performing(let kind, let button, let source, let gesture, let value):
      b.set("kind", kind)
      b.set("button", button)
      b.set("source", source.rawValue)
      b.set("gesture", gesture?.rawValue)
      b.set("value", value)
    case .performed(let button, let source, let gesture, let control):
      b.set("kind", control.kind)
      b.set("button", button)
      b.set("source", source.rawValue)
      b.set("gesture", gesture?.rawValue)
      b.set("value", control.value.json)
      b.set("valueText", control.valueText)
      b.set("control", control.json)
    case .failed(let kind, let button, let source, let gesture, let error):
      b.set("kind", kind)
      b.set("button", button)
      b.set("source", source.rawValue)
      b.set("gesture", gesture?.rawValue)
      b.set("code", error.code.rawValue)
      b.set("reason", error.message)
    case .busy(let kind, let button, let source, let gesture):
      b.set("kind", kind)
      b.set("button", button)
      b.set("source", source.rawValue)
      b.set("gesture", gesture?.rawValue)
    case .cancelled(let button, let kind, let reason):
      b.set("button", button)
      b.set("kind", kind)
      b.set("reason", reason)
    case .state(let control, let buttons):
      b.set("kind", control.kind)
      b.set("buttons", strings: buttons)
      b.set("control", control.json)
    case .assigned(let button, let gesture, let momentary, let control):
      b.set("button", button)
      b.set("gesture", gesture.rawValue)
      b.set("kind", control?.kind)
      b.set("momentary", momentary)
      b.set("control", control?.json ?? .null)
    case .deviceAdded(let device):
      b.set("device", device.json)
    case .deviceRemoved(let device, let reason):
      b.set("device", device.json)
      b.set("reason", reason)
    case .configReloaded(let applied, let problems):
      b.set("applied", applied)
      b.set("problems", strings: problems)
    }
    return b.value
  }

  /// Reads an event (leniently: unknown members are ignored so newer daemons can add fields).
  public init(json: JSONValue) throws(ProtocolError) {
    var r = try FieldReader(json, context: "event")
    let n = try r.string("event")
    guard let name = EventName(rawValue: n) else { throw .badRequest("unknown event \"\(n)\"") }
    r = try FieldReader(json, context: "event \"\(n)\"")
    // A source this version does not know (a newer daemon's) is read as it is.
    func source(_ r: inout FieldReader) throws(ProtocolError) -> PerformSource {
      PerformSource(rawValue: try r.optionalString("source") ?? PerformSource.button.rawValue)
    }
    // Which gesture performed is information only: one this version does not know (a newer
    // daemon's) reads as none, and the event (its control's new state) still counts.
    func gesture(_ r: inout FieldReader) throws(ProtocolError) -> Gesture? {
      guard let g = try r.optionalString("gesture") else { return nil }
      return Gesture(rawValue: g)
    }
    func hints(_ r: inout FieldReader) throws(ProtocolError) -> [GestureHint] {
      guard let raw = r.raw("hints"), case .array(let items) = raw else { return [] }
      var out: [GestureHint] = []
      for item in items {
        // The hint of a gesture this version does not know (a newer daemon's) is left
        // out: the hints of the gestures it knows still show.
        if let name = item["gesture"]?.stringValue, Gesture(rawValue: name) == nil { continue }
        out.append(try GestureHint(json: item))
      }
      return out
    }
    func time(_ r: inout FieldReader) throws(ProtocolError) -> MonotonicInstant {
      MonotonicInstant(nanoseconds: try r.integer("time") * 1_000)
    }
    switch name {
    case .pressed:
      let time = MonotonicInstant(nanoseconds: try r.integer("time") * 1_000)
      self = .pressed(
        button: try r.string("button"), kind: try r.optionalString("kind"), hint: try r.optionalString("hint"),
        hints: try hints(&r), time: time, threshold: .milliseconds(try r.integer("thresholdMs")))
    case .released:
      self = .released(
        button: try r.string("button"), kind: try r.optionalString("kind"), hint: try r.optionalString("hint"),
        hints: try hints(&r), time: try time(&r), duration: .milliseconds(try r.optionalInteger("durationMs") ?? 0))
    case .releasedAfterHold:
      self = .releasedAfterHold(
        button: try r.string("button"), kind: try r.optionalString("kind"), time: try time(&r),
        duration: .milliseconds(try r.optionalInteger("durationMs") ?? 0),
        longHeld: try r.optionalBool("longHeld") ?? false)
    case .held:
      self = .held(
        button: try r.string("button"), kind: try r.optionalString("kind"), time: try time(&r),
        longHold: try r.raw("longHold").map { v throws(ProtocolError) in try LongHoldNotice(json: v) })
    case .longHeld:
      self = .longHeld(button: try r.string("button"), kind: try r.optionalString("kind"), time: try time(&r))
    case .doublePressed:
      self = .doublePressed(
        button: try r.string("button"), kind: try r.optionalString("kind"), time: try time(&r),
        gap: .milliseconds(try r.optionalInteger("gapMs") ?? 0))
    case .releasedAfterDoublePress:
      self = .releasedAfterDoublePress(
        button: try r.string("button"), kind: try r.optionalString("kind"), time: try time(&r),
        duration: .milliseconds(try r.optionalInteger("durationMs") ?? 0))
    case .performing:
      self = .performing(
        kind: try r.string("kind"), button: try r.optionalString("button"), source: try source(&r),
        gesture: try gesture(&r), value: try r.optionalBool("value"))
    case .performed:
      self = .performed(
        button: try r.optionalString("button"), source: try source(&r), gesture: try gesture(&r),
        control: try ControlSnapshot(json: r.raw("control") ?? .null))
    case .failed:
      let code = try r.optionalString("code") ?? ProtocolErrorCode.failed.rawValue
      self = .failed(
        kind: try r.string("kind"), button: try r.optionalString("button"), source: try source(&r),
        gesture: try gesture(&r), error: ProtocolError(ProtocolErrorCode(code), try r.optionalString("reason") ?? ""))
    case .busy:
      self = .busy(
        kind: try r.string("kind"), button: try r.optionalString("button"), source: try source(&r),
        gesture: try gesture(&r))
    case .cancelled:
      self = .cancelled(
        button: try r.string("button"), kind: try r.optionalString("kind"),
        reason: try r.optionalString("reason") ?? "")
    case .state:
      self = .state(
        control: try ControlSnapshot(json: r.raw("control") ?? .null),
        buttons: try r.optionalStringArray("buttons") ?? [])
    case .assigned:
      // An older daemon sends no gesture: its assignments are holds.
      let g = try r.optionalString("gesture") ?? Gesture.hold.rawValue
      guard let gesture = Gesture(rawValue: g) else {
        throw .badRequest("field \"gesture\" of event \"assigned\" must be one of \(Gesture.names), got \"\(g)\"")
      }
      self = .assigned(
        button: try r.string("button"), gesture: gesture, momentary: try r.optionalBool("momentary") ?? false,
        control: try r.raw("control").map { v throws(ProtocolError) in try ControlSnapshot(json: v) })
    case .deviceAdded:
      self = .deviceAdded(try DeviceSnapshot(json: r.raw("device") ?? .null))
    case .deviceRemoved:
      self = .deviceRemoved(try DeviceSnapshot(json: r.raw("device") ?? .null), reason: try r.optionalString("reason"))
    case .configReloaded:
      self = .configReloaded(
        applied: try r.optionalBool("applied") ?? true, problems: try r.optionalStringArray("problems") ?? [])
    }
  }
}
