// The press/hold recognizer of one button: kernel-stamped key events, timer
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
//                  *releasedShort(R, heldFor: R-P)
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
//       *pressed       *releasedShort           (no held)
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
//       * * * * *     *       pressed, releasedShort, pressed, releasedShort, ...
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
//        nothing           nothing *pressed *releasedShort
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
// Inputs that cannot happen with a correct kernel and adapter (a press while down,
// a release while up, a timestamp going backwards, a release stamped before a hold
// that was already announced, ...) never crash: they are reported as an `anomaly`
// in the output, for the daemon to log as a bug, and the recognizer carries on in
// the most conservative state.

/// What a button did, as the recognizer decided it from kernel timestamps. The
/// engine turns these into announcements: `pressed` → announce the hint, `held` →
/// perform the intent.
public enum PressAnnouncement: Hashable, Sendable, CustomStringConvertible {
  /// The key went down (leading edge, never delayed by debounce).
  case pressed(at: MonotonicInstant)
  /// Released before the hold threshold: a short press.
  case releasedShort(at: MonotonicInstant, heldFor: TimeSpan)
  /// Still down at the hold threshold. `at` is the deadline (`pressedAt` + threshold),
  /// not the moment the timer happened to be processed.
  case held(at: MonotonicInstant, pressedAt: MonotonicInstant)
  /// Released after `held` was announced.
  case releasedAfterHold(at: MonotonicInstant, heldFor: TimeSpan)
  /// The press ended without a trustworthy release. `afterHold` tells whether `held`
  /// had already been announced for it (then there is nothing to undo).
  case cancelled(at: MonotonicInstant, reason: PressCancelReason, afterHold: Bool)

  /// The instant the announcement is stamped with.
  public var instant: MonotonicInstant {
    switch self {
    case .pressed(let at), .releasedShort(let at, _), .held(let at, _), .releasedAfterHold(let at, _),
      .cancelled(let at, _, _):
      at
    }
  }

