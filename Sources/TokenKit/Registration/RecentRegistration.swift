#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A client tokenctl registered at an issuer moments ago (RFC 7591), and what the
/// server's refusal of it means then.
///
/// A provider that runs several workers behind one address may answer from a worker that
/// has not yet loaded the client another worker registered a moment before (a server that
/// keeps registered clients in its configuration, which each worker reloads on its own
/// schedule). That worker answers `invalid_client` (RFC 6749 §5.2) for a client that
/// exists and whose credentials are right, and the user, who configured no client id or
/// secret, can check neither.
///
/// So, one decision in one place: an exchange the server refuses so while the
/// registration is younger than ``settling`` is asked once more after ``pause``; a
/// second refusal is reported as a registration too new for the whole server, with signing
/// in again (which reuses the registration) as the remedy. An older client that is
/// refused is refused for another reason, and keeps the ordinary message.
public struct RecentRegistration: Sendable {
  /// The client registered.
  public var clientID: String
  /// When it was registered (``ClientRegistration/registeredAt``).
  public var registeredAt: Date
  public var clock: any WallClock
  /// Waits the pause; injected so that tests do not.
  public var sleep: @Sendable (Double) async throws -> Void

  public init(
    clientID: String, registeredAt: Date, clock: any WallClock, sleep: @escaping @Sendable (Double) async throws -> Void
  ) {
    self.clientID = clientID
    self.registeredAt = registeredAt
    self.clock = clock
    self.sleep = sleep
  }

  /// Ten minutes: a browser sign-in may take the whole default timeout (five) between the
  /// registration and the code's exchange, and a worker reloads within that; a client
  /// refused later than this was refused for another reason.
  static let settling: Double = 600
  /// Three seconds: long enough for a worker that checks its configuration every second or
  /// two to load the client, short enough for a person waiting at the prompt.
  static let pause: Double = 3

  /// Seconds since the registration, by the clock now.
  var age: Double { clock.now.timeIntervalSince(registeredAt) }

  /// Whether a refusal of the client now may be news of the registration still spreading.
  var isRecent: Bool { age < Self.settling }

  /// Runs `exchange`, and once more after ``pause`` when the server refuses the client
  /// (`invalid_client`) while the registration is recent. Cancelled while pausing, the
  /// server's refusal is what is reported.
  public func exchange<Result>(
    _ exchange: () async throws(AuthorizationServiceError) -> Result
  ) async throws(AuthorizationServiceError) -> Result {
    do {
      return try await exchange()
    } catch .oauth(let oauth, let status) where oauth.code == OAuthError.invalidClient && isRecent {
      do { try await sleep(Self.pause) } catch { throw .oauth(oauth, status: status) }
      return try await exchange()
    }
  }

  /// `exchange` through `recent` when there is one, else as it is.
  public static func exchange<Result>(
    _ recent: RecentRegistration?, _ exchange: () async throws(AuthorizationServiceError) -> Result
  ) async throws(AuthorizationServiceError) -> Result {
    guard let recent else { return try await exchange() }
    return try await recent.exchange(exchange)
  }

  /// The error for `error` when it is the server refusing this recent client again (see
  /// ``exchange(_:)``), while trying to `action`; nil for any other error. The remedy is a
  /// sign-in to `type` again (with the device grant when `device`), by when every worker
  /// knows the client.
  public func refusal(
    _ error: AuthorizationServiceError, while action: String, type: String, device: Bool
  ) -> TokenKitError? {
    guard case .oauth(let oauth, _) = error, oauth.code == OAuthError.invalidClient, isRecent else { return nil }
    var refusal = TokenKitError(
      .serverError,
      "the authorization server does not know client \(clientID) yet (\(oauth)) while trying to \(action): tokenctl "
        + "registered it there \(DurationText.format(seconds: max(Int(age.rounded()), 0))) ago, and a server that "
        + "runs several workers may take a while to tell them all" + TokenKitError.reference(oauth),
      remedy: .signIn(type: type, device: device))
    refusal.oauthError = oauth
    return refusal
  }
}
