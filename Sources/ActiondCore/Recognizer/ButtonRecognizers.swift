// SPDX-License-Identifier: Apache-2.0
/// The press recognizers of every configured button, addressed by button index (the
/// position in the configuration's `buttons` list). Each button is fully independent:
/// its own key code, settings, state and deadline.
///
/// The engine owns one timer for all of them: arm it for ``nextDeadline`` after every
/// input; when it fires, drain the devices, then call ``deadlineReached(at:_:)``, which
/// settles every button that is due. Nothing here allocates per event.
public struct ButtonRecognizers: Hashable, Sendable {
  /// One button: the key code it listens to and its recognizer.
  public struct Button: Hashable, Sendable {
    /// The evdev key code (`KEY_PROG1` = 148, `BTN_0` = 256, ...).
    public let keyCode: UInt16
    /// The button's recognizer (read-only from outside; inputs go through the wrapper).
    public fileprivate(set) var recognizer: PressRecognizer

    public init(keyCode: UInt16, settings: RecognizerSettings = .default, gestures: GestureSet = []) {
      self.keyCode = keyCode
      self.recognizer = PressRecognizer(settings: settings, gestures: gestures)
    }
  }

  /// The earliest pending deadline and the button it belongs to.
  public struct Deadline: Hashable, Sendable {
    public let at: MonotonicInstant
    /// The lowest button index with this deadline; others may share the same instant
    /// (``ButtonRecognizers/deadlineReached(at:_:)`` settles all of them).
    public let button: Int
  }

  private var buttons: [Button]

  /// Recognizers for `buttons`, in configuration order; all keys up.
  public init(_ buttons: [Button]) {
    self.buttons = buttons
  }

  /// The number of buttons.
  public var count: Int { buttons.count }

  /// Button `index` (traps when out of range: indices come from the configuration).
  public subscript(index: Int) -> Button { buttons[index] }

  /// The earliest deadline across all buttons, or nil when no button needs a timer.
  public var nextDeadline: Deadline? {
    var best: Deadline?
    for index in buttons.indices {
      if let at = buttons[index].recognizer.nextDeadline, best.map({ at < $0.at }) ?? true {
        best = Deadline(at: at, button: index)
      }
    }
    return best
  }

  /// A key event from a device serving button `button`. Returns nil (and changes
  /// nothing) when `code` is not that button's key: devices report many keys.
  public mutating func keyEvent(
    button: Int, code: UInt16, value: Int32, at timestamp: MonotonicInstant
  )
    -> PressRecognizer.Output?
  {
    guard buttons[button].keyCode == code else { return nil }
    return buttons[button].recognizer.keyEvent(value: value, at: timestamp)
  }

  /// The shared timer fired at `now`: settles every button whose deadline is at or
  /// before `now` and passes each one's output to `body` (button index, output), in
  /// button order. Buttons not yet due are left alone.
  public mutating func deadlineReached(
    at now: MonotonicInstant, _ body: (_ button: Int, _ output: PressRecognizer.Output) -> Void
  ) {
    for index in buttons.indices {
      guard let deadline = buttons[index].recognizer.nextDeadline, deadline <= now else { continue }
      body(index, buttons[index].recognizer.deadlineReached(at: now))
    }
  }

  /// `button` is being replaced (its configuration changed on a reload): a press in
  /// progress ends (see ``PressRecognizer/abandon(at:)``).
  public mutating func abandon(button: Int, at now: MonotonicInstant) -> PressRecognizer.Output {
    buttons[button].recognizer.abandon(at: now)
  }

  /// `button`'s gestures changed (see ``PressRecognizer/setGestures(_:)``).
  public mutating func setGestures(button: Int, _ gestures: GestureSet) -> PressRecognizer.Output {
    buttons[button].recognizer.setGestures(gestures)
  }

  /// The device serving `button` disappeared.
  public mutating func deviceLost(button: Int, at now: MonotonicInstant) -> PressRecognizer.Output {
    buttons[button].recognizer.deviceLost(at: now)
  }

  /// Events of the device serving `button` were dropped; its key is now down or up.
  public mutating func resynchronized(
    button: Int, keyDown: Bool, at now: MonotonicInstant
  )
    -> PressRecognizer.Output
  {
    buttons[button].recognizer.resynchronized(keyDown: keyDown, at: now)
  }

  /// A device serving `button` appeared with the key down or up.
  public mutating func deviceAppeared(
    button: Int, keyDown: Bool, at now: MonotonicInstant
  )
    -> PressRecognizer.Output
  {
    buttons[button].recognizer.deviceAppeared(keyDown: keyDown, at: now)
  }
}
