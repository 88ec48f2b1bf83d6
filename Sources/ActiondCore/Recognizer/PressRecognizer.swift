// SPDX-License-Identifier: Apache-2.0
// The press/hold/gesture recognizer of one button: kernel-stamped key events, timer
// expirations and device-state changes in; announcements-to-be and the next
// deadline out. Pure value type, no clock of its own: every decision is made from
// the timestamps it is given, so it behaves the same live, in tests and in replay.
//
// Legend:   P press (value 1)   R release (value 0)   r autorepeat (value 2)
//           T hold threshold    D debounce            | hold deadline = P + T
//           ===== key down      ----- key up          * announcement (stamp)
//
//  1. Short press: released before the threshold. The deadline is simply dropped.
//
//       P==========R--------|
//       *pressed(P)
//                  *released(R, heldFor: R-P)
//
//  2. Hold: still down at the threshold. `held` fires once, stamped at the deadline
//     (not at the moment the timer input is processed), then the release follows.
//
//       P===================|==========R
//       *pressed(P)         *held(P+T)  *releasedAfterHold(R, heldFor: R-P)
//
//     Exactly at the threshold counts as a hold: hold iff R - P >= T.
//
//  3. Late read. The kernel timestamp decides, never the order of processing.
//     a) R stamped before the deadline, read only after the timer fired: the loop
//        drains the device before it delivers the deadline, so R arrives first and
//        the deadline input (at t >= P+T) finds nothing to do.
//
//       P==============R----|.....t (deadline input)
//       *pressed       *released           (no held)
//
//     b) R stamped at/after the deadline, read before the deadline input: the
//        recognizer catches up first: held (stamped P+T), then releasedAfterHold.
//
//       P===================|===R.....t (deadline input: nothing left to do)
//                           *held(P+T) and *releasedAfterHold(R) from the one input
//
//  4. Autorepeat never counts: it neither presses, releases nor restarts the timer.
//
//       P==r==r==r==r==r====|==r==r==R
//       *pressed            *held    *releasedAfterHold
//
//  5. Chatter. With D = 0 every edge counts (a bouncing contact is several presses):
//
//       P=R-P=R-P=====R
//       * * * * *     *       pressed, released, pressed, released, ...
//
//     With D > 0 (the rule, modelled on libinput's "bounce" debouncing): a press
//     takes effect at once; a release takes effect only once the key has stayed
//     up for D. A re-press less than D after a release is chatter: that release
//     and the re-press are dropped and the original press goes on. A confirmed
//     release is stamped at its own kernel timestamp. The release after the last
//     bounce is the one that counts; bounces after it (again < D apart) collapse
//     into it the same way.
//
//       P=R-P=R-P===========|=========R-P=R------(R+D)
//       *pressed(P)         *held     (R and P < D apart: dropped)
//                                         the last R confirmed at R+D:
//                                         *releasedAfterHold(R, heldFor: R-P)
//
//     If the deadline passes while a release waits for confirmation, the decision
//     waits too: a re-press within D means the key never really went up, so
//     `held` is announced (stamped P+T) at the re-press; a confirmation means a
//     short press. The cost is at most D of extra latency on that rare path.
//
//  6. Key already down when the device appears (or when a resync finds it down
//     while idle): its press time is unknown, so it is not a press. Wait for its
//     release; the next press counts normally.
//
//       (appear: down)=====R-------P=====R
//        nothing           nothing *pressed *released
//
//  7. Device lost mid-press: the pending hold is cancelled, even if its deadline
//     has passed but not yet been delivered (events not yet read are gone with the
//     device, and a release may have been among them). After a hold, the press in
//     progress ends with a cancellation too. A release waiting for debounce is
//     confirmed: it was read, and no re-press can come any more.
//
//       P===========X               P===========|=====X
//       *pressed    *cancelled      *pressed    *held *cancelled(afterHold)
//
//  8. Resync after SYN_DROPPED (events were lost, the key's state was re-read):
//
//       P======[lost]..S(up)            *cancelled(resyncUp)
//       P======[lost]..S(down)====R     *cancelled(resyncDown); then like case 6
//       -------[lost]..S(down)====R     nothing: a press of unknown time is no press
//       P===|==[lost]..S(down)====R     held already announced: releasedAfterHold(R)
//       P===|==[lost]..S(up)            *cancelled(resyncUp, afterHold)
//       P====R-[lost]..S(up|down)       a release waiting for debounce is confirmed
//                                       (released at R); if down, then like case 6
//
//     A pending press is cancelled even when the key is still down: the lost
//     events may hide a release and a new press, and guessing could perform an
//     action the user never held for.
//
// Gestures beyond the hold, each only on a button that has it (`GestureSet`); a
// button without them behaves exactly as above, with no waiting anywhere.
//
//  9. Double press (W = double-press window). A press released before the threshold
//     is a first press; a key-down within W of its release (release -> second
//     key-down, kernel stamps) is a double press, announced at that key-down. The
//     second press is consumed: holding it performs no hold; its release ends it.
//
//       P=====R---P2=========R2
//       *pressed  *doublePressed(P2, gap: P2-R)
//                            *releasedAfterDoublePress(R2, heldFor: R2-P2)
//
//     No second press within W: the first press was a short press, announced when
//     the window ends (stamped at its release). So a double press is never also a
//     short press, and only double-press buttons wait.
//
//       P=====R--------(R+W)        P=====R----(R+W)-P'====R'
//       *pressed       *released(R)           *pressed (a new first press)
//
//     With debounce D a re-press less than D after the release is chatter (case 5);
//     the window is counted from the release, W > D. A third press after a double
//     press is a new first press. A device lost, a resync or a reload while the
//     window runs confirms the short press (the release was read).
//
// 10. Long hold (L = long-hold threshold > T). The hold is decided at T as always;
//     the same press reaching P + L is a long hold, announced once, stamped there.
//
//       P===================|==================|=====R
//       *pressed            *held(P+T)         *longHeld(P+L)
//                                                    *releasedAfterHold(R, longHeld)
//
// Inputs that cannot happen with a correct kernel and adapter (a press while down,
// a release while up, a timestamp going backwards, a release stamped before a hold
// that was already announced, ...) never crash: they are reported as an `anomaly`
// in the output, for the daemon to log as a bug, and the recognizer carries on in
// the most conservative state.

