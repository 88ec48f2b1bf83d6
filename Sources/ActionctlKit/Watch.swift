// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux
import Glibc

/// `actionctl watch`: follows announcements. On a terminal a held button shows its hint
/// with a bar filling toward the hold threshold (redrawn by timer from the `pressed`
/// event's deadline, not by polling), then the result: the Dynamic Island analogue.
/// `--notify` shows the same as desktop notifications instead (``NotificationPlanner``).
final class Watch {
  let options: Actionctl.Options
  let out: Terminal
  let err: Terminal
  private var loop: EventLoop!
  private var client: ControlClient!
  private var status: Actionctl.ExitStatus = .ok
  /// The hold in progress, drawn as a bar: button, hint, start and deadline (µs, monotonic).
  private var hold: (button: String, hint: String, start: Int64, deadline: Int64)?
  private var redraw: TimerID?
  private var readWatch: WatchID?
  /// The watch ended (``finish(_:_:)``); what is still read is not reported.
  private var finished = false
  /// The status line is on screen and must be cleared before other output.
  private var lineOpen = false
  static let frame = TimeSpan.milliseconds(33)
  static let barWidth = 24
  /// `--notify`: the planner and the notifier; nil without it.
  private var planner: NotificationPlanner?
  private var notifier: DesktopNotifier?
  private var step: TimerID?
  /// How long a watch that ends waits for its last notifications to be sent.
  static let notifyDrain = TimeSpan.seconds(2)

  init(options: Actionctl.Options, out: Terminal, err: Terminal) {
    self.options = options
    self.out = out
    self.err = err
  }

  /// `watch`'s arguments: the subscription filter, and whether to notify.
  struct Arguments {
    var filter = SubscriptionFilter()
    var notify = false
  }

  static func parse(_ arguments: [String]) throws(Actionctl.UsageError) -> Arguments {
    var filter = SubscriptionFilter()
    var notify = false
    var a = arguments[...]
    while let flag = a.popFirst() {
      if flag == "--notify" {
        notify = true
        continue
      }
      guard ["--button", "--kind", "--events"].contains(flag) else {
        throw Actionctl.UsageError("watch takes --button, --kind, --events and --notify, got \"\(flag)\"")
      }
      guard let value = a.popFirst() else { throw Actionctl.UsageError("\(flag) needs a value") }
      switch flag {
      case "--button": filter.buttons = (filter.buttons ?? []).union([value])
      case "--kind": filter.kinds = (filter.kinds ?? []).union([value])
      default:
        var names = filter.events ?? []
        for n in value.split(separator: ",") {
          guard let e = EventName(rawValue: String(n)) else {
            let known = EventName.allCases.map(\.rawValue).joined(separator: ", ")
            throw Actionctl.UsageError("unknown event \"\(n)\" (known: \(known))")
          }
          names.insert(e)
        }
        filter.events = names
      }
    }
    return Arguments(filter: filter, notify: notify)
  }

  func run() throws -> Actionctl.ExitStatus {
    let arguments = try Self.parse(options.arguments)
    var notifySend: String?
    if arguments.notify {
      // Before connecting: a desktop without libnotify-bin is told so at once.
      switch DesktopNotifier.locate(path: options.environment["PATH"]) {
      case .success(let path): notifySend = path
      case .failure(let unavailable):
        err.line("actionctl: \(unavailable.message)")
        return .failed
      }
    }
    client = try ControlClient(path: options.socket, timeout: options.timeout)
    let (message, line) = try client.request(.subscribe(arguments.filter), timeout: options.timeout)
    if case .error(_, let e) = message {
      if options.json { out.line(line) } else { err.line("actionctl: \(e.message) (\(e.code))") }
      return .failed
    }
    // With --json the subscribe reply is the first line: a script reading the stream
    // knows the subscription is in place before it triggers anything.
    if options.json { out.line(line) }
    loop = try EventLoop()
    if let notifySend {
      planner = NotificationPlanner(buttons: client.hello.buttons)
      notifier = DesktopNotifier(loop: loop, path: notifySend, environment: options.environment) { [err] in
        err.line($0)
      }
    }
    for signo in [SIGINT, SIGTERM, SIGHUP] {
      try loop.onSignal(signo) { [unowned self] _ in
        self.closeLine()
        self.loop.stop()
      }
    }
    readWatch = try loop.register(fd: client.fd, interest: .readable) { [unowned self] _ in self.readable() }
    // Events that arrived together with the subscribe reply are already buffered.
    drainBuffered()
    // A daemon that sent the rest of the stream at once, its closing error too, was read
    // to the end just now; unless notifications are still being sent, nothing is left.
    if finished && notifier?.idle ?? true { return status }
    try loop.run()
    return status
  }

