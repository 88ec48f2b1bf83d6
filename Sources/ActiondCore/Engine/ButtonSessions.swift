// SPDX-License-Identifier: Apache-2.0
/// The buttons' sessions: for every configured button, its press recognizer and the
/// virtual press (`press` request) in progress on it. Key events, the deadline and device
/// changes go in; the recognizers' outputs (``PressRecognizer/Output``: the moments of a
/// press) come out, per button, in the order they happened. What a moment does (hints,
/// performs, announcements) is the engine's (``ControlEngine``); which gestures a button
/// listens for is set here from the assignment table (``setGestures(button:_:)``).
///
/// Buttons come in by name (their one identity); the position in the configuration's
/// `buttons` list indexes the recognizers and, for the engine, `configuration.buttons`
/// (``Event/output(button:_:)``): it never leaves the engine.
struct ButtonSessions {
  /// What a session reports: a moment of a button's press, or a note for the log.
  enum Event {
    case output(button: Int, PressRecognizer.Output)
    case log(LogLevel, String)
  }

  /// The key edges a `press` request still has to deliver to a button's recognizer, in
  /// time order (the first one may be due now). `isDown`: the virtual key is down.
  struct VirtualKey {
    var edges: [(down: Bool, at: MonotonicInstant)]
    var isDown = false
  }

  private(set) var recognizers: ButtonRecognizers
  /// The buttons' names, by index (the configuration's order).
  private var names: [String]
  /// Button name → its virtual press in progress (at most one per button).
  private var virtualPresses: [String: VirtualKey] = [:]

  /// Fresh sessions for `configuration`'s buttons: every key up.
  init(_ configuration: Configuration) {
    recognizers = ButtonSessions.makeRecognizers(configuration)
    names = configuration.buttons.map(\.name)
  }

  var count: Int { recognizers.count }

  /// The recognizer settings of button `index` (thresholds, windows, debounce).
  func settings(of index: Int) -> RecognizerSettings { recognizers[index].recognizer.settings }

  /// The gestures beyond the hold button `index` listens for.
  func gestures(of index: Int) -> GestureSet { recognizers[index].recognizer.gestures }

  /// The earliest deadline of a recognizer or a virtual key edge (what the timer is armed for).
  var nextDeadline: MonotonicInstant? {
    let virtual = virtualPresses.values.compactMap { $0.edges.first?.at }.min()
    guard let recognizer = recognizers.nextDeadline?.at else { return virtual }
    return virtual.map { min($0, recognizer) } ?? recognizer
  }

  /// The recognizer index of the button named `name`.
  func index(of name: String) -> Int? {
    guard let index = names.firstIndex(of: name), index < recognizers.count else { return nil }
    return index
  }

  /// A key event from a device serving the button named `name`; what it caused is
  /// appended to `events` (a buffer the engine reuses: the key path allocates nothing).
  mutating func keyEvent(
    button name: String, code: UInt16, value: Int32, at time: MonotonicInstant, into events: inout [Event]
  ) {
    guard let button = index(of: name) else { return }
    if !virtualPresses.isEmpty, code == recognizers[button].keyCode,
      realKeyTakesOver(button: button, value: value, at: time, &events)
    {
      return
    }
    if let out = recognizers.keyEvent(button: button, code: code, value: value, at: time) {
      events.append(.output(button: button, out))
    }
  }

  /// The timer fired at `now`: virtual key edges due are delivered, then every recognizer
  /// due settles; appended to `events`.
  mutating func deadlineReached(at now: MonotonicInstant, into events: inout [Event]) {
    runVirtualPresses(upTo: now, &events)
    recognizers.deadlineReached(at: now) { events.append(.output(button: $0, $1)) }
  }

  /// A device serving `button` was opened with its key `keyDown`.
  mutating func deviceAppeared(button name: String, keyDown: Bool, at time: MonotonicInstant) -> [Event] {
    guard let button = index(of: name) else { return [] }
    var events = endVirtualPress(button: button, at: time)
    events.append(.output(button: button, recognizers.deviceAppeared(button: button, keyDown: keyDown, at: time)))
    return events
  }

  /// The device serving `button` vanished, or the kernel released its keys.
  mutating func deviceLost(button name: String, at time: MonotonicInstant) -> [Event] {
    guard let button = index(of: name) else { return [] }
    var events = endVirtualPress(button: button, at: time)
    events.append(.output(button: button, recognizers.deviceLost(button: button, at: time)))
    return events
  }

  /// Events of the device serving `button` were dropped; its key is now `keyDown`.
  mutating func resynchronized(button name: String, keyDown: Bool, at time: MonotonicInstant) -> [Event] {
    guard let button = index(of: name) else { return [] }
    var events = endVirtualPress(button: button, at: time)
    events.append(.output(button: button, recognizers.resynchronized(button: button, keyDown: keyDown, at: time)))
    return events
  }

  /// Button `index` now listens for `gestures`; a double-press window in progress on a
  /// button that lost the gesture ends as the short press it was. nil when nothing changed.
  mutating func setGestures(button index: Int, _ gestures: GestureSet) -> PressRecognizer.Output? {
    guard index < recognizers.count, recognizers[index].recognizer.gestures != gestures else { return nil }
    return recognizers.setGestures(button: index, gestures)
  }

  // MARK: - A new configuration