/// The gestures a button listens for beyond the hold (which every button has). A
/// gesture not in the set costs nothing: a button without `doublePress` never waits
/// for a second press, one without `longHold` arms no second threshold.
public struct GestureSet: OptionSet, Hashable, Sendable, CustomStringConvertible {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// A second key-down within the double-press window after a short press.
  public static let doublePress = GestureSet(rawValue: 1 << 0)
  /// The same press reaching the long-hold threshold.
  public static let longHold = GestureSet(rawValue: 1 << 1)

  public var description: String {
    var names: [String] = ["hold"]
    if contains(.doublePress) { names.append("doublePress") }
    if contains(.longHold) { names.append("longHold") }
    return names.joined(separator: "+")
  }
}

/// How far a press had got when it ended without a trustworthy release: what was
/// already announced for it (and so performed).
public enum PressStage: Hashable, Sendable, CustomStringConvertible {
  /// Nothing decided yet: `pressed` only.
  case pending
  /// `held` was announced.
  case held
  /// `held` and `longHeld` were announced.
  case longHeld
  /// The press was the second one of a double press (`doublePressed` announced).
  case doublePressed

  public var description: String {
    switch self {
    case .pending: "pending"
    case .held: "held"
    case .longHeld: "long-held"
    case .doublePressed: "double-pressed"
    }
  }
}

/// What a button did, as the recognizer decided it from kernel timestamps. The
/// engine turns these into announcements: `pressed` → announce the hints, `held`,
/// `longHeld`, `doublePressed` → perform that gesture's control.
public enum PressAnnouncement: Hashable, Sendable, CustomStringConvertible {
  /// The key went down (leading edge, never delayed by debounce), starting a gesture.
  case pressed(at: MonotonicInstant)
  /// Released before the hold threshold: a short press. On a double-press button it is
  /// announced once the window has passed without a second press (still stamped `at`,
  /// the release).
  case released(at: MonotonicInstant, heldFor: TimeSpan)
  /// Still down at the hold threshold. `at` is the deadline (`pressedAt` + threshold),
  /// not the moment the timer happened to be processed.
  case held(at: MonotonicInstant, pressedAt: MonotonicInstant)
  /// Still down at the long-hold threshold (`pressedAt` + long-hold threshold), after `held`.
  case longHeld(at: MonotonicInstant, pressedAt: MonotonicInstant)
  /// Released after `held` (and `longHeld` when `longHeld` is true).
  case releasedAfterHold(at: MonotonicInstant, heldFor: TimeSpan, longHeld: Bool)
  /// The second key-down of a double press, at `at`; `gap` is how long the key was up
  /// between the two presses.
  case doublePressed(at: MonotonicInstant, firstPressedAt: MonotonicInstant, gap: TimeSpan)
  /// The second press of a double press was released; `heldFor` is since its key-down.
  case releasedAfterDoublePress(at: MonotonicInstant, heldFor: TimeSpan)
  /// The press ended without a trustworthy release. `stage` says what had already been
  /// announced for it (`pending`: nothing was decided, so nothing was performed).
  case cancelled(at: MonotonicInstant, reason: PressCancelReason, stage: PressStage)

