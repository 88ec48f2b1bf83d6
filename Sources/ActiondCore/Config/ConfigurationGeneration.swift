// SPDX-License-Identifier: Apache-2.0
/// One loaded configuration, as every part of the daemon reads it: the engine, the input
/// layer, the feedback lights and the effects' interpreter are all handed this same
/// immutable value in one call (``ControlEngine`` through
/// ``EngineInput/configuration(_:at:)``), so none of them keeps its own copy to be kept in
/// step with the others. `number` counts the generations since start (1 for the first):
/// log lines and tests can tell which one a part is on.
public struct ConfigurationGeneration: Hashable, Sendable {
  /// 1 for the configuration loaded at start, one more for every reload that applied.
  public let number: UInt64
  public let configuration: Configuration
  /// The names of the buttons whose entry did not change since the previous generation:
  /// they keep their recognizer and their device, so a press in progress on
  /// them goes on (``Configuration/unchangedButtons(since:)``). Empty for the first.
  public let unchangedButtons: Set<String>

  /// The first generation: the configuration loaded at start.
  public init(first configuration: Configuration) {
    self.number = 1
    self.configuration = configuration
    self.unchangedButtons = []
  }

  /// The generation after this one, on `configuration`.
  public func next(_ configuration: Configuration) -> ConfigurationGeneration {
    ConfigurationGeneration(
      number: number + 1, configuration: configuration,
      unchangedButtons: configuration.unchangedButtons(since: self.configuration))
  }

  private init(number: UInt64, configuration: Configuration, unchangedButtons: Set<String>) {
    self.number = number
    self.configuration = configuration
    self.unchangedButtons = unchangedButtons
  }
}
