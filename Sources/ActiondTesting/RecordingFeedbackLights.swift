// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux

/// A recording fake of the lights, for daemon tests: every write of every light, in
/// order, as `"<label> on|off|release"`, and lights that fail on demand.
public final class RecordingFeedbackLights: FeedbackLightFactory {
  /// Every write so far.
  public private(set) var writes: [String] = []
  /// Labels of lights whose writes fail (an LED that went away).
  public var failing: Set<String> = []
  /// Called with each write as it is recorded (what else has happened by then).
  public var onWrite: ((String) -> Void)?

  public init() {}

  /// A recorded light's label: `led LED_CAPSL@action`, `sysfs ACT@action`.
  public func light(for output: FeedbackOutput, button: String) -> any FeedbackLight {
    Light(label: "\(output.light)@\(button)", owner: self)
  }

  private func record(_ write: String) {
    writes.append(write)
    onWrite?(write)
  }

  private final class Light: FeedbackLight {
    let label: String
    unowned let owner: RecordingFeedbackLights
    var taken = false
    init(label: String, owner: RecordingFeedbackLights) {
      self.label = label
      self.owner = owner
    }
    func set(_ on: Bool) throws(FeedbackLightError) -> Bool {
      owner.record("\(label) \(on ? "on" : "off")")
      if owner.failing.contains(label) { throw FeedbackLightError("no such device") }
      taken = true
      return true
    }
    func release() throws(FeedbackLightError) -> Bool {
      guard taken else { return false }
      taken = false
      owner.record("\(label) release")
      return true
    }
  }
}