  /// The instant the announcement is stamped with.
  public var instant: MonotonicInstant {
    switch self {
    case .pressed(let at), .released(let at, _), .held(let at, _), .longHeld(let at, _),
      .releasedAfterHold(let at, _, _), .doublePressed(let at, _, _), .releasedAfterDoublePress(let at, _),
      .cancelled(let at, _, _):
      at
    }
  }

  public var description: String {
    switch self {
    case .pressed(let at): "pressed at \(at)"
    case .released(let at, let heldFor): "released at \(at) held=\(heldFor)"
    case .held(let at, let pressedAt): "held at \(at) pressed=\(pressedAt)"
    case .longHeld(let at, let pressedAt): "long-held at \(at) pressed=\(pressedAt)"
    case .releasedAfterHold(let at, let heldFor, let longHeld):
      "released-after-hold at \(at) held=\(heldFor)\(longHeld ? " long-held" : "")"
    case .doublePressed(let at, let first, let gap): "double-pressed at \(at) first=\(first) gap=\(gap)"
    case .releasedAfterDoublePress(let at, let heldFor): "released-after-double-press at \(at) held=\(heldFor)"
    case .cancelled(let at, let reason, let stage):
      "cancelled at \(at) reason=\(reason)\(stage == .pending ? "" : " after=\(stage)")"
    }
  }
}

/// Why a press was cancelled instead of ending with a release.
public enum PressCancelReason: Hashable, Sendable, CaseIterable, CustomStringConvertible {
  /// The device disappeared while the key was down.
  case deviceLost
  /// Events were dropped (SYN_DROPPED) and the resynchronised state shows the key up.
  case resyncUp
  /// Events were dropped and the key is down again: the lost events may hide a
  /// release and a new press, so the pending press cannot be trusted.
  case resyncDown
  /// The button's configuration changed (a reload) while it was pressed.
  case reload

  public var description: String {
    switch self {
    case .deviceLost: "device-lost"
    case .resyncUp: "resync-up"
    case .resyncDown: "resync-down"
    case .reload: "reload"
    }
  }
}

/// An input that cannot happen with a correct kernel and adapter. The recognizer
/// ignores (or repairs) it and carries on; the daemon logs it as a bug.
public enum RecognizerAnomaly: Hashable, Sendable, CustomStringConvertible {
  /// A key event value other than 0, 1, 2.
  case invalidValue(Int32, at: MonotonicInstant)
  /// A press (value 1) while the key is already down.
  case pressWhileDown(at: MonotonicInstant)
  /// A release (value 0) while the key is up.
  case releaseWhileUp(at: MonotonicInstant)
  /// An autorepeat (value 2) while the key is up.
  case repeatWhileUp(at: MonotonicInstant)
  /// A key event stamped before the previous one; it is processed as if stamped `previous`.
  case timestampWentBackwards(at: MonotonicInstant, previous: MonotonicInstant)
  /// A release stamped before a hold that was already announced: the adapter
  /// delivered a deadline before draining the device.
  case releaseBeforeAnnouncedHold(at: MonotonicInstant, deadline: MonotonicInstant)
  /// The device appeared while a press was in progress (no `deviceLost` first); the
  /// press was ended as if the device had been lost.
  case appearedDuringPress(at: MonotonicInstant)

  public var description: String {
    switch self {
    case .invalidValue(let value, let at): "invalid key value \(value) at \(at)"
    case .pressWhileDown(let at): "press while the key is down at \(at)"
    case .releaseWhileUp(let at): "release while the key is up at \(at)"
    case .repeatWhileUp(let at): "autorepeat while the key is up at \(at)"
    case .timestampWentBackwards(let at, let previous):
      "key event stamped \(at), before the previous one at \(previous)"
    case .releaseBeforeAnnouncedHold(let at, let deadline):
      "release stamped \(at), before the hold already announced at \(deadline)"
    case .appearedDuringPress(let at): "device appeared at \(at) while a press was in progress"
    }
  }
}

