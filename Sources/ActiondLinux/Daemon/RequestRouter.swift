import ActiondCore

/// The socket's requests, routed to the engine: the ``RequestHandler`` the control server
/// hands every request it does not answer itself. It checks names and shapes, asks the
/// engine, and replies; what a request does is the engine's to decide.
final class RequestRouter {
  private let engine: ControlEngine
  private let effects: EngineEffects
  private let input: any InputSource
  private let loop: EventLoop
  private let logger: Logger
  /// The devices bound now, as announced (the daemon keeps them from the input events).
  var devices: () -> [DeviceSnapshot] = { [] }
  /// `weak`: the server holds this router (weakly, as its handler) and the daemon holds
  /// both; set once the server is made, which needs this router first.
  weak var server: ControlServer?

  init(engine: ControlEngine, effects: EngineEffects, input: any InputSource, loop: EventLoop, logger: Logger) {
    self.engine = engine
    self.effects = effects
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
    case .assign(let button, let kind, let configuration):
      try requireButton(button)
      let instance = try engine.instance(kind: kind, configuration: configuration)
      _ = try engine.assign(instance, to: button)
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
      guard let instance = engine.assignment(of: button) else {
        throw ProtocolError(.unassigned, "no control is assigned to \(button)")
      }
      engine.perform(instance, button: button, source: .socket) { RequestRouter.answer(reply, with: $0) }
    case .perform(.control(let kind, let configuration)):
      let instance = try engine.instance(kind: kind, configuration: configuration)
      engine.perform(instance, button: nil, source: .socket) { RequestRouter.answer(reply, with: $0) }
    case .press(let button):
      try requireButton(button)
      engine.simulatePress(button: button, at: loop.now())
      reply.succeed(.button(engine.buttonStatus(button, devices: buttonDevices)[0]))
    case .reload(let kind):
      if let kind { try requireKind(kind) }
      engine.reload(kind: kind) { [unowned self] in reply.succeed(.controls(self.engine.controlList(kind: kind))) }
    case .devices:
      reply.succeed(.devices(devices().sorted { $0.devnode < $1.devnode }))
    case .register(let kinds):
      guard !kinds.isEmpty else { throw ProtocolError(.badRequest, "register needs at least one kind") }
      for kind in kinds {
        guard let definition = configuration.control(kind: kind) else {
          throw ProtocolError(.unknownKind, "no control of kind \"\(kind)\"")
        }
        var usesProvider = false
        if case .provider = definition.intent { usesProvider = true }
        if case .provider? = definition.value { usesProvider = true }
        guard usesProvider else {
          throw ProtocolError(.notProvider, "\(kind) has no `provider` intent or value provider")
        }
        if let other = effects.providers[kind], other != client.id, server?.isConnected(other) == true {
          throw ProtocolError(.alreadyRegistered, "another client already provides \(kind)")
        }
      }
      for kind in kinds { effects.providers[kind] = client.id }
      logger.notice("\(client.id) is now the provider for \(kinds.joined(separator: ", "))", event: "provider")
      reply.succeed(.registered(kinds: kinds))
      engine.providerConnected(kinds: kinds)
    case .subscribe, .unsubscribe, .ping, .version:
      // The server answers these itself.
      throw ProtocolError(.internal, "request handled by the server")
    }
  }

  func clientDisconnected(_ client: ClientInfo) {
    let kinds = effects.providers.filter { $0.value == client.id }.map(\.key).sorted()
    guard !kinds.isEmpty else { return }
    for kind in kinds { effects.providers[kind] = nil }
    logger.notice("provider for \(kinds.joined(separator: ", ")) disconnected", event: "provider")
    engine.providerDisconnected(kinds: kinds)
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
