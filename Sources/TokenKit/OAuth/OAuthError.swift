/// An error response from an authorization server (RFC 6749 §4.1.2.1 and §5.2, RFC 8628
/// §3.5, RFC 7009 §2.2.1).
public struct OAuthError: Error, Sendable, Hashable, CustomStringConvertible {
  /// `error`: `invalid_grant`, `access_denied`, `authorization_pending`, …
  public var code: String
  /// `error_description`: text from the server for a developer, shortened and with its
  /// control characters and line breaks escaped (``ServerText``), since it reaches the
  /// user's terminal; so are `error` and `error_uri`.
  public var errorDescription: String?
  /// `error_uri`.
  public var errorURI: String?

  public init(code: String, errorDescription: String? = nil, errorURI: String? = nil) {
    self.code = ServerText.escaped(code)
    self.errorDescription = errorDescription.map { ServerText.escaped($0) }
    self.errorURI = errorURI.map { ServerText.escaped($0) }
  }

  /// `invalid_grant` (§5.2): the refresh token or code is expired, revoked, or was issued
  /// to another client. Only a new sign-in helps.
  public static let invalidGrant = "invalid_grant"
  /// `invalid_scope` (§5.2): a scope asked for is unknown, malformed, or exceeds what the
  /// resource owner granted.
  public static let invalidScope = "invalid_scope"
  /// `access_denied` (§4.1.2.1, RFC 8628 §3.5).
  public static let accessDenied = "access_denied"
  /// RFC 8628 §3.5: keep polling.
  public static let authorizationPending = "authorization_pending"
  /// RFC 8628 §3.5: keep polling, 5 s more slowly.
  public static let slowDown = "slow_down"
  /// RFC 8628 §3.5: the device code expired.
  public static let expiredToken = "expired_token"

  public var description: String {
    guard let errorDescription, !errorDescription.isEmpty else { return code }
    return "\(code): \(errorDescription)"
  }
}