/// The press/hold recognizer of one button. See the timing diagram at the top of
/// this file for every case.
///
/// A value-type state machine: each `mutating` input returns an ``Output`` (at most
/// four announcements, an anomaly, the next deadline). It allocates nothing per event.
/// The caller owns the timer: after every input, arm it for `output.nextDeadline`
/// (absolute, CLOCK_MONOTONIC) or disarm it when nil, and when it fires, first
/// deliver every event already readable from the device, then ``deadlineReached(at:)``.
public struct PressRecognizer: Hashable, Sendable {
  /// Where the button stands.
  public enum State: Hashable, Sendable {
    /// Key up, nothing pending.
    case idle
    /// Key down since before we could see its press (device appeared with the key
    /// down, or a resync found it down): not a press; waiting for its release.
    case ignoringUntilRelease
    /// Key down; the hold deadline (`at` + threshold) is pending.
    case pressed(at: MonotonicInstant)
    /// Key down; `held` has been announced (with `longHold`, its deadline is pending).
    case held(pressedAt: MonotonicInstant)
    /// Key down; `held` and `longHeld` have been announced.
    case longHeld(pressedAt: MonotonicInstant)
    /// Debounce: a release was read at `releasedAt` and takes effect at
    /// `releasedAt` + debounce unless the key is pressed again before. `stage`: what
    /// the press had reached.
    case releasing(pressedAt: MonotonicInstant, releasedAt: MonotonicInstant, stage: PressStage)
    /// Key up after a short first press on a double-press button: a key-down before
    /// `releasedAt` + window is a double press; otherwise it was a short press.
    case awaitingSecondPress(pressedAt: MonotonicInstant, releasedAt: MonotonicInstant)
    /// Key down: the second press of a double press (announced), until its release.
    case secondPress(pressedAt: MonotonicInstant)
  }

  /// The result of one input: up to four announcements, in order, an anomaly if the
  /// input was impossible, and the deadline to arm next.
  public struct Output: Hashable, Sendable {
    /// The announcements this input produced, oldest first (0 to 4).
    public internal(set) var announcements = Announcements()
    /// Set when the input was impossible (the first one, if several).
    public internal(set) var anomaly: RecognizerAnomaly?
    /// When to deliver ``PressRecognizer/deadlineReached(at:)`` next; nil: no timer needed.
    public internal(set) var nextDeadline: MonotonicInstant?

    /// Nothing happened, no timer.
    public init() {}

    mutating func report(_ anomaly: RecognizerAnomaly) {
      if self.anomaly == nil { self.anomaly = anomaly }
    }
  }

  /// Up to four announcements without an array (no heap allocation). The most one input
  /// produces is three: a release read after both thresholds passed yields `held`,
  /// `longHeld` and the release.
  public struct Announcements: RandomAccessCollection, Hashable, Sendable {
    var slots: (PressAnnouncement?, PressAnnouncement?, PressAnnouncement?, PressAnnouncement?) = (
      nil, nil, nil, nil
    )
    public private(set) var count = 0

    init() {}

