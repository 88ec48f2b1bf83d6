// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux

/// One freedesktop notification as `notify-send` (libnotify-bin) takes it.
struct DesktopNotification: Equatable {
  enum Urgency: String { case low, normal, critical }

  var summary: String
  var body: String
  /// A freedesktop icon name (``FreedesktopIcon``); nil shows none.
  var icon: String?
  var urgency: Urgency = .normal
  /// 0...100: the `value` hint, which notification daemons draw as a bar; nil draws none.
  var progress: Int?
  /// How long the server shows it, in milliseconds.
  var expireMilliseconds: Int
  /// Not kept in the server's history: a step of a press, not its result.
  var transient: Bool

  /// `notify-send`'s arguments (without the program). `--print-id`: its id is read from
  /// stdout so that the next step of the press replaces this one (`--replace-id`).
  func arguments(replacing id: UInt32?, appName: String = NotificationPlanner.appName) -> [String] {
    var a = ["--app-name=\(appName)", "--print-id"]
    if let id { a.append("--replace-id=\(id)") }
    a += ["--urgency=\(urgency.rawValue)", "--expire-time=\(expireMilliseconds)", "--category=device"]
    if let icon { a.append("--icon=\(icon)") }
    if let progress { a.append("--hint=int:value:\(progress)") }
    if transient { a.append("--transient") }
    // `--` ends the options: a summary or body starting with a dash stays text.
    return a + ["--", summary, body]
  }
}

/// Freedesktop icon names (Icon Naming Specification) for the SF-Symbols-style names that
/// controls use as `symbol`. Only names with a good standard counterpart are mapped; a
/// symbol that already is a freedesktop name (it has a dash) or a file path passes as is.
enum FreedesktopIcon {
  static let names: [String: String] = [
    "speaker": "audio-volume-medium",
    "speaker.wave.1": "audio-volume-low",
    "speaker.wave.2": "audio-volume-medium",
    "speaker.wave.3": "audio-volume-high",
    "speaker.slash": "audio-volume-muted",
    "mic": "audio-input-microphone",
    "mic.slash": "microphone-sensitivity-muted",
    "camera": "camera-photo",
    "video": "camera-video",
    "terminal": "utilities-terminal",
    "gear": "preferences-system",
    "gearshape": "preferences-system",
    "play": "media-playback-start",
    "play.circle": "media-playback-start",
    "pause": "media-playback-pause",
    "pause.circle": "media-playback-pause",
    "stop": "media-playback-stop",
    "stop.circle": "media-playback-stop",
    "record.circle": "media-record",
    "power": "system-shutdown",
    "restart": "system-reboot",
    "arrow.clockwise": "view-refresh",
    "lock": "system-lock-screen",
    "keyboard": "input-keyboard",
    "printer": "printer",
    "wifi": "network-wireless",
    "battery.100": "battery-full",
    "bell": "preferences-system-notifications",
    "exclamationmark.triangle": "dialog-warning",
  ]

  /// The icon for `symbol`: `.fill` variants map as their outline, and a name with more
  /// detail than the table falls back to its stem (`speaker.wave.2.circle` → `speaker.wave.2`).
  static func name(forSymbol symbol: String?) -> String? {
    guard let symbol, !symbol.isEmpty else { return nil }
    if symbol.hasPrefix("/") || symbol.contains("-") { return symbol }
    var parts = symbol.split(separator: ".").filter { $0 != "fill" }
    while !parts.isEmpty {
      if let name = names[parts.joined(separator: ".")] { return name }
      parts.removeLast()
    }
    return nil
  }
}

/// Turns announcements into desktop notifications: pure (events and times in,
/// notifications out), so the mapping is tested without a notification server.
///
/// Every event of a press on a button updates **one** notification, its *slot* (the
/// button's name): the hint when the button goes down, with a bar filling toward the
/// hold threshold, then the result. A new press on the same button replaces that
/// notification too, whatever it still shows: the last press is what matters, and a
/// button pressed ten times leaves one notification, not ten. Different buttons have
/// their own. A `perform` of a kind without a button has a slot of its own per kind.
struct NotificationPlanner {
  static let appName = "actiond"
  /// A press's steps stay up a while, in case its end never comes (actionctl stopped).
  static let pressExpiry = 10_000
  /// A result (or a short press's hint) stays this long.
  static let resultExpiry = 5_000
  /// A failure stays longer, and is critical: the intent did not happen.
  static let failureExpiry = 10_000
  /// Intermediate bar updates: the threshold is cut into at most this many steps...
  static let progressSteps: Int64 = 4
  /// ...no shorter than this: each step is one `notify-send` process.
  static let minimumStep = TimeSpan.milliseconds(100)

