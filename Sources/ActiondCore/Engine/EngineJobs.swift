// SPDX-License-Identifier: Apache-2.0
/// The data the engine hands the daemon with its effects, and gets back with its inputs:
/// commands to run (``ControlEngine/PerformJob``), values to read, provider clients, how a
/// command ended.
extension ControlEngine {
  /// A perform handed to the daemon: run `intent` (already parameter-substituted).
  public struct PerformJob: Hashable, Sendable {
    public let id: UInt64
    public let kind: String
    public let instance: ControlInstance
    public let intent: IntentSpec
    public let controlType: ControlType
    /// For toggles, the requested new value (`ACTIOND_VALUE`).
    public let requestedValue: Bool?
    /// The button whose hold caused it; nil for socket performs.
    public let button: String?
    public let source: PerformSource
    /// For a button gesture, the kernel's timestamp of the key-down of the press that
    /// performed (for a double press, the second one): the identity of the gesture
    /// (`ACTIOND_PRESS_TIME`). nil for socket performs.
    public let pressTime: MonotonicInstant?
    /// The button gesture that performed it (`ACTIOND_GESTURE`); nil for socket performs.
    public let gesture: Gesture?
    /// The off of a momentary toggle whose press ended: a stop lets it finish.
    public var endsMomentaryHold = false

    /// Whether `other` does exactly what this job does (the same intent, value and
    /// environment), whatever the ids: a job prepared at key-down against the hold's.
    public func performsTheSame(as other: PerformJob) -> Bool {
      kind == other.kind && instance == other.instance && intent == other.intent && controlType == other.controlType
        && requestedValue == other.requestedValue && button == other.button && source == other.source
        && pressTime == other.pressTime && gesture == other.gesture && endsMomentaryHold == other.endsMomentaryHold
    }

    /// The environment contract of exec intents: `ACTIOND_KIND`, `ACTIOND_BUTTON`,
    /// `ACTIOND_GESTURE` (`hold`, `doublePress`, `longHold`), `ACTIOND_PRESS_TIME` (the
    /// performing press's key-down, CLOCK_MONOTONIC in microseconds: the `time` of its
    /// `pressed` or `double-pressed` event), `ACTIOND_VALUE` (toggles: 1 or 0) and one
    /// `ACTIOND_PARAM_<NAME>` per parameter.
    public var environment: [String: String] {
      var env = instance.parameterEnvironment
      env["ACTIOND_KIND"] = kind
      env["ACTIOND_INSTANCE"] = instance.id
      if let button { env["ACTIOND_BUTTON"] = button }
      if let gesture { env["ACTIOND_GESTURE"] = gesture.rawValue }
      if let pressTime { env["ACTIOND_PRESS_TIME"] = String(pressTime.microseconds) }
      if let requestedValue { env["ACTIOND_VALUE"] = requestedValue ? "1" : "0" }
      return env
    }
  }

  /// A value read handed to the daemon: run `provider` (exec, file or provider) and
  /// report with `valueRead(id:_:)`.
  public struct ValueReadJob: Hashable, Sendable {
    public let id: UInt64
    public let kind: String
    public let instance: ControlInstance
    public let provider: ValueProviderSpec
  }

  /// A connected client application that provides kinds (a socket connection), as the
  /// daemon identifies it. Opaque here: the engine records and compares it, never talks
  /// to it; the daemon sends the provider requests.
  public struct ProviderClient: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "client \(rawValue)" }
  }

  /// How an intent ended, as the daemon saw it.
  public enum PerformOutcome: Hashable, Sendable {
    case succeeded
    /// `reason` is for people ("exited with status 3", "timed out after 10s").
    case failed(code: ProtocolErrorCode, reason: String)
  }

  /// Why a `press` could not start.
  public enum VirtualPressRefusal: Error, Hashable, Sendable {
    case unknownButton
    /// The button's key is down (a real key, or another virtual press is in progress):
    /// a second key-down would be no press at all.
    case keyDown
  }
}
