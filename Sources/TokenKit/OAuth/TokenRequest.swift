#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A request to the token endpoint (RFC 6749 §3.2), for one of the grants tokenctl uses.
public struct TokenRequest: Sendable, Hashable, CustomStringConvertible {
  /// The grant, with what it carries (`grant_type` and its parameters).
  public enum Grant: Sendable, Hashable {
    /// §4.1.3, with the PKCE verifier (RFC 7636 §4.5).
    case authorizationCode(code: String, redirectURI: String, codeVerifier: String)
    /// §6. `scope` may narrow the original grant; nil keeps it.
    case refreshToken(String, scope: [String]? = nil)
    /// §4.4.
    case clientCredentials(scope: [String])
    /// RFC 8628 §3.4.
    case deviceCode(String)

    /// The `grant_type` value.
    public var type: String {
      switch self {
      case .authorizationCode: return "authorization_code"
      case .refreshToken: return "refresh_token"
      case .clientCredentials: return "client_credentials"
      case .deviceCode: return "urn:ietf:params:oauth:grant-type:device_code"
      }
    }
  }

  public var endpoint: URL
  public var grant: Grant
  public var client: ClientIdentity
  /// Parameters a provider needs beyond the RFC's.
  public var additionalParameters: [String: String]

  public init(
    endpoint: URL, grant: Grant, client: ClientIdentity, additionalParameters: [String: String] = [:]
  ) {
    self.endpoint = endpoint
    self.grant = grant
    self.client = client
    self.additionalParameters = additionalParameters
  }

  /// The HTTP request: a form POST with the client's authentication.
  public var httpRequest: HTTPRequest {
    var fields: [(String, String)] = [("grant_type", grant.type)]
    switch grant {
    case .authorizationCode(let code, let redirectURI, let verifier):
      fields += [("code", code), ("redirect_uri", redirectURI), ("code_verifier", verifier)]
    case .refreshToken(let token, let scope):
      fields.append(("refresh_token", token))
      if let scope { fields.append(("scope", scope.joined(separator: " "))) }
    case .clientCredentials(let scope):
      if !scope.isEmpty { fields.append(("scope", scope.joined(separator: " "))) }
    case .deviceCode(let code):
      fields.append(("device_code", code))
    }
    // The protocol's own fields win, as in the authorization request.
    let reserved = Set(fields.map(\.0) + ["client_id", "client_secret"])
    fields += additionalParameters.sorted { $0.key < $1.key }.filter { !reserved.contains($0.key) }
      .map { ($0.key, $0.value) }
    var headers: [HTTPHeader] = []
    client.authenticate(fields: &fields, headers: &headers)
    return .form(endpoint, fields, headers: headers)
  }

  // Codes, verifiers and refresh tokens are secrets: name the grant only.
  public var description: String { "TokenRequest(\(grant.type) at \(endpoint.absoluteString))" }
}
