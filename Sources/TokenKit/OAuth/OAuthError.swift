/// An error response from an authorization server (RFC 6749 §4.1.2.1 and §5.2, RFC 8628
/// §3.5, RFC 7009 §2.2.1).
public struct OAuthError: Error, Sendable, Hashable, CustomStringConvertible {
  /// `error`: `invalid_grant`, `access_denied`, `authorization_pending`, …
  public var code: String
  /// The first line of `error_description`: text from the server for a developer,
  /// shortened and with its control characters escaped (``ServerText``), since it reaches
  /// the user's terminal; so are `error` and `error_uri`.
  public var errorDescription: String?
  /// The description's further lines, joined by "; " (escaped, shortened): servers put
  /// references for their support there (a trace id, a correlation id, a time), which
  /// are worth keeping but not worth a message cut in the middle of its sentence.
  public var details: String?
  /// `error_uri`.
  public var errorURI: String?
  /// The response's other string members, escaped (a provider's `suberror`): for the
  /// account type's plugin to read its provider's extensions, never the core.
  public var otherMembers: [String: String]
  /// Seconds the response's `Retry-After` header asked us to wait (RFC 9110 §10.2.3), when
  /// it carried one: the error body does not make the header any less meant.
  public var retryAfter: Int?

  public init(
    code: String, errorDescription: String? = nil, errorURI: String? = nil, otherMembers: [String: String] = [:],
    retryAfter: Int? = nil
  ) {
    self.code = ServerText.escaped(code)
    if let errorDescription {
      let lines = Self.lines(errorDescription)
      self.errorDescription = lines.first.map { ServerText.escaped($0) }
      self.details = lines.count > 1 ? ServerText.escaped(lines.dropFirst().joined(separator: "; ")) : nil
    } else {
      self.errorDescription = nil
      self.details = nil
    }
    self.errorURI = errorURI.map { ServerText.escaped($0) }
    self.otherMembers = otherMembers.mapValues { ServerText.escaped($0) }
    self.retryAfter = retryAfter
  }

  /// The non-empty lines of `text`, trimmed, whatever ends them (CR LF, LF, CR).
  private static func lines(_ text: String) -> [String] {
    text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
      .map { line in
        String(line.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
      }
      .filter { !$0.isEmpty }
  }

  /// `invalid_grant` (§5.2): the refresh token or code is expired, revoked, or was issued
  /// to another client. Only a new sign-in helps.
  public static let invalidGrant = "invalid_grant"
  /// `invalid_client` (§5.2): client authentication failed, or the server does not know
  /// the client.
  public static let invalidClient = "invalid_client"
  /// `unauthorized_client` (§5.2, RFC 8628 §3.2): the client may not use this grant; a
  /// client registered for the authorization code grant alone gets it for the device grant.
  public static let unauthorizedClient = "unauthorized_client"
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
  /// §4.1.2.1: the server is overloaded or down for maintenance; servers send it from the
  /// token endpoint too. Worth asking again, after `Retry-After` when given.
  public static let temporarilyUnavailable = "temporarily_unavailable"
  /// OpenID Connect Core §3.1.2.6: the server needs the user, in person, before it issues
  /// tokens again (`interaction_required`, `login_required`, `consent_required`,
  /// `account_selection_required`). Sent for a refresh, they mean a new interactive
  /// sign-in, not a fault of the server; for a token for other scopes, `consent_required`
  /// concerns those scopes only.
  public static let interactionRequired = "interaction_required"
  public static let loginRequired = "login_required"
  public static let consentRequired = "consent_required"
  public static let accountSelectionRequired = "account_selection_required"
  /// The four codes above.
  public static let needsInteraction: Set<String> = [
    interactionRequired, loginRequired, consentRequired, accountSelectionRequired,
  ]

  public var description: String {
    guard let errorDescription, !errorDescription.isEmpty else { return code }
    return "\(code): \(errorDescription)"
  }
}
