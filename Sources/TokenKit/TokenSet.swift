#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The tokens an authorization server issued for one account (RFC 6749 §5.1, OpenID
/// Connect Core §3.1.3.3).
///
/// Its descriptions redact every token, so that printing or logging a `TokenSet` by
/// mistake leaks nothing.
public struct TokenSet: Sendable, Hashable {
  /// `access_token`.
  public var accessToken: String
  /// `refresh_token`, when the server issued one.
  public var refreshToken: String?
  /// `id_token` (OpenID Connect), when the server issued one.
  public var idToken: String?
  /// The instant the access token expires, computed from `expires_in` when it was
  /// received. `nil` when the server did not say, which we treat as "does not expire":
  /// several providers issue such tokens.
  public var expiresAt: Date?
  /// `scope`: the scopes granted, which may differ from those requested (§3.3).
  public var scope: [String]?
  /// `token_type`, usually `Bearer` (RFC 6750).
  public var tokenType: String
  /// When the token response arrived: with `expiresAt` it gives the token's lifetime, from
  /// which the refresh margin is derived.
  public var issuedAt: Date?

  public init(
    accessToken: String, refreshToken: String? = nil, idToken: String? = nil,
    expiresAt: Date? = nil, scope: [String]? = nil, tokenType: String = "Bearer",
    issuedAt: Date? = nil
  ) {
    self.issuedAt = issuedAt
    self.accessToken = accessToken
    self.refreshToken = refreshToken
    self.idToken = idToken
    self.expiresAt = expiresAt
    self.scope = scope
    self.tokenType = tokenType
  }

  /// Whether the access token is still valid `seconds` from the clock's now.
  ///
  /// A token without a known expiry is always valid.
  public func isValid(forAtLeast seconds: Double, clock: some WallClock) -> Bool {
    guard let expiresAt else { return true }
    return expiresAt.timeIntervalSince(clock.now) >= seconds
  }

  /// How long the access token lived when issued, if known.
  public var lifetime: Double? {
    guard let expiresAt, let issuedAt else { return nil }
    return expiresAt.timeIntervalSince(issuedAt)
  }

  /// How long before expiry a token counts as due for refresh when the caller names no
  /// margin: one minute, or a tenth of the lifetime for tokens shorter than ten minutes,
  /// so that a token issued for two minutes is not refreshed on every call.
  public var defaultRefreshMargin: Double {
    guard let lifetime, lifetime > 0 else { return Self.standardRefreshMargin }
    return min(Self.standardRefreshMargin, lifetime / 10)
  }

  /// One minute covers a request's round trip and ordinary clock skew.
  public static let standardRefreshMargin: Double = 60

  /// What `list` shows without reading the secret: derived here, stored beside it.
  public var summary: TokenSummary {
    TokenSummary(expiresAt: expiresAt, refreshable: refreshToken != nil)
  }
}

extension TokenSet: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
  public var description: String {
    var parts = ["access_token: <redacted>"]
    if refreshToken != nil { parts.append("refresh_token: <redacted>") }
    if idToken != nil { parts.append("id_token: <redacted>") }
    if let expiresAt { parts.append("expires_at: \(Int(expiresAt.timeIntervalSince1970))") }
    parts.append("token_type: \(tokenType)")
    return "TokenSet(\(parts.joined(separator: ", ")))"
  }
  public var debugDescription: String { description }
  // `dump()` and test failure messages go through the mirror: show no tokens there either.
  public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

extension TokenSet {
  /// What a store keeps of a token for other scopes (``TokenStore/saveToken(_:scopes:of:)``):
  /// all but the refresh token and the ID token, which belong to the account's own item.
  public var withoutGrant: TokenSet {
    var kept = self
    kept.refreshToken = nil
    kept.idToken = nil
    return kept
  }
}
