#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Finds the client tokenctl registered at an issuer, or registers one (RFC 7591), and
/// deletes it again (RFC 7592): what lets `tokenctl login oidc --issuer URL` work with no
/// client id configured, as oidc-agent does.
public struct ClientRegistrar: Sendable {
  public var store: any ClientRegistrationStore
  public var transport: any HTTPTransport
  public var discovery: MetadataDiscovery
  public var clock: any WallClock

  public init(
    store: any ClientRegistrationStore, transport: any HTTPTransport, discovery: MetadataDiscovery,
    clock: any WallClock
  ) {
    self.store = store
    self.transport = transport
    self.discovery = discovery
    self.clock = clock
  }

  /// The issuer a sign-in to `descriptor` would register at, when the type registers
  /// clients and has none configured; nil otherwise (and when the issuer is unusable: the
  /// sign-in reports that itself).
  public static func issuer(
    registeringFor descriptor: EndpointDescriptor, clientID: String?, userIssuer: String?
  ) -> URL? {
    guard descriptor.dynamicRegistration, (clientID ?? descriptor.clientID) == nil else { return nil }
    switch descriptor.endpoints {
    case .discovered(let issuer): return issuer
    case .discoveredFromUserIssuer: return userIssuer.flatMap(OAuthSyntax.issuerURL)
    case .fixed: return nil
    }
  }

  /// The client registered at `issuer`, if there is one.
  public func existing(at issuer: URL) throws -> ClientRegistration? {
    try store.load(issuer: issuer.absoluteString)
  }

  /// The client registered at `issuer`, registering one for `descriptor` with
  /// `redirectURIs` first when there is none; `registered` says which.
  public func client(
    at issuer: URL, for descriptor: EndpointDescriptor, redirectURIs: [String]
  ) async throws -> (registration: ClientRegistration, registered: Bool) {
    if let existing = try existing(at: issuer) { return (existing, false) }
    let metadata: AuthorizationServerMetadata
    do {
      metadata = try await discovery.metadata(for: issuer)
    } catch {
      throw TokenKitError(error, while: "discover the endpoints of \(issuer.absoluteString)")
    }
    guard let endpoint = metadata.registrationEndpoint else {
      throw TokenKitError(
        .notConfigured,
        "account type '\(descriptor.id)' has no client id, and \(issuer.absoluteString) does not let clients register "
          + "themselves (its discovery document has no registration_endpoint)",
        remedy: .registerClient(type: descriptor.id))
    }
    var grantTypes = Self.requiredGrants
    let deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"
    if metadata.endpoints.deviceAuthorization != nil, metadata.grantTypes?.contains(deviceGrant) == true {
      grantTypes.append(deviceGrant)
    }
    let response: ClientRegistrationResponse
    do {
      response = try await register(grantTypes, redirectURIs: redirectURIs, for: descriptor, at: endpoint)
    } catch .oauth(let oauth, _) where oauth.code == "invalid_client_metadata" && grantTypes != Self.requiredGrants {
      // The grants beyond the required ones are optional: a server that refuses them
      // (glewlwyd 2.7.5 knows the device grant only by a name of its own) gets a client
      // without them, which signs in with the browser.
      do {
        response = try await register(Self.requiredGrants, redirectURIs: redirectURIs, for: descriptor, at: endpoint)
      } catch {
        throw Self.refusal(error, issuer: issuer, descriptor: descriptor, redirectURIs: redirectURIs)
      }
    } catch {
      throw Self.refusal(error, issuer: issuer, descriptor: descriptor, redirectURIs: redirectURIs)
    }
    let registration = ClientRegistration(
      issuer: metadata.issuer, clientID: response.clientID, clientSecret: response.clientSecret,
      registrationAccessToken: response.registrationAccessToken,
      registrationClientURI: response.registrationClientURI,
      redirectURIs: response.redirectURIs ?? redirectURIs, registeredAt: clock.now)
    try store.save(registration)
    return (registration, true)
  }

  /// The grants a client of ours cannot do without: the browser's sign-in (RFC 6749 §4.1)
  /// and refreshing (§6). Any other is asked for only where the server offers it, and
  /// dropped when the server refuses it.
  static let requiredGrants = ["authorization_code", "refresh_token"]

  /// Registers a native public client with `grantTypes` at `endpoint` (RFC 7591 §3.1).
  private func register(
    _ grantTypes: [String], redirectURIs: [String], for descriptor: EndpointDescriptor, at endpoint: URL
  ) async throws(AuthorizationServiceError) -> ClientRegistrationResponse {
    let request = ClientMetadata(
      redirectURIs: redirectURIs, grantTypes: grantTypes, additionalMetadata: descriptor.additionalRegistrationMetadata)
    return try await AuthorizationService.register(request, at: endpoint, transport: transport)
  }

  /// What ``unregister(issuer:)`` did.
  public enum Unregistration: Sendable, Hashable {
    /// Deleted at the server (RFC 7592 §2.3), then forgotten here.
    case deleted(ClientRegistration)
    /// The server no longer knew the client; forgotten here.
    case unknownToServer(ClientRegistration)
    /// The server offers no deletion (no registration access token or client URI): only
    /// forgotten here.
    case forgotten(ClientRegistration)
  }

  /// Deletes the client registered at `issuer` at its server, where the server supports
  /// RFC 7592, and forgets it. A deletion the server refuses leaves the registration kept,
  /// so that it can be tried again.
  public func unregister(issuer: String) async throws -> Unregistration {
    guard let registration = try store.load(issuer: issuer) else {
      throw TokenKitError(.notConfigured, "no client is registered at \(issuer)")
    }
    guard let uri = registration.registrationClientURI, let token = registration.registrationAccessToken
    else {
      try store.remove(issuer: issuer)
      return .forgotten(registration)
    }
    let outcome: AuthorizationService.RegistrationDeletion
    do {
      outcome = try await AuthorizationService.deleteRegistration(at: uri, accessToken: token, transport: transport)
    } catch {
      let failure = TokenKitError(error, while: "delete client \(registration.clientID) at \(issuer)")
      throw TokenKitError(
        failure.code, failure.message,
        recovery: (failure.recovery.map { $0 + " " } ?? "")
          + "The registration is kept, so that deleting it can be tried again, or it can be forgotten locally.")
    }
    try store.remove(issuer: issuer)
    return outcome == .deleted ? .deleted(registration) : .unknownToServer(registration)
  }

  /// The server's refusal, worded with what it means and how to register by hand.
  static func refusal(
    _ error: AuthorizationServiceError, issuer: URL, descriptor: EndpointDescriptor, redirectURIs: [String]
  ) -> TokenKitError {
    let action = "register tokenctl as a client at \(issuer.absoluteString)"
    let reason: String
    switch error {
    case .oauth(let oauth, _) where oauth.code == "invalid_redirect_uri":
      reason = "it does not accept the loopback redirect URI \(redirectURIs.joined(separator: ", ")) (\(oauth))"
    case .oauth(let oauth, _) where oauth.code == "invalid_client_metadata":
      reason = "it does not accept a native public client without a secret (\(oauth))"
    case .oauth(let oauth, let status) where status == 401 || status == 403:
      reason = "it lets only clients it trusts register (HTTP \(status), \(oauth))"
    case .httpStatus(let status, _, _) where status == 401 || status == 403:
      reason = "it lets only clients it trusts register (HTTP \(status))"
    default:
      return TokenKitError(error, while: action)
    }
    return TokenKitError(
      .notConfigured, "the server refused to \(action): \(reason)",
      remedy: .registerClient(type: descriptor.id))
  }
}
