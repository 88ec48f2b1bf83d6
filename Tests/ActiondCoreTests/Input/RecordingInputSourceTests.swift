// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondTesting
import Testing

@Suite struct RecordingInputSourceTests {
  struct StartFailed: Error, Equatable {}

  @Test func recordsCallsAndDeliversEventsAsADeviceWould() throws {
    let source = RecordingInputSource()
    var seen: [String] = []
    source.onEvent = { event in
      if case .key(let button, _, let value, let at) = event { seen.append("\(button)=\(value)@\(at)") }
    }
    source.startError = StartFailed()
    #expect(throws: StartFailed()) { try source.start([]) }
    let binding = ButtonBinding(name: "action", keyCode: 148, matches: { _ in true })
    try source.start([binding])
    source.pendingOnDrain["action"] = [
      .key(button: "action", code: 148, value: 0, at: MonotonicInstant(nanoseconds: 5_000_000))
    ]
    source.drain(button: "action")
    source.drain(button: "action")
    source.emit(.key(button: "action", code: 148, value: 1, at: MonotonicInstant(nanoseconds: 7_000_000)))
    source.reconfigure([])
    source.shutdown()
    #expect(seen == ["action=0@5ms", "action=1@7ms"])
    #expect(
      source.calls == [
        .start([]), .start(["action"]), .drain(button: "action"), .drain(button: "action"), .reconfigure([]), .shutdown,
      ])
    #expect(source.bindings.isEmpty)
  }
}

@Suite struct ButtonBindingTests {
  @Test func aConfiguredButtonBindsItsKeyGrabAndMatch() {
    let button = ButtonConfig(name: "action", keyCode: 148, match: DeviceMatch(tags: ["actiond"]), grab: true)
    let binding = ButtonBinding(button)
    #expect(binding.name == "action" && binding.keyCode == 148 && binding.grab)
    let tagged = InputDeviceInfo(syspath: "/sys/x/event3", devnode: "/dev/input/event3", name: "k", tags: ["actiond"])
    var untagged = tagged
    untagged.tags = []
    #expect(binding.matches(tagged))
    #expect(!binding.matches(untagged))
  }
}
