// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// Carries out the buttons' feedback: the engine's moments and hold values go through the
/// pure ``FeedbackSchedulers``; their writes go to the lights at once (in the same loop
/// turn as the announcement, so the threshold tick is as prompt as `held`), except while
/// the daemon holds them (``holdWrites()``, a turn that starts a command): then the quick
/// ones (``FeedbackLight/isQuick(_:)``: a taken LED's brightness, an `EV_LED`) go out
/// right before the spawn (``writeQuick()``) and the others once the command started
/// (``flushWrites()``), still in that turn. Taking a sysfs LED from its trigger waits for
/// the kernel (an RCU grace period, measured 9–30 ms under TCG:
/// docs/benchmarks-notebook.md), and neither the command nor the tick must wait for that:
/// an output that shows `held` is taken at its press's key-down
/// (``FeedbackLight/prepare()``), showing what it showed, and given back when the press
/// ends with nothing shown. Their one deadline is one timer on the daemon's loop, armed
/// only while a timed step runs.
///
/// A light that cannot be written (device gone, no permission) is logged once, when it
/// starts failing, not at every blink; it never disturbs the press or the intent.
package final class FeedbackDriver {
  private let loop: EventLoop
  private let logger: Logger
  private let factory: any FeedbackLightFactory
  private var schedulers = FeedbackSchedulers(configuration: Configuration())
  private var lights: [any FeedbackLight] = []
  /// Outputs whose last write failed (logged when they started failing).
  private var failing: Set<Int> = []
  private var timer: TimerID?
  private var armed: MonotonicInstant?
  private var stopped = false
  /// The number of the configuration generation it shows (0 before the first).
  package private(set) var generation: UInt64 = 0
  /// Writes held back until ``flushWrites()`` (nil: written at once).
  private var heldWrites: [FeedbackSchedulers.Action]?
  /// Outputs taken at their press's key-down (``FeedbackLight/prepare()``) that no write
  /// has shown anything on since: given back when the press ends at rest.
  private var prepared: Set<Int> = []

  package init(loop: EventLoop, logger: Logger, factory: any FeedbackLightFactory) {
    self.loop = loop
    self.logger = logger
    self.factory = factory
  }

  /// The outputs of `generation` replace the current ones (start and every reload):
  /// every light taken is given back first, the new ones start at rest. When nothing
  /// about the outputs changed (the same outputs of the same buttons), they go on as they
  /// are: a reload does not make an indicator flicker.
  package func configure(_ generation: ConfigurationGeneration) {
    guard !stopped else { return }
    self.generation = generation.number
    let configuration = generation.configuration
    let new = FeedbackSchedulers(configuration: configuration)
    guard new.buttons != schedulers.buttons || new.schedulers.map(\.output) != schedulers.schedulers.map(\.output)
    else { return }
    end()
    schedulers = new
    failing = []
    lights = schedulers.schedulers.indices.map { i in
      factory.light(for: schedulers.schedulers[i].output, button: schedulers.buttons[i])
    }
    for (i, light) in lights.enumerated() {
      bind(i)
      logger.debug("button \(schedulers.buttons[i]): feedback on \(light.label): \(schedulers.schedulers[i].output)")
    }
  }

  /// A moment of `button`, now.
  package func moment(_ moment: EventName, button: String) {
    guard !stopped else { return }
    apply(schedulers.moment(moment, button: button, at: loop.now()))
    if moment == .pressed {
      prepare(button: button)
    } else if moment.endsPress {
      unprepare(button: button)
    }
  }

  /// The key-down of `button`: each of its outputs that shows `held` and rests given back
  /// is taken now (its taking may block), so that the threshold's tick is one write.
  private func prepare(button: String) {
    // Writes held back (a turn that starts a command) must not be overtaken; the tick then
    // takes the light itself, as without this.
    guard heldWrites == nil else { return }
    for i in schedulers.schedulers.indices where schedulers.buttons[i] == button && !prepared.contains(i) {
      let scheduler = schedulers.schedulers[i]
      guard scheduler.output.moments.contains(.held), scheduler.shown == .release, !scheduler.isShowing else {
        continue
      }
      do {
        if try lights[i].prepare() {
          prepared.insert(i)
          if failing.remove(i) != nil {
            logger.info("feedback on \(lights[i].label) works again", event: "feedback-recovered")
          }
        }
      } catch {
        failed(i, error)
      }
    }
  }

  /// The press of `button` ended: a light taken at its key-down that shows nothing now is
  /// given back (one that shows a pattern is given back at the pattern's end, as ever).
  private func unprepare(button: String) {
    for i in prepared.sorted() where schedulers.buttons[i] == button {
      let scheduler = schedulers.schedulers[i]
      guard scheduler.shown == .release, !scheduler.isShowing else { continue }
      prepared.remove(i)
      release(i)
    }
  }

  private func release(_ i: Int) {
    do {
      try lights[i].release()
    } catch {
      failed(i, error)
    }
  }

  /// The value of `button`'s hold control (what its indicators show).
  package func valueChanged(button: String, isOn: Bool?) {
    guard !stopped else { return }
    apply(schedulers.valueChanged(isOn, button: button))
  }

  /// `button` is now read from a (new) device: its `led` outputs show again what they
  /// show, on that device's LED (an indicator must not wait for the next change).
  package func deviceAppeared(button: String) {
    guard !stopped else { return }
    for i in schedulers.schedulers.indices where schedulers.buttons[i] == button {
      // A beeper or motor on the button's device binds to the new descriptor (its effect
      // uploaded there) before anything plays.
      bind(i)
      guard case .inputLED = schedulers.schedulers[i].output.light else { continue }
      let shown = schedulers.schedulers[i].shown
      guard shown != .release else { continue }
      apply([FeedbackSchedulers.Action(output: i, write: shown)])
    }
  }

  /// The daemon stops: every light is given back and nothing is shown any more.
  package func stop() {
    guard !stopped else { return }
    end()
    stopped = true
  }

  /// From now until ``flushWrites()``, writes wait (the schedulers and their timer go on):
  /// the daemon holds them in a turn that starts a command.
  package func holdWrites() {
    if heldWrites == nil { heldWrites = [] }
  }

  /// Whether writes wait (``holdWrites()`` until ``flushWrites()``).
  package var isHoldingWrites: Bool { heldWrites != nil }

  /// Of the writes that wait, makes now, in order, each that is one quick write
  /// (``FeedbackLight/isQuick(_:)``: the threshold's tick on a light taken at the
  /// key-down) unless an earlier write of the same output still waits; the others keep
  /// waiting for ``flushWrites()``. The daemon calls it right before a command's spawn:
  /// the tick is then a system call before the spawn instead of the spawn's milliseconds
  /// after it (the child's exec, under `CLONE_VFORK`), while a write that would wait for
  /// the kernel never delays the command.
  package func writeQuick() {
    guard let actions = heldWrites, !actions.isEmpty else { return }
    var waitingOutputs: Set<Int> = []
    var now: [FeedbackSchedulers.Action] = []
    var later: [FeedbackSchedulers.Action] = []
    for action in actions {
      if waitingOutputs.contains(action.output)
        || (action.output < lights.count && !lights[action.output].isQuick(action.write))
      {
        waitingOutputs.insert(action.output)
        later.append(action)
      } else {
        now.append(action)
      }
    }
    heldWrites = nil
    apply(now)
    heldWrites = later
  }

  /// Writes what waited since ``holdWrites()``, in order, and writes at once again.
  package func flushWrites() {
    guard let actions = heldWrites else { return }
    heldWrites = nil
    apply(actions)
  }

  /// Whether a timer is armed (tests: zero wake-ups while nothing is shown).
  package var isTimerArmed: Bool { timer != nil }

  private func end() {
    // What waited goes out first: the lights are unbound right after.
    flushWrites()
    apply(schedulers.end())
    // Taken at a key-down, showing nothing: given back too (the schedulers wrote nothing).
    for i in prepared.sorted() where i < lights.count { release(i) }
    prepared = []
    for light in lights { light.unbind() }
  }

  /// Binds output `i` (see ``FeedbackLight/bind()``); a failure is logged like a failed write.
  private func bind(_ i: Int) {
    do {
      try lights[i].bind()
    } catch {
      failed(i, error)
    }
  }

  private func failed(_ output: Int, _ error: FeedbackLightError) {
    guard failing.insert(output).inserted else { return }
    logger.warning(
      "button \(schedulers.buttons[output]): feedback on \(lights[output].label) failed: \(error) "
        + "(not logged again until it works)", event: "feedback-failed")
  }

  private func apply(_ actions: [FeedbackSchedulers.Action]) {
    if heldWrites != nil {
      heldWrites?.append(contentsOf: actions)
      rearm()
      return
    }
    for action in actions where action.output < lights.count {
      let light = lights[action.output]
      // A write shows the scheduler's state from now on: its rest gives the light back.
      prepared.remove(action.output)
      do {
        let wrote: Bool
        switch action.write {
        case .on: wrote = try light.set(true)
        case .off: wrote = try light.set(false)
        case .release: wrote = try light.release()
        }
        // Only a write that went through shows the light works again: the rest after a
        // failed take (a release of a light never taken) writes nothing.
        if wrote, failing.remove(action.output) != nil {
          logger.info("feedback on \(light.label) works again", event: "feedback-recovered")
        }
      } catch {
        failed(action.output, error)
      }
    }
    rearm()
  }

  private func rearm() {
    let next = stopped ? nil : schedulers.nextDeadline
    guard next != armed else { return }
    if let timer { loop.cancel(timer) }
    timer = nil
    armed = next
    guard let next else { return }
    timer = loop.schedule(at: next) { [unowned self] now in
      self.timer = nil
      self.armed = nil
      self.apply(self.schedulers.deadlineReached(at: now))
    }
  }
}
