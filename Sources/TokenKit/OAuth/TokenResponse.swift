#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A successful token response (RFC 6749 §5.1; OpenID Connect Core §3.1.3.3).
public struct TokenResponse: Sendable, Hashable, CustomStringConvertible {
  public var accessToken: String
  public var tokenType: String
  /// `expires_in`, in seconds.
  public var expiresIn: Double?
  public var refreshToken: String?
  public var idToken: String?
  /// `scope`, when the server says which scopes it granted.
  public var scope: [String]?

  public init(
    accessToken: String, tokenType: String = "Bearer", expiresIn: Double? = nil,
    refreshToken: String? = nil, idToken: String? = nil, scope: [String]? = nil
  ) {
    self.accessToken = accessToken
    self.tokenType = tokenType
    self.expiresIn = expiresIn
    self.refreshToken = refreshToken
    self.idToken = idToken
    self.scope = scope
  }

  /// Decodes a response body; the error says what is missing, never what is there.
  public init(json body: [UInt8]) throws(AuthorizationServiceError) {
    let object = try JSONObject(body, what: "token response")
    guard let accessToken = object.string("access_token"), !accessToken.isEmpty else {
      throw .malformedResponse("the token response has no access_token")
    }
    guard let tokenType = object.string("token_type") else {
      throw .malformedResponse("the token response has no token_type")
    }
    self.init(
      accessToken: accessToken, tokenType: tokenType, expiresIn: object.seconds("expires_in"),
      refreshToken: object.string("refresh_token").flatMap { $0.isEmpty ? nil : $0 },
      idToken: object.string("id_token"),
      scope: object.string("scope").map { $0.split(separator: " ").map(String.init) })
  }

  /// The token set to store, received at `now`.
  ///
  /// A refresh response may omit the refresh token, meaning the old one stays valid
  /// (§6), and an ID token, which then stays as it was: `previous` supplies both.
  public func tokenSet(
    receivedAt now: Date, previous: TokenSet? = nil, requestedScope: [String]? = nil
  )
    -> TokenSet
  {
    TokenSet(
      accessToken: accessToken, refreshToken: refreshToken ?? previous?.refreshToken,
      idToken: idToken ?? previous?.idToken, expiresAt: expiresIn.map { now.addingTimeInterval($0) },
      // §5.1: an absent scope means the requested scope was granted.
      scope: scope ?? previous?.scope ?? requestedScope, tokenType: tokenType, issuedAt: now)
  }

  public var description: String {
    "TokenResponse(\(tokenType), expires_in: \(expiresIn.map { String(Int($0)) } ?? "none"), refresh_token: \(refreshToken == nil ? "none" : "<redacted>"), id_token: \(idToken == nil ? "none" : "<redacted>"))"
  }
}