  struct Update: Equatable {
    /// The notification this replaces: a button's name, or `kind:KIND`.
    var slot: String
    var notification: DesktopNotification
  }

  /// A press in progress on a button: what its notification shows, and the bar.
  private struct Press {
    var summary: String
    var body: String
    var icon: String?
    var hints: [GestureHint]
    /// The bar fills from `start` to `deadline`; nil when no bar fills (no hold, or done).
    var bar: (start: MonotonicInstant, deadline: MonotonicInstant)? {
      didSet { if bar == nil { due = nil } }
    }
    var progress: Int?
    /// When the bar's next step is shown; nil: no timer.
    var due: MonotonicInstant?
  }

  /// The hold's control of each button, from `hello`, `assigned` and `state`.
  private var holdControls: [String: ControlSnapshot] = [:]
  /// Every control seen, by kind, for the names of `failed` and `busy`.
  private var controls: [String: ControlSnapshot] = [:]
  private var presses: [String: Press] = [:]

  init(buttons: [ButtonStatus] = []) {
    for b in buttons {
      holdControls[b.name] = b.control
      for c in [b.control, b.doublePress, b.longHold].compactMap({ $0 }) { controls[c.kind] = c }
    }
  }

  /// When the next bar step is due; nil when no bar fills (no wakeup at all).
  var nextStep: MonotonicInstant? { presses.values.compactMap(\.due).min() }

  /// The bar value at `now`, 0...100.
  static func progress(start: MonotonicInstant, deadline: MonotonicInstant, now: MonotonicInstant) -> Int {
    let total = (deadline - start).nanoseconds
    guard total > 0 else { return 100 }
    return Int(min(max((now - start).nanoseconds * 100 / total, 0), 100))
  }

  /// The first step after `now` (steps of a quarter of the threshold, at least
  /// ``minimumStep``), or nil when the next would be the deadline itself: `held` fills
  /// the bar there.
  private static func step(
    after now: MonotonicInstant, bar: (start: MonotonicInstant, deadline: MonotonicInstant)
  ) -> MonotonicInstant? {
    let total = (bar.deadline - bar.start).nanoseconds
    guard total > 0 else { return nil }
    let step = max(total / progressSteps, minimumStep.nanoseconds)
    let elapsed = max((now - bar.start).nanoseconds, 0)
    let next = (elapsed / step + 1) * step
    return next < total ? bar.start + TimeSpan(nanoseconds: next) : nil
  }

  /// Starts (or restarts) the bar of `p` at `now`.
  private static func fill(
    _ p: inout Press, from start: MonotonicInstant, to deadline: MonotonicInstant, now: MonotonicInstant
  ) {
    p.bar = (start, deadline)
    p.progress = progress(start: start, deadline: deadline, now: now)
    p.due = step(after: now, bar: (start, deadline))
  }

  /// The bar steps due at `now`.
  mutating func step(now: MonotonicInstant) -> [Update] {
    var updates: [Update] = []
    for (button, press) in presses.sorted(by: { $0.key < $1.key }) {
      guard let bar = press.bar, let due = press.due, due <= now else { continue }
      var p = press
      Self.fill(&p, from: bar.start, to: bar.deadline, now: now)
      presses[button] = p
      updates.append(Update(slot: button, notification: Self.step(p)))
    }
    return updates
  }

  private static func step(_ p: Press) -> DesktopNotification {
    DesktopNotification(
      summary: p.summary, body: p.body, icon: p.icon, progress: p.progress, expireMilliseconds: pressExpiry,
      transient: true)
  }

  private func displayName(_ kind: String?) -> String? { kind.flatMap { controls[$0]?.displayName } }

