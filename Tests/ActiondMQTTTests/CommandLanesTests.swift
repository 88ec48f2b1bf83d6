// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ActiondCore
@testable import ActiondMQTT

private func command(_ control: String, _ payload: String, at ms: Int64 = 0) -> HeldCommand {
  HeldCommand(
    topic: "actiond/pi/control/\(control)/set", payload: Array(payload.utf8),
    at: MonotonicInstant(nanoseconds: ms * 1_000_000))
}

@Suite struct CommandLanesTests {
  @Test func aCommandOnAnotherControlDoesNotWaitForASlowOne() {
    var lanes = CommandLanes(capacity: 8)
    let a1 = lanes.arrive(command("a", "ON"))
    // `a`'s intent runs (a script taking seconds): `b`'s command starts at once all the same.
    let b1 = lanes.arrive(command("b", "PRESS"))
    let a2 = lanes.arrive(command("a", "OFF"))
    #expect(a1 == .start && b1 == .start && a2 == .queued)
    let afterB = lanes.finish(lane: CommandLanes.lane(of: command("b", "PRESS")))
    #expect(afterB == nil)
    #expect(!lanes.isBusy(CommandLanes.lane(of: command("b", ""))))
    #expect(lanes.isBusy(CommandLanes.lane(of: command("a", ""))))
    let b2 = lanes.arrive(command("b", "PRESS"))
    #expect(b2 == .start)
    let afterA = lanes.finish(lane: CommandLanes.lane(of: command("a", "")))
    #expect(afterA == command("a", "OFF"))
    let idle = lanes.finish(lane: CommandLanes.lane(of: command("a", "")))
    #expect(idle == nil && !lanes.isBusy(CommandLanes.lane(of: command("a", ""))))
  }

  @Test func oneControlsCommandsAreCarriedOutInTheOrderTheyCame() {
    var lanes = CommandLanes(capacity: 8)
    let first = lanes.arrive(command("a", "ON", at: 1))
    #expect(first == .start)
    var arrivals: [CommandLanes.Arrival] = []
    for (i, p) in ["OFF", "ON", "OFF"].enumerated() { arrivals.append(lanes.arrive(command("a", p, at: Int64(i) + 2))) }
    arrivals.append(lanes.arrive(command("b", "ON", at: 9)))
    #expect(arrivals == [.queued, .queued, .queued, .start])
    #expect(lanes.waitingCount == 3)
    var order: [HeldCommand] = []
    while let next = lanes.finish(lane: CommandLanes.lane(of: command("a", ""))) { order.append(next) }
    #expect(order == [command("a", "OFF", at: 2), command("a", "ON", at: 3), command("a", "OFF", at: 4)])
    #expect(lanes.waitingCount == 0)
  }

  @Test func atMostCapacityWaitOverAllLanes() {
    var lanes = CommandLanes(capacity: 2)
    var arrivals: [CommandLanes.Arrival] = []
    for c in [command("a", "ON"), command("b", "ON"), command("a", "OFF"), command("b", "OFF"), command("a", "ON")] {
      arrivals.append(lanes.arrive(c))
    }
    // Two start, two wait, the fifth is refused; a command that need not wait still starts.
    #expect(arrivals == [.start, .start, .queued, .queued, .full])
    let c = lanes.arrive(command("c", "ON"))
    #expect(c == .start)
    let next = lanes.finish(lane: CommandLanes.lane(of: command("a", "")))
    #expect(next == command("a", "OFF"))
    let again = lanes.arrive(command("b", "ON"))
    #expect(again == .queued)
  }

  @Test func drainingGivesTheWaitingCommandsInArrivalOrderAndFreesEveryLane() {
    var lanes = CommandLanes(capacity: 8)
    for c in [
      command("a", "ON", at: 1), command("a", "OFF", at: 2), command("b", "ON", at: 3), command("b", "OFF", at: 4),
      command("a", "ON", at: 5),
    ] { _ = lanes.arrive(c) }
    let drained = lanes.drain()
    // The two being carried out (a ON at 1, b ON at 3) are not among them.
    #expect(drained == [command("a", "OFF", at: 2), command("b", "OFF", at: 4), command("a", "ON", at: 5)])
    #expect(lanes.waitingCount == 0)
    let a = lanes.arrive(command("a", "OFF"))
    let b = lanes.arrive(command("b", "OFF"))
    #expect(a == .start && b == .start)
  }
}
