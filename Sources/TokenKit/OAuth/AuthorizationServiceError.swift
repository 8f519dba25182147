/// Why an exchange with an authorization server produced nothing usable.
///
/// Kept apart from `TokenKitError` so that callers can tell what the server said
/// (`.oauth`) from what the network did (`.transport`): only the first may invalidate an
/// account, as AppAuth does.
public enum AuthorizationServiceError: Error, Sendable, Hashable {
  /// No HTTP response at all.
  case transport(TransportError)
  /// The server answered with an OAuth error.
  case oauth(OAuthError, status: Int)
  /// An HTTP error status without an OAuth error body (a 5xx, a proxy's 502 page).
  /// `retryAfter` is the `Retry-After` header in seconds, when given.
  case httpStatus(Int, retryAfter: Int?, mediaType: String?)
  /// A success status with a body that is not the expected JSON: what was wrong.
  case malformedResponse(String)
  /// A token response that parsed, with tokens that must not be used as they came
  /// (``TokenResponse/syntaxProblem``): what was wrong and what became of them. Not a
  /// passing fault: the same server will answer the same way, so nothing is retried.
  case unusableTokens(String)
  /// The discovery document names another issuer than the one asked for (RFC 8414 §3.3,
  /// OpenID Connect Discovery §4.3): `named` is the document's, `asked` the URL it was
  /// fetched for. Often the same server spelt another way (a trailing slash).
  case issuerMismatch(named: String, asked: String)
}