  /// The notification an event changes, if any.
  mutating func handle(_ event: Event, now: MonotonicInstant) -> Update? {
    switch event {
    case .pressed(let b, let kind, let hint, let hints, let time, let threshold):
      let control = holdControls[b]
      var p = Press(
        summary: control?.displayName ?? displayName(kind) ?? b,
        body: hints.isEmpty ? (hint ?? "No control assigned") : hints.map(\.hint).joined(separator: "\n"),
        icon: FreedesktopIcon.name(forSymbol: control?.symbol), hints: hints)
      if kind != nil {
        // Only a hold fills a bar; a button with only a double press has none.
        Self.fill(&p, from: time, to: time + threshold, now: now)
      }
      presses[b] = p
      return Update(slot: b, notification: Self.step(p))
    case .held(let b, _, let time, let longHold):
      var p = presses[b] ?? Press(summary: holdControls[b]?.displayName ?? b, body: "", hints: [])
      if let longHold {
        // The bar starts over toward the long hold, with what holding on will do.
        p.body = longHold.hint
        Self.fill(&p, from: time, to: longHold.deadline, now: now)
      } else {
        p.bar = nil
        p.progress = 100
      }
      presses[b] = p
      return Update(slot: b, notification: Self.step(p))
    case .longHeld(let b, _, _):
      guard var p = presses[b] else { return nil }
      p.bar = nil
      p.progress = 100
      presses[b] = p
      return Update(slot: b, notification: Self.step(p))
    case .doublePressed(let b, let kind, _, _):
      var p = presses[b] ?? Press(summary: b, body: "", hints: [])
      p.summary = displayName(kind) ?? kind ?? b
      p.body = p.hints.first { $0.gesture == .doublePress }?.hint ?? "Pressed twice"
      p.icon = FreedesktopIcon.name(forSymbol: kind.flatMap { controls[$0]?.symbol })
      p.bar = nil
      p.progress = nil
      presses[b] = p
      return Update(slot: b, notification: Self.step(p))
    case .released(let b, let kind, let hint, let hints, _, _):
      // A short press: its hint is the announcement, shown like a result.
      let p = presses.removeValue(forKey: b)
      let control = holdControls[b]
      return Update(
        slot: b,
        notification: DesktopNotification(
          summary: p?.summary ?? control?.displayName ?? displayName(kind) ?? b,
          body: hints.isEmpty ? (hint ?? "No control assigned") : hints.map(\.hint).joined(separator: "\n"),
          icon: p?.icon ?? FreedesktopIcon.name(forSymbol: control?.symbol), expireMilliseconds: Self.resultExpiry,
          transient: true))
    case .cancelled(let b, let kind, let reason):
      let p = presses.removeValue(forKey: b)
      return Update(
        slot: b,
        notification: DesktopNotification(
          summary: p?.summary ?? displayName(kind) ?? b, body: "Cancelled (\(reason))", icon: p?.icon, urgency: .low,
          expireMilliseconds: Self.resultExpiry, transient: true))
    case .performing(let kind, let b, _, _, _):
      let slot = b ?? "kind:\(kind)"
      if let b { presses[b]?.bar = nil }
      let c = controls[kind]
      return Update(
        slot: slot,
        notification: DesktopNotification(
          summary: c?.displayName ?? kind, body: "Performing…", icon: FreedesktopIcon.name(forSymbol: c?.symbol),
          expireMilliseconds: Self.pressExpiry, transient: true))
    case .performed(let b, _, _, let c):
      remember(c)
      if let b { presses[b] = nil }
      let state = c.type == .button && c.valueText == nil && c.configured && c.available ? "Done" : Render.state(c)
      return Update(
        slot: b ?? "kind:\(c.kind)",
        notification: DesktopNotification(
          summary: c.displayName, body: state, icon: FreedesktopIcon.name(forSymbol: c.symbol),
          expireMilliseconds: Self.resultExpiry, transient: false))
    case .failed(let kind, let b, _, _, let error):
      if let b { presses[b] = nil }
      return Update(
        slot: b ?? "kind:\(kind)",
        notification: DesktopNotification(
          summary: displayName(kind) ?? kind, body: "Failed: \(error.message)", icon: "dialog-error",
          urgency: .critical, expireMilliseconds: Self.failureExpiry, transient: false))
    case .busy(let kind, let b, _, _):
      if let b { presses[b] = nil }
      return Update(
        slot: b ?? "kind:\(kind)",
        notification: DesktopNotification(
          summary: displayName(kind) ?? kind, body: "Still performing: not started again",
          icon: FreedesktopIcon.name(forSymbol: controls[kind]?.symbol), expireMilliseconds: Self.resultExpiry,
          transient: true))
    case .state(let c, _):
      remember(c)
      return nil
    case .assigned(let b, let gesture, _, let c):
      if gesture == .hold { holdControls[b] = c }
      if let c { controls[c.kind] = c }
      return nil
    case .releasedAfterHold, .releasedAfterDoublePress, .deviceAdded, .deviceRemoved, .configReloaded:
      // The end of a hold tells nothing new (its result is shown); devices and reloads
      // are not presses (`actionctl watch` in a terminal shows them).
      return nil
    }
  }

