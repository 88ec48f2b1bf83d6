// SPDX-License-Identifier: Apache-2.0
import ActiondCore
import ActiondLinux

/// The socket's requests, routed to the engine: the ``RequestHandler`` the control server
/// hands every request it does not answer itself. It checks names and shapes, answers
/// questions from the engine's value, submits the requests that change something
/// (``EngineRequest``) through the interpreter, and replies with the engine's answer;
/// what a request does is the engine's to decide.
///
/// Keeps no state of its own: the configuration and the providers are the engine's,
/// the bindings and bound devices the input source's. It holds both strongly; neither
/// refers back to it (the server holds it weakly, as its handler), so there is no cycle.
final class RequestRouter {
  private let interpreter: EffectInterpreter
  private var engine: ControlEngine { interpreter.engine }
  private let input: any InputSource
  private let loop: EventLoop
  private let logger: Logger

  init(interpreter: EffectInterpreter, input: any InputSource, loop: EventLoop, logger: Logger) {
    self.interpreter = interpreter
    self.input = input
    self.loop = loop
    self.logger = logger
  }

  /// The devnode serving the button named `name`, as the input source has it.
  private func buttonDevices(_ name: String) -> [String] {
    input.device(forButton: name).map { [$0.devnode ?? $0.syspath] } ?? []
  }
}

extension RequestRouter: RequestHandler {
  func snapshot() -> [ButtonStatus] { engine.buttonStatus(devices: buttonDevices) }

  func handle(_ request: Request, from client: ClientInfo, reply: Responder) {
    do {
      try handle(request.body, client, reply)
    } catch {
      reply.fail(error)
    }
  }

  private func handle(_ body: Request.Body, _ client: ClientInfo, _ reply: Responder) throws(ProtocolError) {
    let configuration = engine.configuration
    switch body {
    case .status(let button):
      if let button { try requireButton(button) }
      reply.succeed(.buttons(engine.buttonStatus(button, devices: buttonDevices)))
    case .list:
      reply.succeed(.controls(engine.controlList()))
    case .get(let kind):
      try requireKind(kind)
      reply.succeed(.controls(engine.controlList(kind: kind)))
    case .assign(let button, let kind, let configuration, let gesture, let momentary):
      try requireButton(button)
      let instance = try engine.instance(kind: kind, configuration: configuration)
      submit(.assign(instance, button: button, gesture: gesture, momentary: momentary), reply)
    case .set(let kind, let value, let configuration):
      let instance = try engine.instance(kind: kind, configuration: configuration)
      submit(.set(instance, to: value), reply)
    case .perform(.button(let name)):
      let button: String
      if let name {
        button = name
      } else if configuration.buttons.count == 1 {
        button = configuration.buttons[0].name
      } else {
        throw ProtocolError(
          .badRequest, "name a button or a kind: \(configuration.buttons.count) buttons are configured")
      }
      try requireButton(button)
      // A button performs its hold's control, as a hold of the key would.
      guard let instance = engine.assignment(of: button) else {
        let others = engine.assignments(of: button).keys.map(\.rawValue).sorted()
        throw ProtocolError(
          .unassigned,
          others.isEmpty
            ? "no control is assigned to \(button)"
            : "no control is assigned to the hold of \(button) (only to \(others.joined(separator: " and ")))")
      }
      submit(.perform(instance, button: button, source: .socket), reply)
    case .perform(.control(let kind, let configuration)):
      let instance = try engine.instance(kind: kind, configuration: configuration)
      submit(.perform(instance, button: nil, source: .socket), reply)
    case .press(let button, let press):
      try requireButton(button)
      // The reply comes at once: the virtual key-up is the engine's to deliver, on its
      // own timer, whether or not the client is still connected.
      submit(.press(button: button, press, at: loop.now()), reply)
    case .reload(let kind):
      if let kind { try requireKind(kind) }
      submit(.reload(kind: kind), reply)
    case .devices:
      reply.succeed(.devices(input.boundDevices.map(DeviceSnapshot.init).sorted { $0.devnode < $1.devnode }))
    case .register(let kinds):
      // The engine checks the kinds and records the registration: it is the one owner of
      // who provides what. Its reply comes before the first value request.
      interpreter.request(.register(ControlEngine.ProviderClient(client.id), kinds: kinds)) { [logger] result in
        if case .success = result {
          logger.notice("\(client.id) is now the provider for \(kinds.joined(separator: ", "))", event: "provider")
        }
        self.answer(reply, with: result)
      }
    case .subscribe, .unsubscribe, .ping, .version:
      // The server answers these itself.
      throw ProtocolError(.internal, "request handled by the server")
    }
  }

  func clientDisconnected(_ client: ClientInfo) {
    let provider = ControlEngine.ProviderClient(client.id)
    let kinds = engine.kinds(providedBy: provider)
    guard !kinds.isEmpty else { return }
    logger.notice("provider for \(kinds.joined(separator: ", ")) disconnected", event: "provider")
    interpreter.submit(.request(.providerDisconnected(provider), token: nil))
  }

  /// Submits `request`; the engine's answer goes to `reply`.
  private func submit(_ request: EngineRequest, _ reply: Responder) {
    interpreter.request(request) { [unowned self] result in self.answer(reply, with: result) }
  }

  /// Replies with the engine's answer: a button's status is completed with its devices
  /// (the input layer's to know).
  private func answer(_ reply: Responder, with result: Result<EngineAnswer, ProtocolError>) {
    switch result {
    case .success(.control(let snapshot)): reply.succeed(.control(snapshot))
    case .success(.button(let button)), .success(.assigned(let button, _)):
      reply.succeed(.button(engine.buttonStatus(button, devices: buttonDevices)[0]))
    case .success(.controls(let controls)): reply.succeed(.controls(controls))
    case .success(.registered(let kinds)): reply.succeed(.registered(kinds: kinds))
    case .success(.done): reply.succeed(.empty)
    case .failure(let error): reply.fail(error)
    }
  }

  private func requireButton(_ name: String) throws(ProtocolError) {
    guard engine.configuration.button(named: name) != nil else {
      throw ProtocolError(.unknownButton, "no button named \"\(name)\"")
    }
  }

  private func requireKind(_ kind: String) throws(ProtocolError) {
    guard engine.configuration.control(kind: kind) != nil else {
      throw ProtocolError(.unknownKind, "no control of kind \"\(kind)\"")
    }
  }
}

extension ControlEngine.ProviderClient {
  /// The engine's opaque value for a socket connection.
  init(_ id: ClientID) { self.init(rawValue: id.rawValue) }
}

extension ClientID {
  /// The socket connection the engine's provider value stands for.
  init(_ provider: ControlEngine.ProviderClient) { self.init(rawValue: provider.rawValue) }
}
