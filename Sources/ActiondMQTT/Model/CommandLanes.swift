// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// The bridge's commands on their way to actiond, one at a time per lane: a lane is one
/// command topic, i.e. one control (its `…/control/<id>/set`) or one button's assignment.
///
/// actiond refuses a perform of a control whose intent is still running (`busy`, not
/// queued), so a second command for the same control waits for the answer to the first,
/// and commands for one control are carried out in the order they came. A command for
/// another control does not wait: a slow intent (a script that takes seconds) delays only
/// its own control's commands. At most ``capacity`` commands wait, over all lanes.
public struct CommandLanes: Sendable {
  /// What to do with a command that arrived (``arrive(_:)``).
  public enum Arrival: Hashable, Sendable {
    /// Its lane was idle and is now busy with it: carry it out now, then ``finish(lane:)``.
    case start
    /// It waits behind its lane's command (``finish(lane:)`` hands it over in turn).
    case queued
    /// ``capacity`` commands already wait: refuse it.
    case full
  }

  /// How many commands wait at most, over all lanes.
  public let capacity: Int
  /// Lanes with a command being carried out.
  private var busy: Set<String> = []
  /// Each lane's waiting commands, oldest first, with their arrival number (for ``drain()``).
  private var waiting: [String: [(sequence: Int, command: HeldCommand)]] = [:]
  private var sequence = 0
  /// How many commands wait, over all lanes.
  public private(set) var waitingCount = 0

  public init(capacity: Int) { self.capacity = capacity }

  /// The lane of a command: its topic.
  public static func lane(of command: HeldCommand) -> String { command.topic }

  /// Whether `lane` has a command being carried out.
  public func isBusy(_ lane: String) -> Bool { busy.contains(lane) }

  /// A command arrived (from the broker, or held until actiond's snapshot).
  public mutating func arrive(_ command: HeldCommand) -> Arrival {
    let lane = Self.lane(of: command)
    guard busy.contains(lane) else {
      busy.insert(lane)
      return .start
    }
    guard waitingCount < capacity else { return .full }
    waiting[lane, default: []].append((sequence, command))
    sequence += 1
    waitingCount += 1
    return .queued
  }

  /// The command being carried out in `lane` is finished (answered, refused, or never
  /// sent): returns the lane's next command, which is now being carried out, or nil (the
  /// lane is idle).
  public mutating func finish(lane: String) -> HeldCommand? {
    guard var queue = waiting[lane], !queue.isEmpty else {
      busy.remove(lane)
      waiting[lane] = nil
      return nil
    }
    let next = queue.removeFirst()
    waiting[lane] = queue.isEmpty ? nil : queue
    waitingCount -= 1
    return next.command
  }

  /// actiond went away: every waiting command, in the order they arrived (over all lanes),
  /// and every lane idle. The commands being carried out are not among them: actiond may
  /// have performed them.
  public mutating func drain() -> [HeldCommand] {
    let all = waiting.values.joined().sorted { $0.sequence < $1.sequence }.map(\.command)
    waiting = [:]
    busy = []
    waitingCount = 0
    return all
  }
}