  private mutating func remember(_ c: ControlSnapshot) {
    controls[c.kind] = c
    for (b, held) in holdControls where held.kind == c.kind && held.configuration == c.configuration {
      holdControls[b] = c
    }
  }
}

/// Shows ``NotificationPlanner`` updates through `notify-send`, on the watch's loop and
/// never blocking it: each `notify-send` is a child of ``ProcessRunner`` (its exit comes
/// through a pidfd, its printed id through a pipe), so events go on being read while it
/// talks to the notification server.
///
/// Per slot one `notify-send` runs at a time: the next step must replace the notification
/// the previous one created, so it waits for that id. Steps arriving meanwhile are not
/// queued: only the newest is shown next (each replaces the whole notification).
final class DesktopNotifier {
  /// What `actionctl watch --notify` needs, for the message when it is missing.
  static let program = "notify-send"
  static let package = "libnotify-bin"
  /// A notification server that does not answer must not hold a slot forever.
  static let timeout = TimeSpan.seconds(5)

  private struct Slot {
    var id: UInt32?
    var running = false
    var pending: DesktopNotification?
  }

  private let runner: ProcessRunner
  private let path: String
  private let environment: [String: String]
  private let report: (String) -> Void
  private var slots: [String: Slot] = [:]
  /// The last failure reported, so that a server that is away is said once, not per press.
  private var lastFailure: String?
  /// Called once no `notify-send` runs and none waits (set by a watch that is ending).
  var onIdle: (() -> Void)?

  /// `path`: the `notify-send` to run (``locate(path:)``); `environment`: actionctl's own,
  /// which names the session bus (`DBUS_SESSION_BUS_ADDRESS`) and display.
  init(loop: EventLoop, path: String, environment: [String: String], report: @escaping (String) -> Void) {
    runner = ProcessRunner(loop: loop, setpriv: nil)
    self.path = path
    self.environment = environment
    self.report = report
  }

  /// Where `notify-send` is in `path` (a PATH value), or the one-line reason it cannot run.
  static func locate(path: String?) -> Result<String, NotifierUnavailable> {
    switch ProcessRunner.lookUp(program, path: path) {
    case .success(let found): return .success(found)
    case .failure(let failure):
      let why = failure.errnoName == "EACCES" ? "is not executable" : "is not installed (not found in PATH)"
      return .failure(
        NotifierUnavailable(message: "--notify needs \(program), which \(why): install the Debian package \(package)"))
    }
  }

  var idle: Bool { slots.values.allSatisfy { !$0.running && $0.pending == nil } }

  func show(_ update: NotificationPlanner.Update) {
    var slot = slots[update.slot] ?? Slot()
    slot.pending = update.notification
    slots[update.slot] = slot
    if !slot.running { sendPending(update.slot) }
  }

  private func sendPending(_ name: String) {
    guard var slot = slots[name], let notification = slot.pending else {
      if idle, let onIdle { onIdle() }
      return
    }
    slot.pending = nil
    slot.running = true
    slots[name] = slot
    var printed: UInt32?
    var errors: [String] = []
    runner.run(
      ProcessRequest(
        argv: [path] + notification.arguments(replacing: slot.id), environment: environment, timeout: Self.timeout,
        killGracePeriod: .seconds(1), outputLimits: ProcessOutputLimits(maxLineBytes: 512, maxLines: 20)),
      output: { line in
        if line.stream == .stdout, let id = UInt32(line.text.filter { !$0.isWhitespace }) {
          printed = id
        } else if line.stream == .stderr {
          errors.append(line.text)
        }
      },
      completion: { [weak self] result in
        guard let self else { return }
        var slot = self.slots[name] ?? Slot()
        slot.running = false
        if result.outcome.succeeded, let printed {
          slot.id = printed
          self.lastFailure = nil
        } else {
          let detail = errors.isEmpty ? "" : ": " + errors.joined(separator: " ")
          let message = "actionctl: \(Self.program) failed (\(result.outcome))\(detail)"
          if message != self.lastFailure { self.report(message) }
          self.lastFailure = message
        }
        self.slots[name] = slot
        self.sendPending(name)
      })
  }
}

/// `notify-send` cannot be run: the message names the package that has it.
struct NotifierUnavailable: Error, CustomStringConvertible {
  var message: String
  var description: String { message }
}
