#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An account type made concrete for one sign-in or refresh: its endpoints (given or
/// discovered), its client, and its issuer. AppAuth's `OIDServiceConfiguration` plus the
/// client.
public struct ServiceConfiguration: Sendable {
  public var descriptor: EndpointDescriptor
  public var endpoints: Endpoints
  public var client: ClientIdentity
  /// The issuer ID tokens and authorization responses must name, when known.
  public var issuer: String?
  /// Whether the server sends `iss` in authorization responses (RFC 9207).
  public var issuerInAuthorizationResponse: Bool
  /// The grants the server says it supports (RFC 8414 §2 `grant_types_supported`), when
  /// its discovery document lists them; nil for fixed endpoints or a document without.
  public var grantTypesSupported: [String]?

  public init(
    descriptor: EndpointDescriptor, endpoints: Endpoints, client: ClientIdentity,
    issuer: String?, issuerInAuthorizationResponse: Bool = false
  ) {
    self.descriptor = descriptor
    self.endpoints = endpoints
    self.client = client
    self.issuer = issuer
    self.issuerInAuthorizationResponse = issuerInAuthorizationResponse
  }

  /// Resolves `descriptor` with what the user or the stored account adds: an issuer for
  /// types that ask for one, a client id that replaces the type's default.
  public static func resolve(
    _ descriptor: EndpointDescriptor, issuer userIssuer: String? = nil, clientID: String? = nil,
    clientSecret: String? = nil, discovery: MetadataDiscovery
  ) async throws -> ServiceConfiguration {
    // The issuer first: at one that lets clients register (RFC 7591), it is all a
    // sign-in needs, and asking for a client id first sends the user to register one.
    if descriptor.endpoints == .discoveredFromUserIssuer, userIssuer == nil {
      throw Self.needsIssuer(descriptor)
    }
    guard let id = clientID ?? descriptor.clientID, !id.isEmpty else {
      throw TokenKitError(
        .notConfigured, "account type '\(descriptor.id)' has no client id",
        remedy: .configure(type: descriptor.id, setting: "client_id"))
    }
    let client = ClientIdentity(
      id: id, secret: clientSecret ?? descriptor.clientSecret,
      authentication: descriptor.tokenEndpointAuthentication)
    let issuerURL: URL
    switch descriptor.endpoints {
    case .fixed(let endpoints):
      return ServiceConfiguration(
        descriptor: descriptor, endpoints: endpoints, client: client, issuer: endpoints.issuer)
    case .discovered(let issuer):
      // A sign-in that asks for another issuer than the type's own would otherwise be sent
      // to the type's without a word: the user believes they signed in elsewhere.
      if let userIssuer, userIssuer != issuer.absoluteString {
        throw TokenKitError(
          .notConfigured,
          "issuer \(userIssuer) was asked for, but account type '\(descriptor.id)' is set up for issuer \(issuer.absoluteString); nothing was sent to either",
          recovery:
            "Sign in without naming an issuer to use \(issuer.absoluteString), or change the type's issuer setting.")
      }
      issuerURL = issuer
    case .discoveredFromUserIssuer:
      guard let text = userIssuer else { throw Self.needsIssuer(descriptor) }
      guard let url = OAuthSyntax.issuerURL(text) else {
        throw TokenKitError(
          .notConfigured, "issuer '\(text)' is not an https URL without query or fragment (OpenID Connect Discovery §2)"
        )
      }
      issuerURL = url
    }
    let metadata: AuthorizationServerMetadata
    do {
      metadata = try await discovery.metadata(for: issuerURL)
    } catch {
      throw TokenKitError(error, while: "discover the endpoints of \(issuerURL.absoluteString)")
    }
    var configuration = ServiceConfiguration(
      descriptor: descriptor, endpoints: metadata.endpoints, client: client, issuer: metadata.issuer,
      issuerInAuthorizationResponse: metadata.authorizationResponseIssParameterSupported)
    configuration.grantTypesSupported = metadata.grantTypes
    return configuration
  }

  /// Whether the server offers the device authorization grant (RFC 8628): an endpoint for
  /// it, and the grant among those it lists, when it lists any: a server may publish the
  /// endpoint and not offer the grant.
  public var offersDeviceGrant: Bool {
    endpoints.deviceAuthorization != nil
      && grantTypesSupported.map { $0.contains("urn:ietf:params:oauth:grant-type:device_code") } != false
  }

