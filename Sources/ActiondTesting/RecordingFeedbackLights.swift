// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux

/// A recording fake of the lights, for daemon tests: every write of every light, in
/// order, as `"<label> on|off|release"`, and lights that fail on demand. A `sysfs` light
/// behaves as a real one does about time: its first write takes it (not quick,
/// ``FeedbackLight/isQuick(_:)``) unless it was taken at its press's key-down
/// (``FeedbackLight/prepare()``, which records nothing: it shows what it showed).
public final class RecordingFeedbackLights: FeedbackLightFactory {
  /// Every write so far.
  public private(set) var writes: [String] = []
  /// Labels of lights whose writes fail (an LED that went away).
  public var failing: Set<String> = []
  /// Called with each write as it is recorded (what else has happened by then).
  public var onWrite: ((String) -> Void)?
  /// Whether `sysfs` lights take themselves at a key-down (false: as a real one whose
  /// take failed then, the threshold's first write takes it).
  public var takesAtKeyDown = true

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
    func prepare() throws(FeedbackLightError) -> Bool {
      guard label.hasPrefix("sysfs"), owner.takesAtKeyDown, !taken else { return false }
      taken = true
      return true
    }
    func isQuick(_ write: FeedbackScheduler.Write) -> Bool {
      !label.hasPrefix("sysfs") || (write == .release) != taken
    }
    func release() throws(FeedbackLightError) -> Bool {
      guard taken else { return false }
      taken = false
      owner.record("\(label) release")
      return true
    }
  }
}
