// SPDX-License-Identifier: Apache-2.0
/// What the engine is given: every input it reacts to, as data. The daemon hands each
/// one to ``ControlEngine/handle(_:)`` and carries out the ``EngineEffect``s it returns.
public enum EngineInput: Sendable {
  /// The daemon can run effects now: save what start-up migrated, read every value.
  case start
  /// A key event from a device serving the button named `button` (a button is its name,
  /// everywhere: configuration, protocol, feedback, MQTT); devices report many keys, only
  /// the button's own key counts.
  case key(button: String, code: UInt16, value: Int32, at: MonotonicInstant)
  /// The engine's timer (``EngineEffect/armTimer(_:)``) fired at `at`. The daemon drains
  /// the devices first, so a release stamped before the deadline is already known.
  case deadline(at: MonotonicInstant)
  /// A device serving `button` was opened; `keyDown` is its key's state then (a key
  /// already down is not a press).
  case deviceAppeared(button: String, keyDown: Bool, at: MonotonicInstant)
  /// The device serving `button` vanished, or the kernel released its keys because it is
  /// going away: a pending hold is cancelled (`device-lost`).
  case deviceLost(button: String, at: MonotonicInstant)
  /// Events of the device serving `button` were dropped (SYN_DROPPED); its key is now `keyDown`.
  case resynchronized(button: String, keyDown: Bool, at: MonotonicInstant)
  /// The command (or write, or provider request) of ``EngineEffect/startCommand(_:)`` job `job` ended.
  case commandFinished(job: UInt64, ControlEngine.PerformOutcome)
  /// The value read of ``EngineEffect/readValue(_:)`` job `job` answered (`.unavailable`
  /// when the provider failed or timed out).
  case valueRead(job: UInt64, ControlValue)
  /// The outcome of a ``EngineEffect/save(_:awaiting:)`` that awaits it: nil saved, else the
  /// error (`state-not-saved`), and every change that asked for the save is undone.
  case saved(SaveToken, ProtocolError?)
  /// A socket request (or the daemon's own); its answer is a ``EngineEffect/reply(_:_:)``
  /// with `token`, when there is a token.
  case request(EngineRequest, token: RequestToken?)
  /// A new configuration generation replaces the current one (SIGHUP, `reload` of
  /// everything); it already validated.
  case configuration(ConfigurationGeneration, at: MonotonicInstant)
  /// The daemon is stopping: every momentary toggle held on by a press goes off now, while
  /// commands may still start.
  case stopping
}

/// The requests that change the engine's state. Read-only questions (`status`, `list`,
/// `get`) are answered from the engine's value directly.
public enum EngineRequest: Sendable {
  /// `perform`: as a hold would; the reply is the resulting control.
  case perform(ControlInstance, button: String?, source: PerformSource)
  /// `set`: only store-backed toggles; the reply is the control.
  case set(ControlInstance, to: Bool)
  /// `assign`: the reply is ``EngineAnswer/assigned(button:control:)``.
  case assign(ControlInstance, button: String, gesture: Gesture, momentary: Bool)
  /// `reload` of one kind's values (all kinds when nil); the reply lists the controls.
  case reload(kind: String?)
  /// Re-read one instance's value (what `reload` does for each); the reply is ``EngineAnswer/done``
  /// once the value is known.
  case refresh(ControlInstance)
  /// `press`: a virtual press of `button` starting at `at`; the reply names the button.
  case press(button: String, VirtualPress, at: MonotonicInstant)
  /// `register`: `client` becomes the provider of `kinds`.
  case register(ControlEngine.ProviderClient, kinds: [String])
  /// `client`'s connection closed.
  case providerDisconnected(ControlEngine.ProviderClient)
}

/// Who waits for a request's reply: the daemon's number for it, opaque to the engine.
public struct RequestToken: Hashable, Sendable {
  public let rawValue: UInt64
  public init(rawValue: UInt64) { self.rawValue = rawValue }
}

/// A save whose outcome the engine waits for (``EngineInput/saved(_:_:)``).
public struct SaveToken: Hashable, Sendable {
  public let rawValue: UInt64
  public init(rawValue: UInt64) { self.rawValue = rawValue }
}

/// A request's successful answer.
public enum EngineAnswer: Hashable, Sendable {
  /// The resulting control (`perform`, `set`).
  case control(ControlSnapshot)
  /// The button's status, which the daemon completes with its devices (`press`).
  case button(String)
  /// `assign`: the control now assigned; the daemon answers with the button's status.
  case assigned(button: String, control: ControlSnapshot)
  /// The controls after a `reload`.
  case controls([ControlSnapshot])
  /// The kinds now provided (`register`).
  case registered(kinds: [String])
  /// Nothing to say (`providerDisconnected`).
  case done
}

/// What the engine asks of the outside world, as data. The daemon's interpreter carries
/// them out (docs/architecture.md: in which order and why); tests and golden scenarios
/// read them.
public enum EngineEffect: Equatable, Sendable {
  /// Run an intent (exec, write, provider); answer with ``EngineInput/commandFinished(job:_:)``.
  case startCommand(ControlEngine.PerformJob)
  /// At a key-down: the exec job this press's hold would run if nothing changes before its
  /// threshold (its `id` is 0: it is not a perform). The daemon may ready its command;
  /// the hold's ``startCommand(_:)`` follows with a job that
  /// ``ControlEngine/PerformJob/performsTheSame(as:)`` this one, or a different one, or
  /// ``discardPrepared`` when the press ends first.
  case prepareCommand(ControlEngine.PerformJob)
  /// The press whose hold was readied ended, or the configuration changed: forget it.
  case discardPrepared
  /// Announce to subscribers and the log.
  case announce(Event)
  /// A log line that is not an announcement (warnings, bugs, debug detail).
  case log(LogLevel, String)
  /// A moment of `button`'s press, or the outcome of a perform it asked for, by its
  /// protocol name, in the order the announcements go out: what the button's feedback shows.
  case feedback(EventName, button: String)
  /// The value of the toggle assigned to `button`'s hold may have changed: what its state
  /// indicators show (``ControlEngine/holdValue(button:)``).
  case holdValue(button: String, isOn: Bool?)
  /// Arm the engine's single timer for `deadline` (nil: disarm).
  case armTimer(MonotonicInstant?)
  /// Read a value; answer with ``EngineInput/valueRead(job:_:)``.
  case readValue(ControlEngine.ValueReadJob)
  /// Persist `state`, atomically and durably. An input's effects hold at most one save,
  /// of the state after the whole input, where the input last asked for one. With a
  /// token, the engine waits for the outcome (``EngineInput/saved(_:_:)``) before it
  /// announces the changes the save holds (on failure it undoes them all); without one,
  /// a failure is only the daemon's to report and retry.
  case save(StateSnapshot, awaiting: SaveToken?)
  /// The answer to the request with `token`.
  case reply(RequestToken, Result<EngineAnswer, ProtocolError>)
}
