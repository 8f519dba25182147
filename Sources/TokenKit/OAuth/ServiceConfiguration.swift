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
    guard let id = clientID ?? descriptor.clientID, !id.isEmpty else {
      throw TokenKitError(
        .notConfigured, "account type '\(descriptor.id)' has no client id",
        recovery:
          "Register an application with the provider, then pass --client-id or set client_id in the [types.\(descriptor.id)] table of config.toml; see tokenctl-providers(7)."
      )
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
      issuerURL = issuer
    case .discoveredFromUserIssuer:
      guard let text = userIssuer else {
        throw TokenKitError(
          .notConfigured, "account type '\(descriptor.id)' needs an issuer",
          recovery: "Pass --issuer https://… or set issuer in the [types.\(descriptor.id)] table of config.toml.")
      }
      guard let url = URL(string: text),
        url.scheme == "https" || (url.scheme == "http" && Endpoints.isLoopback(url.host() ?? "")),
        url.query() == nil, url.fragment() == nil
      else {
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
    return ServiceConfiguration(
      descriptor: descriptor, endpoints: metadata.endpoints, client: client, issuer: metadata.issuer,
      issuerInAuthorizationResponse: metadata.authorizationResponseIssParameterSupported)
  }

  /// The service for the token, device and revocation endpoints.
  public func service(transport: any HTTPTransport) -> AuthorizationService {
    AuthorizationService(endpoints: endpoints, client: client, transport: transport)
  }
}
