// SPDX-License-Identifier: Apache-2.0
@testable import ActiondCore

/// What a test records of the engine's effects, one method per effect (the shape the
/// engine's output port had before its effects became data, so the tests read as they did).
protocol EngineTestOutput: AnyObject {
  func announce(_ event: Event)
  func log(_ level: LogLevel, _ message: String)
  func armTimer(at deadline: MonotonicInstant?)
  func runIntent(_ job: ControlEngine.PerformJob)
  func prepareIntent(_ job: ControlEngine.PerformJob)
  func readValue(_ job: ControlEngine.ValueReadJob)
  /// Throws to make the save fail (a full disk): the engine then undoes the change.
  func persist(_ state: StateSnapshot) throws(ProtocolError)
  func buttonMoment(_ moment: EventName, button: String)
  func holdValueChanged(button: String, isOn: Bool?)
}

extension EngineTestOutput {
  func prepareIntent(_ job: ControlEngine.PerformJob) {}
  func buttonMoment(_ moment: EventName, button: String) {}
  func holdValueChanged(button: String, isOn: Bool?) {}
}

/// The pure engine driven alone, as the daemon's interpreter drives it but with no I/O:
/// each call is one input; its effects go to `output` in the order the engine produced
/// them, a save the engine waits for is answered at once (with the recorder's error, if
/// it throws), replies go to the caller's completion.
final class EngineHarness {
  private(set) var engine: ControlEngine
  let output: any EngineTestOutput
  private var replies: [UInt64: (Result<EngineAnswer, ProtocolError>) -> Void] = [:]
  private var nextToken: UInt64 = 1

  init(configuration: Configuration, state: StateSnapshot = .empty, output: any EngineTestOutput) {
    self.engine = ControlEngine(configuration: configuration, state: state)
    self.output = output
    carryOut(engine.takeEffects())
  }

  /// Hands `input` to the engine and carries its effects out.
  func handle(_ input: EngineInput) { carryOut(engine.handle(input)) }

  private func carryOut(_ effects: [EngineEffect]) {
    for effect in effects {
      switch effect {
      case .startCommand(let job): output.runIntent(job)
      case .prepareCommand(let job): output.prepareIntent(job)
      case .discardPrepared: break
      case .announce(let event): output.announce(event)
      case .log(let level, let message): output.log(level, message)
      case .feedback(let moment, let button): output.buttonMoment(moment, button: button)
      case .holdValue(let button, let isOn): output.holdValueChanged(button: button, isOn: isOn)
      case .armTimer(let deadline): output.armTimer(at: deadline)
      case .readValue(let job): output.readValue(job)
      case .save(let state, let token):
        var failure: ProtocolError?
        do throws(ProtocolError) { try output.persist(state) } catch { failure = error }
        if let token { handle(.saved(token, failure)) }
      case .reply(let token, let result): replies.removeValue(forKey: token.rawValue)?(result)
      }
    }
  }

  /// Submits `request`; the answer goes to `reply` (nil: nobody waits).
  func request(_ request: EngineRequest, reply: ((Result<EngineAnswer, ProtocolError>) -> Void)? = nil) {
    guard let reply else {
      handle(.request(request, token: nil))
      return
    }
    let token = nextToken
    nextToken += 1
    replies[token] = reply
    handle(.request(request, token: RequestToken(rawValue: token)))
  }

  /// Submits `request` and returns its answer, which must come at once.
  private func answerNow(_ request: EngineRequest) throws(ProtocolError) -> EngineAnswer {
    var answer: Result<EngineAnswer, ProtocolError>?
    self.request(request) { answer = $0 }
    guard let answer else { throw ProtocolError(.internal, "no immediate answer to \(request)") }
    return try answer.get()
  }

  private static func control(_ result: Result<EngineAnswer, ProtocolError>) -> Result<ControlSnapshot, ProtocolError> {
    result.flatMap { answer in
      if case .control(let snapshot) = answer { return .success(snapshot) }
      return .failure(ProtocolError(.internal, "not a control: \(answer)"))
    }
  }

  // MARK: - Inputs, one call each