  /// Refuses to use `descriptor` for `account` when the type now names another issuer than
  /// the one the account signed in at.
  ///
  /// An account's refresh token, client credentials and access token belong to the server
  /// that issued them; a changed setting must never send them to another one, which would
  /// learn them, and for a revocation answer "revoked" while the real grant lives on. The
  /// check reads no network, so callers make it before anything is sent, on every path
  /// that hands a token on (refresh, revocation, a token printed or given to git).
  /// Accounts that recorded no issuer, and types whose issuer is chosen per account, pass.
  /// A type whose fixed endpoints leave the issuer open (one per tenant) passes when its
  /// `behavior` finds the account's tenant at the authority the type names now
  /// (``AccountTypeBehavior/endpoints(_:forIssuer:)``), and refusing otherwise.
  public static func requireRecordedIssuer(
    of account: Account, in descriptor: EndpointDescriptor, behavior: (any AccountTypeBehavior)? = nil
  ) throws {
    // A type of fixed endpoints whose token endpoint moved to another server (a changed
    // host setting, an edited type file): the account's grant stays where it was issued.
    if case .fixed(let endpoints) = descriptor.endpoints, let authority = account.authority,
      let current = Origin(endpoints.token)?.description, current != authority
    {
      throw TokenKitError(
        .notConfigured,
        "\(account.qualifiedName) was signed in at \(authority), but account type '\(account.type)' now sends its "
          + "tokens to \(current); its tokens go only to \(authority), so nothing was sent",
        recovery:
          "Set the type's endpoints back to \(authority). To use \(current), sign in there; that is another account.")
    }
    guard let recorded = account.issuer else { return }
    let current: String?
    switch descriptor.endpoints {
    case .discovered(let issuer): current = issuer.absoluteString
    case .fixed(let endpoints):
      if endpoints.issuer == nil, let behavior, behavior.endpoints(endpoints, forIssuer: recorded) == nil {
        throw TokenKitError(
          .notConfigured,
          "\(account.qualifiedName) was signed in at issuer \(recorded), which account type '\(account.type)' as now "
            + "set up does not reach (its token endpoint is \(endpoints.token.absoluteString)); its tokens go only to "
            + "\(recorded), so nothing was sent",
          recovery:
            "Set the type's authority back to the one that issued \(recorded). To use the other one, sign in there; "
            + "that is another account.")
      }
      current = endpoints.issuer
    case .discoveredFromUserIssuer: current = nil
    }
    // Issuers are compared as strings, as OpenID Connect Core §3.1.3.7 and RFC 8414 §3.3 do.
    guard let current, current != recorded else { return }
    throw TokenKitError(
      .notConfigured,
      "\(account.qualifiedName) was signed in at issuer \(recorded), but account type '\(account.type)' is now set up for issuer \(current); its tokens go only to \(recorded), so nothing was sent",
      recovery:
        "Set the type's issuer back to \(recorded) or remove it. To use \(current), sign in there; that is another account."
    )
  }

  /// The error for a type that takes its issuer from the user, given none.
  static func needsIssuer(_ descriptor: EndpointDescriptor) -> TokenKitError {
    TokenKitError(
      .notConfigured, "account type '\(descriptor.id)' needs an issuer",
      remedy: .configure(type: descriptor.id, setting: "issuer"))
  }

  /// The configuration to refresh or revoke `account`'s tokens with: its type's, resolved
  /// for the issuer and client the account signed in with, after
  /// ``requireRecordedIssuer(of:in:behavior:)``; for a type of one endpoint set per
  /// tenant, the endpoints of the account's own tenant, and its issuer as the one its ID
  /// tokens must name.
  public static func resolve(
    for account: Account, descriptor: EndpointDescriptor, behavior: (any AccountTypeBehavior)? = nil,
    discovery: MetadataDiscovery
  ) async throws -> ServiceConfiguration {
    try requireRecordedIssuer(of: account, in: descriptor, behavior: behavior)
    var configuration = try await resolve(
      descriptor, issuer: account.issuer, clientID: account.clientID, discovery: discovery)
    if case .fixed(let endpoints) = descriptor.endpoints, endpoints.issuer == nil, let recorded = account.issuer,
      let behavior, let own = behavior.endpoints(endpoints, forIssuer: recorded)
    {
      configuration.endpoints = own
      configuration.issuer = recorded
    }
    return configuration
  }

  /// The keys that sign the issuer's ID tokens, from `jwks_uri`; nil when it publishes none.
  public func signingKeys(transport: any HTTPTransport) async throws -> JSONWebKeySet? {
    guard let jwks = endpoints.jwks else { return nil }
    let action = "fetch the signing keys from \(jwks.absoluteString)"
    do {
      let response = try await transport.send(
        HTTPRequest(method: "GET", url: jwks, headers: [HTTPHeader("Accept", "application/json")]))
      let body = try AuthorizationService.body(of: response, document: "key set", bodyRequired: true)
      return try JSONWebKeySet(json: body)
    } catch let error as TransportError {
      throw TokenKitError(.transport(error), while: action)
    } catch let error as AuthorizationServiceError {
      throw TokenKitError(error, while: action)
    }
  }

  /// The service for the token, device and revocation endpoints.
  public func service(transport: any HTTPTransport, retry: RetryPolicy = .standard) -> AuthorizationService {
    AuthorizationService(endpoints: endpoints, client: client, transport: transport, retry: retry)
  }
}
