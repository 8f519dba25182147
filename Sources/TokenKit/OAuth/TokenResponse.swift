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

  /// What makes this response unusable although it parsed: a token or token type with
  /// characters RFC 6749 does not allow in it (Appendix A.12, A.13 and A.17: an access or
  /// refresh token is printable ASCII, space included; a token type is printable ASCII
  /// without space, a name or a URI). nil for a usable response.
  ///
  /// Why it matters: a token is printed on a terminal and pasted into header lines (`curl -H
  /// "Authorization: Bearer $(tokenctl token …)"`), so an escape sequence in it would drive
  /// the terminal and a line break would add a header of the server's choosing. The check
  /// names the member, never its content.
  public var syntaxProblem: String? {
    if !OAuthSyntax.isVisibleASCII(accessToken) { return "its access_token" }
    if let refreshToken, !OAuthSyntax.isVisibleASCII(refreshToken) { return "its refresh_token" }
    if tokenType.isEmpty || !tokenType.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) { return "its token_type" }
    return nil
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
