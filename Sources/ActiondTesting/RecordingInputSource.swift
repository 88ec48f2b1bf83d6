// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// An ``InputSource`` without devices, for engine and daemon tests: it records the
/// calls made to it and delivers whatever events the test emits.
public final class RecordingInputSource: InputSource {
  /// One call the code under test made.
  public enum Call: Hashable, Sendable {
    /// `start` with the names of the bindings.
    case start([String])
    /// `reconfigure` with the names of the bindings.
    case reconfigure([String])
    case drain(button: String)
    case shutdown
  }

  public var onEvent: (InputEvent) -> Void = { _ in }
  /// Every call, in order.
  public private(set) var calls: [Call] = []
  /// The bindings last given to `start` or `reconfigure`.
  public private(set) var bindings: [ButtonBinding] = []
  /// Which device each button (by name) is bound to; tests set this alongside the events
  /// they emit.
  public var buttonDevices: [String: InputDeviceInfo] = [:]
  /// The devices bound now; tests set this alongside the events they emit.
  public var boundDevices: [BoundInputDevice] = []
  /// Events delivered on the next `drain(button:)` of that button, as a device would.
  public var pendingOnDrain: [String: [InputEvent]] = [:]
  /// Thrown by the next `start`, to test start-up failures.
  public var startError: (any Error)?

  public init() {}

  public func start(_ bindings: [ButtonBinding]) throws {
    calls.append(.start(bindings.map(\.name)))
    if let error = startError {
      startError = nil
      throw error
    }
    self.bindings = bindings
  }

  public func reconfigure(_ bindings: [ButtonBinding], keeping unchanged: Set<String>) {
    calls.append(.reconfigure(bindings.map(\.name)))
    self.bindings = bindings
  }

  public func drain(button: String) {
    calls.append(.drain(button: button))
    for event in pendingOnDrain.removeValue(forKey: button) ?? [] { onEvent(event) }
  }

  public func shutdown() { calls.append(.shutdown) }

  public func device(forButton button: String) -> InputDeviceInfo? { buttonDevices[button] }

  /// Delivers `event` as if a device had produced it.
  public func emit(_ event: InputEvent) { onEvent(event) }
}
