#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The device authorization grant (RFC 8628): the user approves on another device while
/// we poll the token endpoint.
public struct DeviceAuthorizationFlow: Sendable {
  public var configuration: ServiceConfiguration
  public var scopes: [String]
  public var transport: any HTTPTransport
  public var clock: any WallClock
  /// Shows the verification URI, the user code and the time left; called before each poll.
  public var present: @Sendable (DeviceAuthorizationResponse, _ secondsLeft: Int) async -> Void
  /// Waits between polls; injected so tests need not wait.
  public var sleep: @Sendable (Double) async throws -> Void
  /// The longest the user may take to approve, when shorter than the device code's own
  /// lifetime (`expires_in`); nil: the code's lifetime.
  public var timeout: Double?
  /// The client, when tokenctl registered it moments ago: a refusal of it may be news not
  /// yet spread through the server (see ``RecentRegistration``).
  public var recentRegistration: RecentRegistration?

  public init(
    configuration: ServiceConfiguration, scopes: [String], transport: any HTTPTransport,
    clock: any WallClock, timeout: Double? = nil,
    sleep: @escaping @Sendable (Double) async throws -> Void = { try await Task.sleep(for: .seconds($0)) },
    present: @escaping @Sendable (DeviceAuthorizationResponse, Int) async -> Void
  ) {
    self.timeout = timeout
    self.configuration = configuration
    self.scopes = scopes
    self.transport = transport
    self.clock = clock
    self.sleep = sleep
    self.present = present
  }

  /// §3.5: `slow_down` adds five seconds to the interval, for this and later polls.
  static let slowDownIncrement: Double = 5

  public func run() async throws -> TokenResponse {
    let service = configuration.service(transport: transport)
    let type = configuration.descriptor.id
    let authorization: DeviceAuthorizationResponse
    let recent = recentRegistration
    do {
      authorization = try await RecentRegistration.exchange(recent) {
        () async throws(AuthorizationServiceError) in try await service.deviceAuthorization(scopes: scopes)
      }
    } catch .oauth(let oauth, _) where oauth.code == OAuthError.unauthorizedClient {
      throw unauthorized(oauth)
    } catch {
      let action = "start a device sign-in for \(type)"
      if let refusal = recent?.refusal(error, while: action, type: type, device: true) { throw refusal }
      throw TokenKitError(error, while: action)
    }
    let limitedByTimeout = timeout.map { $0 < authorization.expiresIn } ?? false
    let deadline = clock.now.addingTimeInterval(limitedByTimeout ? timeout! : authorization.expiresIn)
    var interval = max(authorization.interval, 1)
    while true {
      let left = deadline.timeIntervalSince(clock.now)
      guard left > 0 else { throw limitedByTimeout ? timedOut() : expired() }
      await present(authorization, Int(left.rounded(.up)))
      try await sleep(min(interval, left))
      do {
        return try await RecentRegistration.exchange(recent) {
          () async throws(AuthorizationServiceError) in try await service.token(.deviceCode(authorization.deviceCode))
        }
      } catch .oauth(let oauth, let status) {
        switch configuration.descriptor.deviceGrantErrorAliases[oauth.code] ?? oauth.code {
        case OAuthError.authorizationPending:
          continue
        case OAuthError.slowDown:
          interval += Self.slowDownIncrement
        case OAuthError.accessDenied:
          throw TokenKitError(
            .accessDenied, "the sign-in was declined (\(oauth))",
            remedy: .signIn(type: type, device: true))
        case OAuthError.expiredToken:
          throw expired()
        case OAuthError.unauthorizedClient:
          // Some servers let a client that lacks the grant show the code, and refuse only
          // once the user approved it.
          throw unauthorized(oauth)
        case OAuthError.invalidGrant:
          // The device code was refused: this sign-in is over; no stored account is affected.
          throw TokenKitError(
            .signInFailed, "the authorization server refused the device code (\(oauth))",
            remedy: .signIn(type: type, device: true))
        default:
          let action = "finish the device sign-in for \(type)"
          if let refusal = recent?.refusal(.oauth(oauth, status: status), while: action, type: type, device: true) {
            throw refusal
          }
          throw TokenKitError(.oauth(oauth, status: status), while: action)
        }
      } catch {
        throw TokenKitError(error, while: "finish the device sign-in for \(type)")
      }
    }
  }

  /// The client may not use the device grant (RFC 8628 §3.2, RFC 6749 §5.2): the
  /// browser or a pasted address is the way in.
  private func unauthorized(_ oauth: OAuthError) -> TokenKitError {
    var error = TokenKitError(
      .signInFailed,
      "the authorization server does not let client \(configuration.client.id) use the device grant (\(oauth))",
      remedy: .signInAnotherWay(type: configuration.descriptor.id, device: false))
    // The server's own error, for the account type's plugin to say what its documentation
    // says about it (a client the provider disabled, rather than one without the grant).
    error.oauthError = oauth
    return error
  }

  /// The caller's limit passed before the device code's own did.
  private func timedOut() -> TokenKitError {
    TokenKitError(
      .signInTimedOut,
      "the sign-in was not approved within the \(DurationText.format(seconds: Int(timeout ?? 0))) allowed",
      remedy: .signIn(type: configuration.descriptor.id, device: true))
  }

  private func expired() -> TokenKitError {
    TokenKitError(
      .signInTimedOut, "the device code expired before the sign-in was approved",
      remedy: .signIn(type: configuration.descriptor.id, device: true))
  }
}
