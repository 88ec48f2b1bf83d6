// SPDX-License-Identifier: Apache-2.0
/// A stable, machine-readable error code on the wire (`"code": "unknown-kind"`).
///
/// Codes are part of the protocol's compatibility promise: clients switch on them,
/// humans read the `message`. New codes may appear in later daemon versions, so a
/// code is an open set of strings rather than a closed enum; unknown codes decode
/// fine and compare unequal to every constant below.
public struct ProtocolErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  public var rawValue: String
  public init(rawValue: String) { self.rawValue = rawValue }
  public init(_ rawValue: String) { self.rawValue = rawValue }
  public var description: String { rawValue }

  /// The line is not valid JSON (or not UTF-8). The connection stays usable.
  public static let badJSON = ProtocolErrorCode("bad-json")
  /// Valid JSON, but not a valid message: wrong type (`null` included), missing, empty,
  /// duplicate or unexpected field.
  public static let badRequest = ProtocolErrorCode("bad-request")
  /// `request` names no request this daemon knows.
  public static let unknownRequest = ProtocolErrorCode("unknown-request")
  /// A mutating request from a client that is not root, not the daemon's own user, not
  /// in the control group and not in the control user list.
  public static let notPermitted = ProtocolErrorCode("not-permitted")
  /// No button with that name is configured.
  public static let unknownButton = ProtocolErrorCode("unknown-button")
  /// No control definition with that kind exists.
  public static let unknownKind = ProtocolErrorCode("unknown-kind")
  /// The button has no control assigned.
  public static let unassigned = ProtocolErrorCode("unassigned")
  /// The configuration does not fit the definition's parameters.
  public static let invalidConfiguration = ProtocolErrorCode("invalid-configuration")
  /// The control requires configuration that the instance lacks.
  public static let notConfigured = ProtocolErrorCode("not-configured")
  /// The request does not apply to this control (e.g. `set` on a button control).
  public static let unsupported = ProtocolErrorCode("unsupported")
  /// The control's intent is already running; the request was not queued.
  public static let busy = ProtocolErrorCode("busy")
  /// The control's value or its provider is not available right now.
  public static let unavailable = ProtocolErrorCode("unavailable")
  /// The intent ran and failed; the state is unchanged.
  public static let failed = ProtocolErrorCode("failed")
  /// The intent or provider did not answer within its timeout.
  public static let timeout = ProtocolErrorCode("timeout")
  /// actiond stopped the intent's command before it ended (the daemon is stopping), or did
  /// not start it because it is stopping. Not a timeout, not the command's failure.
  public static let stopped = ProtocolErrorCode("stopped")
  /// The change could not be written to the state store (disk full, read-only or
  /// unreadable state directory, ...). It was not made: the state is as before, on disk
  /// and as announced.
  public static let stateNotSaved = ProtocolErrorCode("state-not-saved")
  /// Another client is already the provider for this kind.
  public static let alreadyRegistered = ProtocolErrorCode("already-registered")
  /// The kind's intent and value provider are not `provider`, so it cannot be registered.
  public static let notProvider = ProtocolErrorCode("not-provider")
  /// A reply or error arrived for a daemon request id that is not pending.
  public static let unknownID = ProtocolErrorCode("unknown-id")
  /// A request line exceeded the line limit; the daemon closes the connection after this.
  public static let lineTooLong = ProtocolErrorCode("line-too-long")
  /// The daemon already serves its maximum number of clients; it closes the connection after this.
  public static let tooManyClients = ProtocolErrorCode("too-many-clients")
  /// The client did not read fast enough and its outbound queue overflowed; the daemon
  /// closes the connection after this.
  public static let lagged = ProtocolErrorCode("lagged")
  /// The daemon is stopping: sent with `"id":null` to every connection before it is
  /// closed; replies still pending at that moment are not sent.
  public static let shuttingDown = ProtocolErrorCode("shutting-down")
  /// A bug in the daemon. The message says what happened.
  public static let `internal` = ProtocolErrorCode("internal")

  /// Every code this version defines, in documentation order.
  public static let all: [ProtocolErrorCode] = [
    .badJSON, .badRequest, .unknownRequest, .notPermitted, .unknownButton, .unknownKind, .unassigned,
    .invalidConfiguration, .notConfigured, .unsupported, .busy, .unavailable, .failed, .timeout, .stopped,
    .stateNotSaved,
    .alreadyRegistered, .notProvider, .unknownID, .lineTooLong, .tooManyClients, .lagged, .shuttingDown,
    .internal,
  ]
}

/// An error as carried on the wire: a stable code and a message for people.
public struct ProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
  public var code: ProtocolErrorCode
  public var message: String
  public init(_ code: ProtocolErrorCode, _ message: String) {
    self.code = code
    self.message = message
  }
  public var description: String { "\(code): \(message)" }

  static func badRequest(_ message: String) -> ProtocolError { ProtocolError(.badRequest, message) }
}
