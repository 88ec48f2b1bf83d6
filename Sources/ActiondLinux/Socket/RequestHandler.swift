// SPDX-License-Identifier: Apache-2.0
import ActiondCore

/// Identifies one connection for the lifetime of the server; never reused, so a late
/// reply or provider request for a closed connection reaches nothing.
public struct ClientID: Hashable, Sendable, CustomStringConvertible {
  public let rawValue: UInt64
  public var description: String { "client \(rawValue)" }
  package init(rawValue: UInt64) { self.rawValue = rawValue }
}

/// A connected client, as the handler sees it.
public struct ClientInfo: Hashable, Sendable {
  public var id: ClientID
  public var credentials: PeerCredentials
  /// True when the client may send mutating requests (root, control group or control user).
  public var canControl: Bool
}

/// What a provider answered to a daemon request (see ``ControlServer/sendProviderRequest(to:_:timeout:completion:)``).
public enum ProviderOutcome: Hashable, Sendable {
  /// The provider's `result` object (for `value`: `{"value": true|false}`).
  case replied(JSONObject)
  /// The provider reported an error.
  case failed(ProtocolError)
  /// No answer within the timeout; a late answer is rejected with `unknown-id`.
  case timedOut
  /// The provider's connection closed (or was never there) before it answered.
  case disconnected
}

/// The daemon side of the socket: `RequestRouter` implements it, over the engine and the
/// input source.
///
/// The server itself answers `ping`, `version`, `subscribe` and `unsubscribe`, checks
/// access for mutating requests, and hands every other request to ``handle(_:from:reply:)``.
/// Everything runs on the event loop thread.
public protocol RequestHandler: AnyObject {
  /// Per button: the assigned control with its state and hint, for `hello`.
  func snapshot() -> [ButtonStatus]
  /// Handles a request. Reply exactly once through `reply`, now or later (a `perform`
  /// replies after its intent finished). Requests that reach the handler:
  /// `status`, `list`, `get`, `assign`, `set`, `perform`, `press`, `reload`, `devices`,
  /// `register` (mutating ones only from clients with `canControl`).
  func handle(_ request: Request, from client: ClientInfo, reply: Responder)
  /// The connection closed. Kinds it registered as provider are no longer provided;
  /// pending provider requests to it have already completed with `.disconnected`.
  func clientDisconnected(_ client: ClientInfo)
}

/// The one-shot answer channel for one request. Replying after the client vanished
/// is harmless (the reply is dropped). A responder released without a reply answers
/// `internal`, so a client never waits forever because of a daemon bug.
public final class Responder {
  public let request: Request
  public let client: ClientInfo
  private weak var server: ControlServer?
  public private(set) var isCompleted = false

  init(request: Request, client: ClientInfo, server: ControlServer) {
    self.request = request
    self.client = client
    self.server = server
  }

  /// Whether the requesting connection is still open (work may be skipped if not).
  public var isClientConnected: Bool { server?.isConnected(client.id) ?? false }

  public func succeed(_ result: ReplyResult) {
    complete(.reply(Reply(id: request.id, request: request.name, result: result)))
  }

  public func fail(_ error: ProtocolError) {
    complete(.error(id: request.id, error))
  }

  private func complete(_ message: ServerMessage) {
    guard !isCompleted else {
      assertionFailure("request \(request.name) from \(client.id) answered twice")
      return
    }
    isCompleted = true
    server?.finishRequest(for: client.id, with: message)
  }

  deinit {
    if !isCompleted {
      isCompleted = true
      server?.finishRequest(
        for: client.id,
        with: .error(
          id: request.id, ProtocolError(.internal, "the daemon dropped request \"\(request.name)\" without an answer")))
    }
  }
}