  /// The first half of a reload: the sessions of buttons that change or go away end
  /// (their outputs: a press announced and not yet decided is `cancelled`, reason
  /// `reload`), while the names are still the old configuration's. `unchanged` names the
  /// buttons that carry over (``ConfigurationGeneration/unchangedButtons``).
  mutating func endChanged(keeping unchanged: Set<String>, at time: MonotonicInstant) -> [Event] {
    // A virtual press on a button that changes ends like a real one: the abandon below
    // cancels it; its key-up is never delivered.
    virtualPresses = virtualPresses.filter { unchanged.contains($0.key) }
    var events: [Event] = []
    for index in 0..<recognizers.count where !unchanged.contains(names[index]) {
      events.append(.output(button: index, recognizers.abandon(button: index, at: time)))
    }
    return events
  }

  /// The second half: sessions for `configuration`'s buttons, those in `unchanged`
  /// carried over (from wherever they were in the list) with whatever press they are in.
  mutating func adopt(_ configuration: Configuration, keeping unchanged: Set<String>) {
    recognizers = ButtonSessions.makeRecognizers(configuration, keeping: unchanged, from: (recognizers, names))
    names = configuration.buttons.map(\.name)
  }

  /// Fresh recognizers for `configuration`'s buttons, except those named in `unchanged`,
  /// which carry over from `old` (its recognizers and their buttons' names) with whatever
  /// press they are in.
  private static func makeRecognizers(
    _ configuration: Configuration, keeping unchanged: Set<String> = [],
    from old: (recognizers: ButtonRecognizers, names: [String])? = nil
  ) -> ButtonRecognizers {
    ButtonRecognizers(
      configuration.buttons.map { b in
        if let old, unchanged.contains(b.name), let from = old.names.firstIndex(of: b.name),
          from < old.recognizers.count
        {
          return old.recognizers[from]
        }
        return ButtonRecognizers.Button(
          keyCode: b.keyCode,
          // A loaded configuration's buttons always have valid settings (the loader checked them).
          settings: (try? b.recognizerSettings()) ?? .default)
      })
  }

  // MARK: - Virtual presses

  /// `press`: a virtual press of `button`'s key, starting at `time`. Its key-down and
  /// key-up go through the button's recognizer exactly as the kernel's would, so a short
  /// press announces the hints, a hold performs at the threshold, a double press and a
  /// long hold act, a momentary toggle is on while the virtual key is down. The key-up of
  /// a hold is delivered at its absolute time by the engine's own timer, so nobody has to
  /// wait for it. The events are those of the edges due at `time`.
  mutating func simulatePress(
    button: String, _ press: VirtualPress, at time: MonotonicInstant
  ) -> Result<[Event], ControlEngine.VirtualPressRefusal> {
    guard let index = index(of: button) else { return .failure(.unknownButton) }
    guard virtualPresses[button] == nil, !recognizers[index].recognizer.isDown else { return .failure(.keyDown) }
    let edges: [(down: Bool, at: MonotonicInstant)]
    switch press {
    case .short: edges = [(true, time), (false, time)]
    case .hold(let span): edges = [(true, time), (false, time + span)]
    case .double:
      // The second key-down as soon as the first release is no longer chatter: inside
      // every valid window (the window is longer than the debounce).
      let second = time + recognizers[index].recognizer.settings.debounce
      edges = [(true, time), (false, time), (true, second), (false, second)]
    }
    virtualPresses[button] = VirtualKey(edges: edges)
    var events: [Event] = []
    runVirtualPresses(upTo: time, &events)
    return .success(events)
  }

  /// Delivers every virtual key edge due at or before `t`, each stamped with its own time.
  private mutating func runVirtualPresses(upTo t: MonotonicInstant, _ events: inout [Event]) {
    guard !virtualPresses.isEmpty else { return }
    for name in virtualPresses.keys.sorted() {
      guard let index = names.firstIndex(of: name), index < recognizers.count else {
        virtualPresses[name] = nil
        continue
      }
      while let key = virtualPresses[name], let edge = key.edges.first, edge.at <= t {
        var rest = key
        rest.edges.removeFirst()
        rest.isDown = edge.down
        virtualPresses[name] = rest.edges.isEmpty ? nil : rest
        let code = recognizers[index].keyCode
        if let out = recognizers.keyEvent(button: index, code: code, value: edge.down ? 1 : 0, at: edge.at) {
          events.append(.output(button: index, out))
        }
      }
    }
  }

  /// A real key event of `button`'s key arrived during a virtual press. The hardware
  /// wins: the virtual edges not yet due are dropped. A real key-down while the virtual
  /// key is down takes the press over (it is not a new press: the real release ends it,
  /// so holding the real key on keeps a hold going); otherwise the real event is read as
  /// usual. True when the event was consumed.
  private mutating func realKeyTakesOver(
    button index: Int, value: Int32, at time: MonotonicInstant, _ events: inout [Event]
  ) -> Bool {
    let name = names[index]
    guard virtualPresses[name] != nil else { return false }
    runVirtualPresses(upTo: time, &events)
    guard let key = virtualPresses.removeValue(forKey: name) else { return false }
    events.append(.log(.info, "button \(name): the key was pressed during a virtual press, which it ends"))
    return key.isDown && value == 1
  }

  /// A device change on `button` (bound, lost, resynchronised) ends a virtual press on it:
  /// its key goes up at `time` (what was due before is delivered first), so the device's
  /// own state is then read against a key that is up, as the kernel reports it.
  private mutating func endVirtualPress(button index: Int, at time: MonotonicInstant) -> [Event] {
    guard !virtualPresses.isEmpty else { return [] }
    var events: [Event] = []
    runVirtualPresses(upTo: time, &events)
    guard let key = virtualPresses.removeValue(forKey: names[index]), key.isDown else { return events }
    if let out = recognizers.keyEvent(button: index, code: recognizers[index].keyCode, value: 0, at: time) {
      events.append(.output(button: index, out))
    }
    return events
  }
}