  public var description: String {
    switch self {
    case .pressed(let at): "pressed at \(at)"
    case .releasedShort(let at, let heldFor): "released-short at \(at) held=\(heldFor)"
    case .held(let at, let pressedAt): "held at \(at) pressed=\(pressedAt)"
    case .releasedAfterHold(let at, let heldFor): "released-after-hold at \(at) held=\(heldFor)"
    case .cancelled(let at, let reason, let afterHold):
      "cancelled at \(at) reason=\(reason)\(afterHold ? " after-hold" : "")"
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
/// two announcements, an anomaly, the next deadline). It allocates nothing per event.
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
    /// Key down; `held` has been announced.
    case held(pressedAt: MonotonicInstant)
    /// Debounce: a release was read at `releasedAt` and takes effect at
    /// `releasedAt` + debounce unless the key is pressed again before.
    case releasing(pressedAt: MonotonicInstant, releasedAt: MonotonicInstant, held: Bool)
  }

  /// The result of one input: up to two announcements, in order, an anomaly if the
  /// input was impossible, and the deadline to arm next.
  public struct Output: Hashable, Sendable {
    /// The announcements this input produced, oldest first (0, 1 or 2).
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

  /// Up to two announcements without an array (no heap allocation).
  public struct Announcements: RandomAccessCollection, Hashable, Sendable {
    var slot0: PressAnnouncement?
    var slot1: PressAnnouncement?

    init() {}

    public var startIndex: Int { 0 }
    public var endIndex: Int { slot0 == nil ? 0 : (slot1 == nil ? 1 : 2) }
    public subscript(position: Int) -> PressAnnouncement {
      precondition(position >= 0 && position < endIndex, "announcement index out of range")
      return position == 0 ? slot0! : slot1!
    }

    /// A concrete iterator: `for announcement in output.announcements` then needs no
    /// generic `IndexingIterator`, which allocates per element in unoptimized builds.
    public struct Iterator: IteratorProtocol, Sendable {
      var next0: PressAnnouncement?
      var next1: PressAnnouncement?
      public mutating func next() -> PressAnnouncement? {
        defer { (next0, next1) = (next1, nil) }
        return next0
      }
    }

    public func makeIterator() -> Iterator { Iterator(next0: slot0, next1: slot1) }

    /// No input produces more than two announcements (see the transitions); a third
    /// would be a bug in this file, so it traps rather than being dropped silently.
    mutating func append(_ announcement: PressAnnouncement) {
      if slot0 == nil {
        slot0 = announcement
      } else if slot1 == nil {
        slot1 = announcement
      } else {
        preconditionFailure("PressRecognizer produced a third announcement for one input: \(announcement)")
      }
    }
  }

  /// The button's timing settings.
  public let settings: RecognizerSettings
  /// The current state (for status reports and tests).
  public private(set) var state: State = .idle
  /// The timestamp of the last key event, to detect timestamps going backwards.
  private var lastEventAt: MonotonicInstant?

  /// A recognizer for a button whose key is up.
  public init(settings: RecognizerSettings = .default) {
    self.settings = settings
  }

  /// When ``deadlineReached(at:)`` must be delivered next: the hold deadline of a
  /// pending press, or the end of a debounce wait. Nil when nothing is pending.
  public var nextDeadline: MonotonicInstant? {
    switch state {
    case .pressed(let at): at + settings.holdThreshold
    case .releasing(_, let releasedAt, _): releasedAt + settings.debounce
    case .idle, .ignoringUntilRelease, .held: nil
    }
  }

  /// True while the key is down as far as the recognizer is concerned (including a
  /// key ignored since it was already down, and a release still being debounced).
  public var isDown: Bool {
    switch state {
    case .idle: false
    case .ignoringUntilRelease, .pressed, .held, .releasing: true
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
      case .idle, .releasing: out.report(.repeatWhileUp(at: t))
      case .ignoringUntilRelease, .pressed, .held: break  // autorepeat never counts
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
  /// announced ends without announcement to undo, and a release waiting for its
  /// debounce is confirmed. A key never announced as a press ends silently.
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
    case .held:
      if !keyDown {
        endPress(at: now, reason: .resyncUp, &out)
        state = .idle
      }
    case .releasing:
      // The release was read; the debounce wait cannot be completed from lost
      // events, so the release is final.
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
    case .pressed, .held, .releasing:
      out.report(.appearedDuringPress(at: now))
      endPress(at: now, reason: .deviceLost, &out)
    }
    state = keyDown ? .ignoringUntilRelease : .idle
    out.nextDeadline = nextDeadline
    return out
  }

  // MARK: Transitions

  /// Decides whatever is due at or before `t`: the hold deadline of a pending press,
  /// or the end of a debounce wait. At most one announcement.
  @inline(__always)
  private mutating func settle(upTo t: MonotonicInstant, _ out: inout Output) {
    switch state {
    case .pressed(let pressedAt):
      let deadline = pressedAt + settings.holdThreshold
      if t >= deadline {
        state = .held(pressedAt: pressedAt)
        out.announcements.append(.held(at: deadline, pressedAt: pressedAt))
      }
    case .releasing(let pressedAt, let releasedAt, let held):
      if t >= releasedAt + settings.debounce {
        state = .idle
        out.announcements.append(Self.release(pressedAt: pressedAt, releasedAt: releasedAt, held: held))
      }
    case .idle, .ignoringUntilRelease, .held:
      break
    }
  }

  @inline(__always)
  private mutating func press(at t: MonotonicInstant, _ out: inout Output) {
    switch state {
    case .idle:
      state = .pressed(at: t)
      out.announcements.append(.pressed(at: t))
    case .releasing(let pressedAt, _, let held):
      // settle() already confirmed any release at least `debounce` old, so this
      // re-press is chatter: drop the release and carry on with the original press,
      // deciding a hold whose deadline passed while the release was pending.
      state = held ? .held(pressedAt: pressedAt) : .pressed(at: pressedAt)
      settle(upTo: t, &out)
    case .ignoringUntilRelease, .pressed, .held:
      out.report(.pressWhileDown(at: t))
    }
  }

  @inline(__always)
  private mutating func release(at t: MonotonicInstant, _ out: inout Output) {
    switch state {
    case .idle, .releasing:
      out.report(.releaseWhileUp(at: t))
    case .ignoringUntilRelease:
      state = .idle
    case .pressed(let pressedAt):
      // settle() ran first, so t < the hold deadline: a short press.
      state = .releasing(pressedAt: pressedAt, releasedAt: t, held: false)
      settle(upTo: t, &out)  // without debounce the release takes effect now
    case .held(let pressedAt):
      let deadline = pressedAt + settings.holdThreshold
      if t < deadline { out.report(.releaseBeforeAnnouncedHold(at: t, deadline: deadline)) }
      state = .releasing(pressedAt: pressedAt, releasedAt: t, held: true)
      settle(upTo: t, &out)
    }
  }

  /// Ends a press in progress without a trustworthy release: a pending or held press
  /// is cancelled; a release waiting for debounce is confirmed. Leaves `state` for
  /// the caller to set.
  private mutating func endPress(at t: MonotonicInstant, reason: PressCancelReason, _ out: inout Output) {
    switch state {
    case .pressed:
      out.announcements.append(.cancelled(at: t, reason: reason, afterHold: false))
    case .held:
      out.announcements.append(.cancelled(at: t, reason: reason, afterHold: true))
    case .releasing(let pressedAt, let releasedAt, let held):
      out.announcements.append(Self.release(pressedAt: pressedAt, releasedAt: releasedAt, held: held))
    case .idle, .ignoringUntilRelease:
      break
    }
  }

  @inline(__always)
  private static func release(
    pressedAt: MonotonicInstant, releasedAt: MonotonicInstant, held: Bool
  )
    -> PressAnnouncement
  {
    held
      ? .releasedAfterHold(at: releasedAt, heldFor: releasedAt - pressedAt)
      : .releasedShort(at: releasedAt, heldFor: releasedAt - pressedAt)
  }
}
