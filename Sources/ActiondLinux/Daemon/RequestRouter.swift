// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// The socket's requests, routed to the engine: the ``RequestHandler`` the control server
/// hands every request it does not answer itself. It checks names and shapes, asks the
/// engine, and replies; what a request does is the engine's to decide.
///
/// Keeps no state of its own: the configuration and the providers are the engine's,
/// the bindings and bound devices the input source's. It holds both strongly; neither
/// refers back to it (the server holds it weakly, as its handler), so there is no cycle.
final class RequestRouter {
  private let engine: ControlEngine
  private let input: any InputSource
  private let loop: EventLoop
  private let logger: Logger

  init(engine: ControlEngine, input: any InputSource, loop: EventLoop, logger: Logger) {
    self.engine = engine
    self.input = input
    self.loop = loop
    self.logger = logger
  }

  /// The devnode serving button `index`, as the input manager has it.
  private func buttonDevices(_ index: Int) -> [String] {
    input.device(forButton: index).map { [$0.devnode ?? $0.syspath] } ?? []
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
      _ = try engine.assign(instance, to: button, gesture: gesture, momentary: momentary)
      reply.succeed(.button(engine.buttonStatus(button, devices: buttonDevices)[0]))
    case .set(let kind, let value, let configuration):
      let instance = try engine.instance(kind: kind, configuration: configuration)
      engine.set(instance, to: value) { RequestRouter.answer(reply, with: $0) }
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
      engine.perform(instance, button: button, source: .socket) { RequestRouter.answer(reply, with: $0) }
    case .perform(.control(let kind, let configuration)):
      let instance = try engine.instance(kind: kind, configuration: configuration)
      engine.perform(instance, button: nil, source: .socket) { RequestRouter.answer(reply, with: $0) }
    case .press(let button, let press):
      try requireButton(button)
      // The reply comes at once: the virtual key-up is the engine's to deliver, on its
      // own timer, whether or not the client is still connected.
      switch engine.simulatePress(button: button, press, at: loop.now()) {
      case .success:
        reply.succeed(.button(engine.buttonStatus(button, devices: buttonDevices)[0]))
      case .failure(.unknownButton):
        throw ProtocolError(.unknownButton, "no button is named \(JSONEncoding.quoted(button))")
      case .failure(.keyDown):
        throw ProtocolError(
          .busy, "button \(button) is down (its key or another press is in progress); press again once it is up")
      }
    case .reload(let kind):
      if let kind { try requireKind(kind) }
      engine.reload(kind: kind) { [unowned self] in reply.succeed(.controls(self.engine.controlList(kind: kind))) }
    case .devices:
      reply.succeed(.devices(input.boundDevices.map(DeviceSnapshot.init).sorted { $0.devnode < $1.devnode }))
    case .register(let kinds):
      // The engine checks the kinds and records the registration: it is the one owner of
      // who provides what.
      try engine.registerProvider(ControlEngine.ProviderClient(client.id), kinds: kinds) { [logger] in
        logger.notice("\(client.id) is now the provider for \(kinds.joined(separator: ", "))", event: "provider")
        reply.succeed(.registered(kinds: kinds))
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
    engine.providerDisconnected(provider)
  }

  /// Answers a `set` or `perform` with the resulting control or the error.
  private static func answer(_ reply: Responder, with result: Result<ControlSnapshot, ProtocolError>) {
    switch result {
    case .success(let snapshot): reply.succeed(.control(snapshot))
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
