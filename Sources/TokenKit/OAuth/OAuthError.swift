/// An error response from an authorization server (RFC 6749 §4.1.2.1 and §5.2, RFC 8628
/// §3.5, RFC 7009 §2.2.1).
public struct OAuthError: Error, Sendable, Hashable, CustomStringConvertible {
  /// `error`: `invalid_grant`, `access_denied`, `authorization_pending`, …
  public var code: String
  /// `error_description`: text from the server for a developer, shortened and stripped of
  /// control characters because it reaches the user's terminal.
  public var errorDescription: String?
  /// `error_uri`.
  public var errorURI: String?

  public init(code: String, errorDescription: String? = nil, errorURI: String? = nil) {
    self.code = code
    self.errorDescription = errorDescription.map(Self.clean)
    self.errorURI = errorURI.map(Self.clean)
  }

  /// `invalid_grant` (§5.2): the refresh token or code is expired, revoked, or was issued
  /// to another client. Only a new sign-in helps.
  public static let invalidGrant = "invalid_grant"
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

  // A server's text is shown to the user: keep it to one printable line of bounded length.
  private static func clean(_ text: String) -> String {
    let printable = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
    return printable.count > 300 ? String(printable.prefix(300)) + "…" : printable
  }
}
