#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where an account type's endpoints come from.
public enum EndpointConfiguration: Sendable, Hashable {
  /// Endpoints written into the descriptor.
  case fixed(Endpoints)
  /// Endpoints discovered from this issuer (OpenID Connect Discovery 1.0, RFC 8414).
  case discovered(issuer: URL)
  /// Endpoints discovered from an issuer the user names per sign-in (`--issuer`) or in
  /// the configuration: a generic type such as "any OpenID Connect provider".
  case discoveredFromUserIssuer

  var problems: [String] {
    switch self {
    case .fixed(let endpoints): return endpoints.problems
    case .discovered(let issuer):
      if Loopback.isSecureOrLoopback(issuer) { return [] }
      return ["issuer \(issuer.absoluteString) must be https (http only on a loopback host)"]
    case .discoveredFromUserIssuer: return []
    }
  }
}

/// The endpoints of an authorization server, named as in RFC 8414 §2.
public struct Endpoints: Sendable, Hashable {
  /// `authorization_endpoint` (RFC 6749 §3.1).
  public var authorization: URL?
  /// `token_endpoint` (RFC 6749 §3.2).
  public var token: URL
  /// `device_authorization_endpoint` (RFC 8628 §4).
  public var deviceAuthorization: URL?
  /// `revocation_endpoint` (RFC 7009 §2).
  public var revocation: URL?
  /// `userinfo_endpoint` (OpenID Connect Core §5.3).
  public var userinfo: URL?
  /// `jwks_uri`: the keys that sign ID tokens (RFC 7517).
  public var jwks: URL?
  /// `issuer`: what the ID token's `iss` and the authorization response's `iss` must be.
  /// Nil for servers that are not OpenID providers, or whose issuer varies per tenant.
  public var issuer: String?

  public init(
    authorization: URL?, token: URL, deviceAuthorization: URL? = nil, revocation: URL? = nil,
    userinfo: URL? = nil, jwks: URL? = nil, issuer: String? = nil
  ) {
    self.authorization = authorization
    self.token = token
    self.deviceAuthorization = deviceAuthorization
    self.revocation = revocation
    self.userinfo = userinfo
    self.jwks = jwks
    self.issuer = issuer
  }

  /// Each endpoint by its RFC 8414 metadata name, in a stable order.
  public var named: [(name: String, url: URL)] {
    let all: [(String, URL?)] = [
      ("authorization_endpoint", authorization), ("token_endpoint", token),
      ("device_authorization_endpoint", deviceAuthorization),
      ("revocation_endpoint", revocation), ("userinfo_endpoint", userinfo), ("jwks_uri", jwks),
    ]
    return all.compactMap { name, url in url.map { (name, $0) } }
  }

  var problems: [String] {
    // RFC 6749 §3.1 and §3.2 require TLS; RFC 8252 §8.3 allows http only for loopback.
    named.compactMap { name, url in
      if Loopback.isSecureOrLoopback(url) { return nil }
      return "\(name) \(url.absoluteString) must be https (http only on a loopback host)"
    }
  }
}