  func start() { handle(.start) }
  func keyEvent(button: String, code: UInt16, value: Int32, at time: MonotonicInstant) {
    handle(.key(button: button, code: code, value: value, at: time))
  }
  func deadlineReached(at now: MonotonicInstant) { handle(.deadline(at: now)) }
  func deviceBound(button: String, device: String, keyDown: Bool, at time: MonotonicInstant) {
    handle(.deviceAppeared(button: button, keyDown: keyDown, at: time))
  }
  func deviceUnbound(button: String, device: String, at time: MonotonicInstant) {
    handle(.deviceLost(button: button, at: time))
  }
  func resynchronized(button: String, keyDown: Bool, at time: MonotonicInstant) {
    handle(.resynchronized(button: button, keyDown: keyDown, at: time))
  }
  func performFinished(job id: UInt64, _ outcome: ControlEngine.PerformOutcome) {
    handle(.commandFinished(job: id, outcome))
  }
  func valueRead(job id: UInt64, _ value: ControlValue) { handle(.valueRead(job: id, value)) }
  func endMomentaryHolds() { handle(.stopping) }
  func apply(configuration: Configuration, at time: MonotonicInstant) {
    handle(.configuration(engine.generation.next(configuration), at: time))
  }

  func perform(
    _ instance: ControlInstance, button: String?, source: PerformSource,
    completion: ((Result<ControlSnapshot, ProtocolError>) -> Void)?
  ) {
    request(
      .perform(instance, button: button, source: source),
      reply: completion.map { done in { done(EngineHarness.control($0)) } })
  }
  func set(
    _ instance: ControlInstance, to value: Bool, completion: @escaping (Result<ControlSnapshot, ProtocolError>) -> Void
  ) {
    request(.set(instance, to: value)) { completion(EngineHarness.control($0)) }
  }
  @discardableResult
  func assign(
    _ instance: ControlInstance, to button: String, gesture: Gesture = .hold, momentary: Bool = false
  ) throws(ProtocolError) -> ControlSnapshot {
    let answer = try answerNow(.assign(instance, button: button, gesture: gesture, momentary: momentary))
    guard case .assigned(_, let control) = answer else { throw ProtocolError(.internal, "not assigned: \(answer)") }
    return control
  }
  func reload(kind: String?, completion: (() -> Void)? = nil) {
    request(.reload(kind: kind)) { _ in completion?() }
  }
  func refresh(_ instance: ControlInstance) { request(.refresh(instance)) }
  /// `registered` runs when the reply goes out: before the values are asked for.
  func registerProvider(
    _ client: ControlEngine.ProviderClient, kinds: [String], registered: @escaping () -> Void = {}
  ) throws(ProtocolError) {
    var answer: Result<EngineAnswer, ProtocolError>?
    request(.register(client, kinds: kinds)) { result in
      answer = result
      if case .success = result { registered() }
    }
    guard let answer else { throw ProtocolError(.internal, "no immediate answer to register") }
    _ = try answer.get()
  }
  func providerDisconnected(_ client: ControlEngine.ProviderClient) { request(.providerDisconnected(client)) }
  /// `press`: `.failure` says why it could not start (the engine's reply code).
  func simulatePress(
    button: String, _ press: VirtualPress = .short, at time: MonotonicInstant
  ) -> Result<
    Void, ControlEngine.VirtualPressRefusal
  > {
    var result: Result<Void, ControlEngine.VirtualPressRefusal> = .success(())
    request(.press(button: button, press, at: time)) { answer in
      if case .failure(let error) = answer { result = .failure(error.code == .busy ? .keyDown : .unknownButton) }
    }
    return result
  }

  // MARK: - Questions, answered from the engine's value

  var configuration: Configuration { engine.configuration }
  var nextDeadline: MonotonicInstant? { engine.nextDeadline }
  var persistentState: StateSnapshot { engine.persistentState }
  var hasMomentaryOffsPending: Bool { engine.hasMomentaryOffsPending }
  func assignment(of button: String) -> ControlInstance? { engine.assignment(of: button) }
  func assignment(of button: String, gesture: Gesture) -> GestureAssignment? {
    engine.assignment(of: button, gesture: gesture)
  }
  func assignments(of button: String) -> [Gesture: GestureAssignment] { engine.assignments(of: button) }
  func instance(kind: String, configuration json: JSONObject?) throws(ProtocolError) -> ControlInstance {
    try engine.instance(kind: kind, configuration: json)
  }
  func hint(button: String) -> String { engine.hint(button: button) }
  func holdValue(button: String) -> Bool? { engine.holdValue(button: button) }
  func value(of instance: ControlInstance) -> ControlValue { engine.value(of: instance) }
  func snapshot(_ instance: ControlInstance) -> ControlSnapshot? { engine.snapshot(instance) }
  func buttonStatus(_ name: String? = nil, devices: (String) -> [String] = { _ in [] }) -> [ButtonStatus] {
    engine.buttonStatus(name, devices: devices)
  }
  func controlList(kind: String? = nil) -> [ControlSnapshot] { engine.controlList(kind: kind) }
  func provider(of kind: String) -> ControlEngine.ProviderClient? { engine.provider(of: kind) }
  func kinds(providedBy client: ControlEngine.ProviderClient) -> [String] { engine.kinds(providedBy: client) }
}
