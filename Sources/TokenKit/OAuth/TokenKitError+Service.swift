extension TokenKitError {
  /// The user-facing error for a failed exchange while doing `action` ("refresh the
  /// tokens of corp:ada@example.org").
  ///
  /// Only a rejected grant says anything about the stored tokens; every other failure
  /// says they are unchanged, because they are. `signingInAgainTo`, the account's type, is
  /// given when a stored grant was presented (a refresh token): only then does
  /// `invalid_grant` mean the account needs a new sign-in. Without it, a sign-in's own code
  /// or device code was refused.
  public init(_ error: AuthorizationServiceError, while action: String, signingInAgainTo type: String? = nil) {
    let unchanged = "The stored tokens are unchanged."
    switch error {
    case .transport(let transport) where transport.kind == .tls:
      // The network got there: what failed is the address's scheme or port, or the
      // server's certificate, which trying again does not change.
      self.init(
        .networkFailure, "could not \(action): \(transport.message)",
        recovery: "Check the server's address (https or http, and the port) and its certificate. \(unchanged)")
    case .transport(let transport):
      self.init(
        .networkFailure, "could not \(action): \(transport.message)",
        recovery: "Check the network connection and try again. \(unchanged)")
    case .oauth(let oauth, _) where oauth.code == OAuthError.invalidGrant && type == nil:
      self.init(
        .signInFailed,
        "the authorization server refused the grant (\(oauth)) while trying to \(action)" + Self.reference(oauth),
        recovery: "Sign in again from the start: a code is good for one use, and briefly.")
    case .oauth(let oauth, _) where oauth.code == OAuthError.invalidGrant:
      self.init(
        .needsSignIn,
        "the authorization server no longer accepts the grant (\(oauth)) while trying to \(action)"
          + Self.reference(oauth),
        remedy: .signIn(type: type, device: false))
    case .oauth(let oauth, _) where OAuthError.needsInteraction.contains(oauth.code) && type != nil:
      // The grant may be fine, but the server will not honour it until the user has been
      // there in person (a new factor, a new consent): the same remedy as a dead grant.
      self.init(
        .needsSignIn,
        "the authorization server wants you to sign in again in person (\(oauth)) while trying to \(action)"
          + Self.reference(oauth),
        remedy: .signIn(type: type, device: false))
    case .oauth(let oauth, _) where oauth.code == OAuthError.accessDenied:
      self.init(.accessDenied, "access was denied while trying to \(action) (\(oauth))" + Self.reference(oauth))
    case .oauth(let oauth, _) where oauth.code == OAuthError.invalidScope:
      self.init(
        .scopeRefused,
        "the authorization server refused the scope asked for (\(oauth)) while trying to \(action)"
          + Self.reference(oauth),
        recovery: "Ask only for scopes the server grants this client. \(unchanged)")
    case .oauth(let oauth, _) where oauth.code == "invalid_client" || oauth.code == "unauthorized_client":
      self.init(
        .serverError,
        "the authorization server does not accept this client (\(oauth)) while trying to \(action)"
          + Self.reference(oauth),
        recovery: "Check the client id and secret configured for this account type. \(unchanged)")
    case .oauth(let oauth, let status) where RetryPolicy.retryable(error) != nil:
      self.init(
        .serverError,
        "the authorization server is busy or down for maintenance (\(oauth), HTTP \(status)) while trying to "
          + "\(action)" + Self.reference(oauth),
        recovery: Self.wait(oauth.retryAfter) + unchanged)
      self.retryAfter = oauth.retryAfter.map(Double.init)
    case .oauth(let oauth, let status):
      self.init(
        .serverError,
        "the authorization server refused to \(action): \(oauth) (HTTP \(status))" + Self.reference(oauth),
        recovery: unchanged)
    case .httpStatus(let status, let retryAfter, let mediaType):
      let what = mediaType.map { " with \(ServerText.escaped($0))" } ?? ""
      self.init(
        .serverError, "the authorization server answered HTTP \(status)\(what) while trying to \(action)",
        recovery: (status >= 500 || status == 429 ? Self.wait(retryAfter) : "") + unchanged)
      self.retryAfter = retryAfter.map(Double.init)
    case .issuerMismatch(let named, let asked):
      // Not the server's fault when it is the same server spelt another way: say what
      // differs. Either way nothing is used: the document's endpoints are not trusted.
      let shown = ServerText.escaped(named)
      if let difference = Self.difference(between: named, and: asked) {
        self.init(
          .notConfigured,
          "the server's discovery document names its issuer \(shown), not \(asked) as given (\(difference)), "
            + "while trying to \(action); the issuer must be named exactly as the server names it",
          remedy: .nameIssuer(named))
      } else {
        self.init(
          .serverError,
          "could not \(action): the discovery document is for issuer \(shown), not \(asked)",
          recovery: "The server misbehaved, or is not the one meant; nothing was sent to it. \(unchanged)")
      }
    case .unusableTokens(let problem):
      self.init(
        .serverError, "could not \(action): \(problem)",
        recovery: "The server misbehaved, or is not the one meant: tell its administrator. \(unchanged)")
    case .malformedResponse(let problem):
      self.init(
        .serverError, "could not \(action): \(problem)",
        recovery: "The server misbehaved; try again later. \(unchanged)")
    }
    if case .oauth(let oauth, _) = error { oauthError = oauth }
  }

  /// How `named` differs from `asked` when they are the same server spelt another way: a
  /// trailing slash, or the case of the scheme and host (which URLs ignore, but issuer
  /// comparison does not, RFC 8414 §3.3). Nil for two different servers.
  static func difference(between named: String, and asked: String) -> String? {
    func trimmed(_ text: String) -> Substring {
      var text = Substring(text)
      while text.hasSuffix("/") { text = text.dropLast() }
      return text
    }
    if trimmed(named) == trimmed(asked) {
      return named.hasSuffix("/") ? "the server's ends with a slash" : "the server's has no trailing slash"
    }
    if trimmed(named).lowercased() == trimmed(asked).lowercased() { return "they differ in upper and lower case" }
    return nil
  }

  /// When to try again, as the server said or else vaguely.
  static func wait(_ retryAfter: Int?) -> String {
    retryAfter.map { "Try again in \($0) s. " } ?? "Try again later. "
  }

  /// The server's own reference for the failure (the lines after its description's
  /// first), on a line of its own: support asks for it, and it is no part of the sentence.
  static func reference(_ oauth: OAuthError) -> String {
    oauth.details.map { "\nThe server's reference: \($0)" } ?? ""
  }
}
