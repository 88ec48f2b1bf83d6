// SPDX-License-Identifier: Apache-2.0
/// Whether this process can read one input event node, and if not, why: the facts the
/// Linux side gathers (`open`, `stat`, the group database), as plain data so the
/// explanations built from them are testable without devices.
public struct InputNodeAccess: Hashable, Sendable {
  /// The node, `/dev/input/event3`.
  public var path: String
  /// nil: it opened. Otherwise the errno name (`EACCES`, `EPERM`, `ENODEV`, ...).
  public var error: String?
  /// The node's group, by name when the group database has it (else the gid as text).
  public var group: String
  /// The node's permission bits (`0o660`).
  public var mode: UInt32
  /// Whether this process carries the node's group (effective or supplementary).
  public var processInGroup: Bool
  /// Whether the group database lists the user in the node's group (it may while the
  /// process does not: added with `usermod -aG` and not logged in again).
  public var userListedInGroup: Bool

  public init(
    path: String, error: String? = nil, group: String = "input", mode: UInt32 = 0o660, processInGroup: Bool = false,
    userListedInGroup: Bool = false
  ) {
    self.path = path
    self.error = error
    self.group = group
    self.mode = mode
    self.processInGroup = processInGroup
    self.userListedInGroup = userListedInGroup
  }

  public var isReadable: Bool { error == nil }
  /// Refused by permissions (not by the device).
  public var isDenied: Bool { error == "EACCES" || error == "EPERM" }
}

/// Every input event node as this process sees it, and who it runs as.
public struct InputAccessReport: Hashable, Sendable {
  /// The user name (or uid as text).
  public var user: String
  public var isRoot: Bool
  public var nodes: [InputNodeAccess]

  public init(user: String, isRoot: Bool, nodes: [InputNodeAccess]) {
    self.user = user
    self.isRoot = isRoot
    self.nodes = nodes
  }

  public var readable: [InputNodeAccess] { nodes.filter(\.isReadable) }
  public var denied: [InputNodeAccess] { nodes.filter(\.isDenied) }

  /// Why the denied nodes are denied, in one clause: `9 of 9 input devices belong to group
  /// input (mode 0660) and alice is not in it`. nil when none is denied.
  public var deniedClause: String? {
    let denied = self.denied
    guard let first = denied.first else { return nil }
    let groups = Set(denied.map(\.group))
    let modes = Set(denied.map(\.mode))
    let owner =
      groups.count == 1
      ? "group \(first.group) (mode \(modes.count == 1 ? octal(first.mode) : "mixed"))"
      : "groups \(groups.sorted().joined(separator: ", "))"
    let whose = "\(denied.count) of \(nodes.count) input devices (/dev/input/event*) belong to \(owner)"
    if denied.allSatisfy({ $0.processInGroup }) {
      return "\(whose), and \(user) is in it but they deny reading (a mode without group read)"
    }
    if groups.count == 1 && denied.allSatisfy({ $0.userListedInGroup && !$0.processInGroup }) {
      return "\(whose): \(user) was added to \(first.group) but this login is not in it yet (log in again)"
    }
    return "\(whose) and \(user) is not in \(groups.count == 1 ? "it" : "them")"
  }

  /// Why `actiond learn` has nothing to read, and what fixes it (several sentences).
  /// `learn` is the command as the user typed it (`actiond learn`).
  public func nothingReadable(learn: String) -> String {
    guard !nodes.isEmpty else {
      return "no input device: /dev/input has no event* node. Plug the button in and run `\(learn)` again; "
        + "in a container, pass /dev/input through."
    }
    var text = "no input device is readable by \(user)"
    if let clause = deniedClause {
      text += ": \(clause)."
      let group = denied[0].group
      text += " Run `sudo \(learn)` once to learn the button, or `sudo usermod -aG \(group) \(user)` and log in again."
      text +=
        " Then the udev rule learn prints, ending with TAG+=\"uaccess\" (--uaccess), lets the desktop's"
        + " active user read that one device and no other."
    } else {
      let errors = Set(nodes.compactMap(\.error)).sorted().joined(separator: ", ")
      text += ": opening every /dev/input/event* failed (\(errors))."
    }
    return text
  }

  /// What the daemon says, at start, about a button no device matches: one sentence of
  /// what is missing and the command that fixes it. `learn` is the learn command with the
  /// daemon's own path (`/usr/bin/actiond learn`).
  public func waitingAdvice(tag: String?, learn: String) -> String {
    let present = nodes.count
    guard present > 0 else {
      return "no input device is present (/dev/input has no event* node): plug the button in"
    }
    if let clause = deniedClause, !isRoot {
      let group = denied[0].group
      return "\(clause): run `sudo \(learn) --uaccess` and press the button, then install the udev rule it prints "
        + "(or `sudo usermod -aG \(group) \(user)` and log in again)"
    }
    let matched = tag.map { " none tagged \($0) by udev," } ?? ""
    return "\(readable.count) of \(present) input devices are readable,\(matched) and none matches: run `\(learn)` "
      + "and press the button: it prints the configuration and the udev rule that bind it"
  }
}

func octal(_ mode: UInt32) -> String {
  let s = String(mode & 0o7777, radix: 8)
  return String(repeating: "0", count: max(0, 4 - s.count)) + s
}