    public static func == (a: Announcements, b: Announcements) -> Bool { Array(a) == Array(b) }
    public func hash(into hasher: inout Hasher) {
      for announcement in self { hasher.combine(announcement) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public subscript(position: Int) -> PressAnnouncement {
      precondition(position >= 0 && position < count, "announcement index out of range")
      switch position {
      case 0: return slots.0!
      case 1: return slots.1!
      case 2: return slots.2!
      default: return slots.3!
      }
    }

    /// A concrete iterator: `for announcement in output.announcements` then needs no
    /// generic `IndexingIterator`, which allocates per element in unoptimized builds.
    public struct Iterator: IteratorProtocol, Sendable {
      var all: Announcements
      var index = 0
      public mutating func next() -> PressAnnouncement? {
        guard index < all.count else { return nil }
        defer { index += 1 }
        return all[index]
      }
    }

    public func makeIterator() -> Iterator { Iterator(all: self) }

    /// No input produces more than three announcements (see the transitions); a fifth
    /// would be a bug in this file, so it traps rather than being dropped silently.
    mutating func append(_ announcement: PressAnnouncement) {
      switch count {
      case 0: slots.0 = announcement
      case 1: slots.1 = announcement
      case 2: slots.2 = announcement
      case 3: slots.3 = announcement
      default: preconditionFailure("PressRecognizer produced a fifth announcement for one input: \(announcement)")
      }
      count += 1
    }
  }

  /// The button's timing settings.
  public let settings: RecognizerSettings
  /// The gestures beyond the hold this button listens for (they follow its assignments).
  public private(set) var gestures: GestureSet
  /// The current state (for status reports and tests).
  public private(set) var state: State = .idle
  /// The timestamp of the last key event, to detect timestamps going backwards.
  private var lastEventAt: MonotonicInstant?

  /// A recognizer for a button whose key is up.
  public init(settings: RecognizerSettings = .default, gestures: GestureSet = []) {
    self.settings = settings
    self.gestures = gestures
  }

  /// When ``deadlineReached(at:)`` must be delivered next: the hold (or long-hold)
  /// deadline of a press, the end of a debounce wait or of a double-press window. Nil
  /// when nothing is pending.
  public var nextDeadline: MonotonicInstant? {
    switch state {
    case .pressed(let at): at + settings.holdThreshold
    case .held(let pressedAt): gestures.contains(.longHold) ? pressedAt + settings.longHoldThreshold : nil
    case .releasing(_, let releasedAt, _): releasedAt + settings.debounce
    case .awaitingSecondPress(_, let releasedAt): releasedAt + settings.doublePressWindow
    case .idle, .ignoringUntilRelease, .longHeld, .secondPress: nil
    }
  }

  /// True while the key is down as far as the recognizer is concerned (including a
  /// key ignored since it was already down, and a release still being debounced).
  public var isDown: Bool {
    switch state {
    case .idle, .awaitingSecondPress: false
    case .ignoringUntilRelease, .pressed, .held, .longHeld, .releasing, .secondPress: true
    }
  }

  // MARK: Inputs

  /// A key event of this button's key code. `value`: 0 release, 1 press,
  /// 2 autorepeat. `timestamp`: the kernel's event time on CLOCK_MONOTONIC.
  public mutating func keyEvent(value: Int32, at timestamp: MonotonicInstant) -> Output {
    var out = Output()
    var t = timestamp
    if let last = lastEventAt, t < last {
      out.report(.timestampWentBackwards(at: t, previous: last))
      t = last
    }
    lastEventAt = t
    // Everything up to t is known now (events arrive in timestamp order), so any
    // deadline at or before t is decided first: a release stamped at/after the hold
    // deadline that is read before the timer input still yields held, then released.
    settle(upTo: t, &out)
    switch value {
    case 1: press(at: t, &out)
    case 0: release(at: t, &out)
    case 2:
      switch state {
      case .idle, .releasing, .awaitingSecondPress: out.report(.repeatWhileUp(at: t))
      case .ignoringUntilRelease, .pressed, .held, .longHeld, .secondPress: break  // autorepeat never counts
      }
    default:
      out.report(.invalidValue(value, at: t))
    }
    out.nextDeadline = nextDeadline
    return out
  }

  /// The timer armed for ``nextDeadline`` fired; `now` is when it did (>= the
  /// deadline). Deliver all readable key events first. A hold is stamped at its
  /// deadline, not at `now`. An early or stale call does nothing.
  public mutating func deadlineReached(at now: MonotonicInstant) -> Output {
    var out = Output()
    settle(upTo: now, &out)
    out.nextDeadline = nextDeadline
    return out
  }

  /// The button's gestures changed (an assignment was made or removed). A double-press
  /// window in progress on a button that no longer has the gesture ends at once as the
  /// short press it was; a long hold added during a hold applies to it. Nothing else is
  /// decided here (no time is given: events not yet read may be pending).
  public mutating func setGestures(_ new: GestureSet) -> Output {
    var out = Output()
    gestures = new
    if case .awaitingSecondPress(let pressedAt, let releasedAt) = state, !new.contains(.doublePress) {
      state = .idle
      out.announcements.append(.released(at: releasedAt, heldFor: releasedAt - pressedAt))
    }
    out.nextDeadline = nextDeadline
    return out
  }

  /// The device carrying this button disappeared at `now`.
  public mutating func deviceLost(at now: MonotonicInstant) -> Output {
    var out = Output()
    endPress(at: now, reason: .deviceLost, &out)
    state = .idle
    out.nextDeadline = nextDeadline
    return out
  }

  /// The button is replaced (its configuration changed on a reload) at `now`: like a
  /// lost device, a pending press is cancelled (reason `reload`), a hold already
  /// announced ends with a cancellation that says so, a release waiting for its
  /// debounce or a double-press window is confirmed. A key never announced as a press
  /// ends silently.
  public mutating func abandon(at now: MonotonicInstant) -> Output {
    var out = Output()
    endPress(at: now, reason: .reload, &out)
    state = .idle
    out.nextDeadline = nextDeadline
    return out
  }

  /// Events were dropped (SYN_DROPPED) and the key's state was re-read: it is now
  /// down (`keyDown`) or up. `now`: when the resync happened.
  public mutating func resynchronized(keyDown: Bool, at now: MonotonicInstant) -> Output {
    var out = Output()
    switch state {
    case .idle:
      if keyDown { state = .ignoringUntilRelease }
    case .ignoringUntilRelease:
      if !keyDown { state = .idle }
    case .pressed:
      endPress(at: now, reason: keyDown ? .resyncDown : .resyncUp, &out)
      state = keyDown ? .ignoringUntilRelease : .idle
    case .held, .longHeld, .secondPress:
      // Already decided; a key still down goes on (its release will end it).
      if !keyDown {
        endPress(at: now, reason: .resyncUp, &out)
        state = .idle
      }
    case .releasing, .awaitingSecondPress:
      // The release was read; the debounce wait or the double-press window cannot be
      // completed from lost events (a second press among them has no trustworthy
      // time), so the release is final.
      endPress(at: now, reason: .resyncUp, &out)
      state = keyDown ? .ignoringUntilRelease : .idle
    }
    out.nextDeadline = nextDeadline
    return out
  }

  /// A device carrying this button appeared (or was opened) at `now`, with the key
  /// down or up. A key already down is not a press.
  public mutating func deviceAppeared(keyDown: Bool, at now: MonotonicInstant) -> Output {
    var out = Output()
    switch state {
    case .idle, .ignoringUntilRelease: break
    case .awaitingSecondPress:
      // The key is up, so another device appearing with it up changes nothing; one
      // with it down ends the window (that key-down has no press time).
      if !keyDown {
        out.nextDeadline = nextDeadline
        return out
      }
      endPress(at: now, reason: .deviceLost, &out)
    case .pressed, .held, .longHeld, .releasing, .secondPress:
      out.report(.appearedDuringPress(at: now))
      endPress(at: now, reason: .deviceLost, &out)
    }
    state = keyDown ? .ignoringUntilRelease : .idle
    out.nextDeadline = nextDeadline
    return out
  }

  // MARK: Transitions

  /// Decides whatever is due at or before `t`, in time order: the hold deadline, the
  /// long-hold deadline, the end of a debounce wait, the end of a double-press window.
  @inline(__always)
  private mutating func settle(upTo t: MonotonicInstant, _ out: inout Output) {
    while true {
      switch state {
      case .pressed(let pressedAt):
        let deadline = pressedAt + settings.holdThreshold
        guard t >= deadline else { return }
        state = .held(pressedAt: pressedAt)
        out.announcements.append(.held(at: deadline, pressedAt: pressedAt))
      case .held(let pressedAt):
        let deadline = pressedAt + settings.longHoldThreshold
        guard gestures.contains(.longHold), t >= deadline else { return }
        state = .longHeld(pressedAt: pressedAt)
        out.announcements.append(.longHeld(at: deadline, pressedAt: pressedAt))
      case .releasing(let pressedAt, let releasedAt, let stage):
        guard t >= releasedAt + settings.debounce else { return }
        if stage == .pending && gestures.contains(.doublePress) {
          state = .awaitingSecondPress(pressedAt: pressedAt, releasedAt: releasedAt)
        } else {
          state = .idle
          out.announcements.append(Self.release(pressedAt: pressedAt, releasedAt: releasedAt, stage: stage))
          return
        }
      case .awaitingSecondPress(let pressedAt, let releasedAt):
        guard t >= releasedAt + settings.doublePressWindow else { return }
        state = .idle
        out.announcements.append(.released(at: releasedAt, heldFor: releasedAt - pressedAt))
        return
      case .idle, .ignoringUntilRelease, .longHeld, .secondPress:
        return
      }
    }
  }

  @inline(__always)
  private mutating func press(at t: MonotonicInstant, _ out: inout Output) {
    switch state {
    case .idle:
      state = .pressed(at: t)
      out.announcements.append(.pressed(at: t))
    case .releasing(let pressedAt, _, let stage):
      // settle() already confirmed any release at least `debounce` old, so this
      // re-press is chatter: drop the release and carry on with the original press,
      // deciding a hold whose deadline passed while the release was pending.
      switch stage {
      case .pending: state = .pressed(at: pressedAt)
      case .held: state = .held(pressedAt: pressedAt)
      case .longHeld: state = .longHeld(pressedAt: pressedAt)
      case .doublePressed: state = .secondPress(pressedAt: pressedAt)
      }
      settle(upTo: t, &out)
    case .awaitingSecondPress(let firstPressedAt, let releasedAt):
      // settle() ran first, so t is inside the window.
      state = .secondPress(pressedAt: t)
      out.announcements.append(.doublePressed(at: t, firstPressedAt: firstPressedAt, gap: t - releasedAt))
    case .ignoringUntilRelease, .pressed, .held, .longHeld, .secondPress:
      out.report(.pressWhileDown(at: t))
    }
  }

  @inline(__always)
  private mutating func release(at t: MonotonicInstant, _ out: inout Output) {
    switch state {
    case .idle, .releasing, .awaitingSecondPress:
      out.report(.releaseWhileUp(at: t))
    case .ignoringUntilRelease:
      state = .idle
    case .pressed(let pressedAt):
      // settle() ran first, so t < the hold deadline: a short (or first) press.
      state = .releasing(pressedAt: pressedAt, releasedAt: t, stage: .pending)
      settle(upTo: t, &out)  // without debounce the release takes effect now
    case .held(let pressedAt):
      let deadline = pressedAt + settings.holdThreshold
      if t < deadline { out.report(.releaseBeforeAnnouncedHold(at: t, deadline: deadline)) }
      state = .releasing(pressedAt: pressedAt, releasedAt: t, stage: .held)
      settle(upTo: t, &out)
    case .longHeld(let pressedAt):
      let deadline = pressedAt + settings.longHoldThreshold
      if t < deadline { out.report(.releaseBeforeAnnouncedHold(at: t, deadline: deadline)) }
      state = .releasing(pressedAt: pressedAt, releasedAt: t, stage: .longHeld)
      settle(upTo: t, &out)
    case .secondPress(let pressedAt):
      state = .releasing(pressedAt: pressedAt, releasedAt: t, stage: .doublePressed)
      settle(upTo: t, &out)
    }
  }

  /// Ends a press in progress without a trustworthy release: a pending, held or
  /// second press is cancelled; a release waiting for debounce or a double-press
  /// window is confirmed. Leaves `state` for the caller to set.
  private mutating func endPress(at t: MonotonicInstant, reason: PressCancelReason, _ out: inout Output) {
    switch state {
    case .pressed:
      out.announcements.append(.cancelled(at: t, reason: reason, stage: .pending))
    case .held:
      out.announcements.append(.cancelled(at: t, reason: reason, stage: .held))
    case .longHeld:
      out.announcements.append(.cancelled(at: t, reason: reason, stage: .longHeld))
    case .secondPress:
      out.announcements.append(.cancelled(at: t, reason: reason, stage: .doublePressed))
    case .releasing(let pressedAt, let releasedAt, let stage):
      out.announcements.append(Self.release(pressedAt: pressedAt, releasedAt: releasedAt, stage: stage))
    case .awaitingSecondPress(let pressedAt, let releasedAt):
      out.announcements.append(.released(at: releasedAt, heldFor: releasedAt - pressedAt))
    case .idle, .ignoringUntilRelease:
      break
    }
  }

  @inline(__always)
  private static func release(
    pressedAt: MonotonicInstant, releasedAt: MonotonicInstant, stage: PressStage
  )
    -> PressAnnouncement
  {
    switch stage {
    case .pending: .released(at: releasedAt, heldFor: releasedAt - pressedAt)
    case .held: .releasedAfterHold(at: releasedAt, heldFor: releasedAt - pressedAt, longHeld: false)
    case .longHeld: .releasedAfterHold(at: releasedAt, heldFor: releasedAt - pressedAt, longHeld: true)
    case .doublePressed: .releasedAfterDoublePress(at: releasedAt, heldFor: releasedAt - pressedAt)
    }
  }
}
