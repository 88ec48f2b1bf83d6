// SPDX-License-Identifier: Apache-2.0
/// The assignment table: what each gesture of each button performs now. The
/// configuration file's assignments, overridden by run-time ones (`assign`, persisted in
/// the state), until the operator edits that gesture's assignment in the file again.
/// Pure bookkeeping: the engine announces what changes.
struct AssignmentTable {
  /// What each button's gestures perform now (file or run time): button → gesture → assignment.
  private(set) var current: [String: [Gesture: GestureAssignment]] = [:]
  /// The run-time assignments, as persisted: button → gesture → assignment.
  private(set) var runtime: [String: [Gesture: StateSnapshot.Assignment]]

  /// The run-time assignments restored from the state; ``resolve(_:)`` makes them current.
  init(restoring runtime: [String: [Gesture: StateSnapshot.Assignment]]) {
    self.runtime = runtime
  }

  /// What `gesture` of `button` performs now, if anything.
  func assignment(of button: String, gesture: Gesture) -> GestureAssignment? { current[button]?[gesture] }

  /// Every gesture `button` has an assignment for (empty: unassigned or no such button).
  func assignments(of button: String) -> [Gesture: GestureAssignment] { current[button] ?? [:] }

  /// The gestures beyond the hold `button` listens for: those with a control assigned.
  func gestureSet(button: String) -> GestureSet {
    var set: GestureSet = []
    if current[button]?[.doublePress] != nil { set.insert(.doublePress) }
    if current[button]?[.longHold] != nil { set.insert(.longHold) }
    return set
  }

  /// The instances assigned to any gesture, in `configuration`'s button order (per
  /// button: hold, doublePress, longHold), each once.
  func assignedInstances(_ configuration: Configuration) -> [ControlInstance] {
    var seen = Set<String>()
    var out: [ControlInstance] = []
    for b in configuration.buttons {
      for gesture in Gesture.allCases {
        guard let i = current[b.name]?[gesture]?.instance, seen.insert(i.id).inserted else { continue }
        out.append(i)
      }
    }
    return out
  }

  /// The buttons where `instance` is assigned to any gesture (a `state` event's `buttons`).
  func buttons(showing instance: ControlInstance, in configuration: Configuration) -> [String] {
    configuration.buttons.map(\.name).filter { name in
      current[name]?.values.contains { $0.instance.id == instance.id } ?? false
    }
  }

  /// What a run-time assignment replaced, to be put back if it cannot be saved.
  struct Undo {
    fileprivate var button: String
    fileprivate var runtime: [Gesture: StateSnapshot.Assignment]?
    fileprivate var current: [Gesture: GestureAssignment]?
  }

  /// `assignment` becomes what `gesture` of `button` performs, at run time; it remembers
  /// the file's assignment it replaces (``resolve(_:)`` drops it once the file changes).
  mutating func assign(
    _ assignment: GestureAssignment, to button: String, gesture: Gesture, in configuration: Configuration
  ) -> Undo {
    let undo = Undo(button: button, runtime: runtime[button], current: current[button])
    var stored = StateSnapshot.Assignment(assignment)
    stored.replaces = configuration.assignment(of: button, gesture: gesture).map(StateSnapshot.Replaced.init)
    runtime[button, default: [:]][gesture] = stored
    current[button, default: [:]][gesture] = assignment
    return undo
  }

  /// Puts back what ``assign(_:to:gesture:in:)`` replaced.
  mutating func undo(_ undo: Undo) {
    (runtime[undo.button], current[undo.button]) = (undo.runtime, undo.current)
  }

  /// Resolves every button's gestures against `configuration`: a run-time assignment
  /// stays while the file's assignment it replaced is unchanged and it still fits;
  /// otherwise the file's applies. Returns the log lines saying what was dropped and
  /// the table before (to announce what changed).
  mutating func resolve(
    _ configuration: Configuration
  ) -> (previous: [String: [Gesture: GestureAssignment]], log: [(LogLevel, String)]) {
    var log: [(LogLevel, String)] = []
    var resolved: [String: [Gesture: GestureAssignment]] = [:]
    for button in configuration.buttons {
      var stored = runtime[button.name] ?? [:]
      for gesture in Gesture.allCases {
        let fromFile = configuration.assignment(of: button.name, gesture: gesture)
        let subject = gesture == .hold ? "button \(button.name)" : "button \(button.name) \(gesture)"
        if let run = stored[gesture] {
          // The operator edited this gesture's assignment in the file since the run-time
          // assignment was made: the file wins again.
          if run.replaces != fromFile.map(StateSnapshot.Replaced.init) {
            stored[gesture] = nil
            log.append((.notice, "\(subject): the configuration file's assignment replaces the run-time one"))
          } else if let definition = configuration.control(kind: run.kind),
            !run.momentary || (gesture == .hold && definition.type == .toggle),
            let instance = try? ControlInstance(
              definition: definition,
              configuration: JSONObject(run.configuration.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
          {
            resolved[button.name, default: [:]][gesture] = GestureAssignment(
              instance: instance, momentary: run.momentary)
            continue
          } else {
            stored[gesture] = nil
            log.append(
              (.warning, "\(subject): stored assignment \(run.kind) no longer fits the configuration; dropped"))
          }
        }
        if let fromFile { resolved[button.name, default: [:]][gesture] = fromFile }
      }
      runtime[button.name] = stored.isEmpty ? nil : stored
    }
    runtime = runtime.filter { configuration.button(named: $0.key) != nil }
    let previous = current
    current = resolved
    return (previous, log)
  }
}
