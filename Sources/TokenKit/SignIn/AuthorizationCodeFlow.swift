#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The authorization code grant with PKCE, as RFC 8252 asks a native app to run it: open
/// the browser, wait for the redirect, exchange the code.
public struct AuthorizationCodeFlow: Sendable {
  public var configuration: ServiceConfiguration
  public var scopes: [String]
  public var receiver: any RedirectReceiver
  public var transport: any HTTPTransport
  /// Shows the user the URL and opens the browser. It gets no secret: the URL carries
  /// `state` and the PKCE challenge, which are public.
  public var presentURL: @Sendable (URL) async -> Void
  /// How long the user has to finish in the browser.
  public var timeout: Duration
  /// Whether a bare code is acceptable (the user pastes it by hand).
  public var bareCodeAllowed: Bool
  /// The client, when tokenctl registered it moments ago: a refusal of it may be news not
  /// yet spread through the server (see ``RecentRegistration``).
  public var recentRegistration: RecentRegistration?

  public init(
    configuration: ServiceConfiguration, scopes: [String], receiver: any RedirectReceiver,
    transport: any HTTPTransport, timeout: Duration = .seconds(300), bareCodeAllowed: Bool = false,
    presentURL: @escaping @Sendable (URL) async -> Void
  ) {
    self.configuration = configuration
    self.scopes = scopes
    self.receiver = receiver
    self.transport = transport
    self.timeout = timeout
    self.bareCodeAllowed = bareCodeAllowed
    self.presentURL = presentURL
  }

  /// The request this flow sends; made once per run, so its state, verifier and nonce
  /// are fresh.
  public func makeRequest() throws -> AuthorizationRequest {
    guard let endpoint = configuration.endpoints.authorization else {
      throw TokenKitError(
        .notConfigured, "account type '\(configuration.descriptor.id)' has no authorization endpoint",
        remedy: .signInAnotherWay(type: configuration.descriptor.id, device: true))
    }
    return AuthorizationRequest(
      endpoint: endpoint, clientID: configuration.client.id, redirectURI: receiver.redirectURI,
      scopes: scopes,
      expectedIssuer: configuration.issuerInAuthorizationResponse ? configuration.issuer : nil,
      additionalParameters: configuration.descriptor.additionalAuthorizationParameters)
  }

  /// Runs the flow; returns the token response and the request (whose nonce the ID token
  /// must carry).
  public func run() async throws -> (TokenResponse, AuthorizationRequest) {
    let request = try makeRequest()
    await presentURL(request.url)
    let bare = bareCodeAllowed
    let callback = try await receiver.receive(timeout: timeout) { request.judge($0, bareCodeAllowed: bare) }
    let code = try request.outcome(of: callback, bareCodeAllowed: bare)
    let service = configuration.service(transport: transport)
    let grant = TokenRequest.Grant.authorizationCode(
      code: code, redirectURI: receiver.redirectURI, codeVerifier: request.pkce.verifier)
    let action = "exchange the authorization code at \(configuration.endpoints.token.absoluteString)"
    do {
      let response = try await RecentRegistration.exchange(recentRegistration) {
        () async throws(AuthorizationServiceError) in try await service.token(grant)
      }
      return (response, request)
    } catch .oauth(let oauth, _) where oauth.code == OAuthError.invalidGrant {
      // A refused code ends this sign-in; no stored account is affected.
      throw TokenKitError(
        .signInFailed, "the authorization server refused the authorization code (\(oauth))",
        recovery: "Sign in again; if it keeps failing, the redirect address or the PKCE support may be misconfigured.")
    } catch .oauth(let oauth, _)
      where oauth.code == OAuthError.unauthorizedClient && configuration.endpoints.deviceAuthorization != nil
    {
      // The client may not use this grant; the device grant is the other way in.
      throw TokenKitError(
        .signInFailed,
        "the authorization server does not let client \(configuration.client.id) sign in with the browser (\(oauth))",
        remedy: .signInAnotherWay(type: configuration.descriptor.id, device: true))
    } catch {
      let type = configuration.descriptor.id
      if let refusal = recentRegistration?.refusal(error, while: action, type: type, device: false) { throw refusal }
      throw TokenKitError(error, while: action)
    }
  }
}
