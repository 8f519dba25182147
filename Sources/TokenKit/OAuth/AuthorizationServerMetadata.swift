#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Authorization server metadata (RFC 8414 §2; OpenID Connect Discovery 1.0 §3).
public struct AuthorizationServerMetadata: Sendable, Hashable {
  /// `issuer`: must equal the issuer the metadata was fetched for (RFC 8414 §3.3).
  public var issuer: String
  public var endpoints: Endpoints
  /// `jwks_uri`: where the ID token signing keys are.
  public var jwksURI: URL?
  /// `code_challenge_methods_supported` (RFC 8414 §2).
  public var codeChallengeMethods: [String]?
  /// `authorization_response_iss_parameter_supported` (RFC 9207 §3).
  public var authorizationResponseIssParameterSupported: Bool
  /// `grant_types_supported`.
  public var grantTypes: [String]?
  /// `registration_endpoint` (RFC 8414 §2, RFC 7591 §3): where clients register
  /// themselves, when the server lets them.
  public var registrationEndpoint: URL?

  /// Decodes a metadata document and checks it belongs to `expectedIssuer`.
  public init(json body: [UInt8], expectedIssuer: String) throws(AuthorizationServiceError) {
    let object = try JSONObject(body, what: "discovery document")
    guard let issuer = object.string("issuer") else {
      throw .malformedResponse("the discovery document has no issuer")
    }
    // RFC 8414 §3.3 and Discovery §4.3: a mismatch means the document is for another
    // server (or an attacker's); using it would send our codes there.
    guard issuer == expectedIssuer else { throw .issuerMismatch(named: issuer, asked: expectedIssuer) }
    func url(_ name: String) throws(AuthorizationServiceError) -> URL? {
      guard let text = object.string(name) else { return nil }
      guard let url = URL(string: text), url.scheme == "https" || url.scheme == "http" else {
        throw .malformedResponse("the discovery document's \(name) is not a URL")
      }
      return url
    }
    guard let token = try url("token_endpoint") else {
      throw .malformedResponse("the discovery document has no token_endpoint")
    }
    let endpoints = Endpoints(
      authorization: try url("authorization_endpoint"), token: token,
      deviceAuthorization: try url("device_authorization_endpoint"),
      revocation: try url("revocation_endpoint"), userinfo: try url("userinfo_endpoint"),
      jwks: try url("jwks_uri"), issuer: issuer)
    let problems = endpoints.problems
    // Registration is optional: an unusable endpoint is as good as none, and must not
    // stop the accounts that have a client from using the rest of the document.
    let registration = (try? url("registration_endpoint")).flatMap { $0 }.flatMap {
      Loopback.isSecureOrLoopback($0) ? $0 : nil
    }
    guard problems.isEmpty else {
      throw .malformedResponse("the discovery document is unsafe: " + problems.joined(separator: "; "))
    }
    self.issuer = issuer
    self.endpoints = endpoints
    jwksURI = try url("jwks_uri")
    codeChallengeMethods = object.strings("code_challenge_methods_supported")
    authorizationResponseIssParameterSupported =
      object.string("authorization_response_iss_parameter_supported") == "true"
      || object.bool("authorization_response_iss_parameter_supported") == true
    grantTypes = object.strings("grant_types_supported")
    registrationEndpoint = registration
  }

  /// The URLs to try for `issuer`, in order: OpenID Connect Discovery §4.1 appends the
  /// well-known path; RFC 8414 §3.1 inserts it before the issuer's path.
  public static func discoveryURLs(for issuer: URL) -> [URL] {
    var base = issuer.absoluteString
    while base.hasSuffix("/") { base.removeLast() }
    var urls = [URL(string: base + "/.well-known/openid-configuration")]
    let path = issuer.path()
    if !path.isEmpty, path != "/", let host = issuer.host() {
      let port = issuer.port.map { ":\($0)" } ?? ""
      // `host()` drops the brackets of an IPv6 literal, which the URL needs back.
      let authority = (host.contains(":") ? "[\(host)]" : host) + port
      let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
      urls.append(
        URL(string: "\(issuer.scheme ?? "https")://\(authority)/.well-known/oauth-authorization-server\(trimmed)"))
    } else {
      urls.append(URL(string: base + "/.well-known/oauth-authorization-server"))
    }
    return urls.compactMap { $0 }
  }
}