  private func readable() {
    var buffer = [UInt8](repeating: 0, count: 65536)
    let result = buffer.withUnsafeMutableBytes { b in
      Result { () throws(Errno) in try Syscall.read(client.fd, into: b) }
    }
    switch result {
    case .success(.wouldBlock): return
    case .success(.done(0)), .failure:
      finish(.protocolError, "actionctl: the daemon closed the connection")
    case .success(.done(let n)):
      buffer.withUnsafeBytes { client.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
      drainBuffered()
    }
  }

  private func drainBuffered() {
    do {
      while let (message, line) = try client.nextBuffered() {
        guard !finished else { return }
        switch message {
        case .event(let e): show(e, line: line)
        case .unknownEvent:
          // A newer daemon's event: text and notifications ignore it (protocol.md,
          // Versioning); --json passes every event line on as it came, this one too.
          if options.json { out.line(line) }
        case .error(nil, let e): finish(.protocolError, "actionctl: \(e.message) (\(e.code))")
        default: continue
        }
      }
    } catch {
      finish(.protocolError, "actionctl: \(error)")
    }
  }

  private func finish(_ status: Actionctl.ExitStatus, _ message: String) {
    // Once: a daemon that says why it stops (`shutting-down`) and closes at once has
    // both read in one turn, and the close is no second story.
    guard !finished else { return }
    finished = true
    closeLine()
    err.line(message)
    self.status = status
    if let step { loop.cancel(step) }
    step = nil
    planner = nil
    guard let notifier, !notifier.idle else {
      loop.stop()
      return
    }
    // The last result (`performed` just before the daemon stopped) is still shown, within
    // a bound: the socket is no longer read, only the children are waited for.
    if let id = readWatch { loop.unregister(id) }
    readWatch = nil
    notifier.onIdle = { [unowned self] in self.loop.stop() }
    loop.schedule(at: loop.now() + Self.notifyDrain) { [unowned self] _ in self.loop.stop() }
  }

  /// `--notify`: the event's notification, and the next bar step's timer (none when no
  /// bar fills: no wakeups between presses).
  private func notify(_ e: Event) {
    guard var planner, let notifier else { return }
    let update = planner.handle(e, now: loop.now())
    self.planner = planner
    if let update { notifier.show(update) }
    scheduleStep()
  }

  private func scheduleStep() {
    if let step { loop.cancel(step) }
    step = nil
    guard let next = planner?.nextStep else { return }
    step = loop.schedule(at: next) { [unowned self] now in
      self.step = nil
      guard var planner = self.planner, let notifier = self.notifier else { return }
      for update in planner.step(now: now) { notifier.show(update) }
      self.planner = planner
      self.scheduleStep()
    }
  }

  private func show(_ e: Event, line: String) {
    if notifier != nil {
      notify(e)
      // The notifications replace the text; --json still prints the raw lines.
      if options.json { out.line(line) }
      return
    }
    if options.json {
      out.line(line)
      return
    }
    guard out.isTTY else {
      out.line(Render.event(e))
      return
    }
    switch e {
    case .pressed(let button, _, let hint, _, let time, let threshold):
      hold = (button, hint ?? "No control assigned", time.microseconds, (time + threshold).microseconds)
      drawBar()
    case .held(let button, _, let time, let longHold?) where hold?.button == button:
      // The bar starts over toward the long hold, with what holding on will do.
      hold = (button, longHold.hint, time.microseconds, longHold.deadline.microseconds)
      drawBar()
    case .held(let button, _, _, _) where hold?.button == button:
      if let h = hold { hold = (h.button, h.hint, h.start, h.start) }  // full bar
      drawBar()
    case .longHeld(let button, _, _) where hold?.button == button:
      if let h = hold { hold = (h.button, h.hint, h.start, h.start) }
      drawBar()
    case .released(let button, _, let hint, _, _, _):
      if hold?.button == button { stopBar() }
      printLine("\(button): \(hint ?? "No control assigned")")
    case .performing(let kind, let button, _, _, _):
      if let button, hold?.button == button {
        stopBar()
        status(line: "\(button): performing \(kind) …")
      } else {
        printLine(Render.event(e))
      }
    case .performed(let button, _, _, let c):
      if hold?.button == button { stopBar() }
      printLine("\(button.map { "\($0): " } ?? "")\(c.displayName) \(Render.state(c))")
    case .failed(let kind, let button, _, _, let error):
      if hold?.button == button { stopBar() }
      printLine("\(button.map { "\($0): " } ?? "")\(kind) failed: \(error.message)")
    case .cancelled(let button, _, _):
      if hold?.button == button { stopBar() }
      printLine(Render.event(e))
    case .releasedAfterHold, .releasedAfterDoublePress:
      // The hold was already shown (held, performed); its end tells a person nothing
      // new. `--json` passes it on for clients that act while a button is held.
      break
    default:
      printLine(Render.event(e))
    }
  }

  /// The status line of a hold: hint and a bar filled by the elapsed fraction of the
  /// threshold (times in µs on CLOCK_MONOTONIC, as in the `pressed` event).
  static func holdLine(button: String, hint: String, start: Int64, deadline: Int64, now: Int64) -> (String, Double) {
    let fraction = deadline <= start ? 1.0 : min(max(Double(now - start) / Double(deadline - start), 0), 1)
    let filled = Int((fraction * Double(barWidth)).rounded(.down))
    let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: barWidth - filled)
    return ("\(button): \(hint)  \(bar)", fraction)
  }

  private func drawBar() {
    guard let h = hold else { return }
    let (line, fraction) = Self.holdLine(
      button: h.button, hint: h.hint, start: h.start, deadline: h.deadline, now: SystemClock().now().microseconds)
    status(line: line)
    if let redraw { loop.cancel(redraw) }
    redraw = nil
    if fraction < 1 {
      let next = MonotonicInstant(
        nanoseconds: min(SystemClock().now().nanoseconds + Self.frame.nanoseconds, h.deadline * 1_000))
      redraw = loop.schedule(at: next) { [unowned self] _ in
        self.redraw = nil
        self.drawBar()
      }
    }
  }

  private func stopBar() {
    hold = nil
    if let redraw { loop.cancel(redraw) }
    redraw = nil
  }

  /// Replaces the status line (no newline: it is redrawn in place).
  private func status(line: String) {
    out.write("\r\u{1B}[2K" + line)
    lineOpen = true
  }

  /// Prints a finished line, replacing the status line.
  private func printLine(_ text: String) {
    out.write((lineOpen ? "\r\u{1B}[2K" : "") + text + "\n")
    lineOpen = false
    if hold != nil { drawBar() }
  }

  private func closeLine() {
    if lineOpen { out.write("\n") }
    lineOpen = false
  }
}
