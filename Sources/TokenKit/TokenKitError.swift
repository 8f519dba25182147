/// An error from tokenctl's core or one of its stores.
///
/// A struct around a private code, as async-http-client does, so that adding a case later
/// breaks no caller. Every error says what went wrong in `message` and, where the user
/// can do something about it, what to do next: as a fact in `remedy`, for a front end to
/// word in its own terms, and in plain words in `recovery`. None ever holds a secret.
public struct TokenKitError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure this is; compare against the static members.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Raw: String, Hashable, Sendable {
      case noSuchAccount = "no-such-account"
      case ambiguousAccount = "ambiguous-account"
      case unknownAccountType = "unknown-account-type"
      case duplicateAccountType = "duplicate-account-type"
      case invalidDescriptor = "invalid-descriptor"
      case tokenNotValid = "token-not-valid"
      case keyringLocked = "keyring-locked"
      case keyringUnavailable = "keyring-unavailable"
      case corruptItem = "corrupt-item"
      case storeFailure = "store-failure"
      case unusableFile = "unusable-file"
      case invalidArgument = "invalid-argument"
      case agentFailure = "agent-failure"
      case internalFailure = "internal-failure"
      case notConfigured = "not-configured"
      case signInFailed = "sign-in-failed"
      case signInTimedOut = "sign-in-timed-out"
      case accessDenied = "access-denied"
      case needsSignIn = "needs-sign-in"
      case serverError = "server-error"
      case networkFailure = "network-failure"
      case invalidIDToken = "invalid-id-token"
      case revocationFailed = "revocation-failed"
      case scopeRefused = "scope-refused"
    }
    private let raw: Raw
    private init(_ raw: Raw) { self.raw = raw }

    /// No account matches the name given.
    public static let noSuchAccount = Code(.noSuchAccount)
    /// More than one account matches the name given.
    public static let ambiguousAccount = Code(.ambiguousAccount)
    /// No account type is registered under that id.
    public static let unknownAccountType = Code(.unknownAccountType)
    /// Two sources register the same account type id.
    public static let duplicateAccountType = Code(.duplicateAccountType)
    /// An endpoint descriptor is incomplete or contradicts itself.
    public static let invalidDescriptor = Code(.invalidDescriptor)
    /// The stored access token is expired or not valid for long enough.
    public static let tokenNotValid = Code(.tokenNotValid)
    /// The keyring holding the tokens is locked.
    public static let keyringLocked = Code(.keyringLocked)
    /// There is no session bus, no Secret Service, or no default keyring.
    public static let keyringUnavailable = Code(.keyringUnavailable)
    /// A stored item cannot be read: unknown format version or malformed content.
    public static let corruptItem = Code(.corruptItem)
    /// The token store (the keyring) failed for another reason than those above.
    public static let storeFailure = Code(.storeFailure)
    /// A local file or directory is unsafe to use (a symbolic link, another user's, open to
    /// others, not a file of its kind) or could not be read or written.
    public static let unusableFile = Code(.unusableFile)
    /// An argument names nothing that can be used as what it stands for: an application
    /// that is no program, an app id no Flatpak app can have.
    public static let invalidArgument = Code(.invalidArgument)
    /// The agent could not be started or stopped, or another one holds its socket.
    public static let agentFailure = Code(.agentFailure)
    /// A process of tokenctl's own failed the process that relied on it: a refresh child
    /// ended without a report, or a lock was held too long.
    public static let internalFailure = Code(.internalFailure)
    /// The account type lacks something to sign in with: a client id, an issuer.
    public static let notConfigured = Code(.notConfigured)
    /// The authorization response was unusable: wrong `iss`, no code, a malformed answer.
    public static let signInFailed = Code(.signInFailed)
    /// The user did not finish signing in before the timeout.
    public static let signInTimedOut = Code(.signInTimedOut)
    /// The user or the server refused the authorization (`access_denied`).
    public static let accessDenied = Code(.accessDenied)
    /// The refresh token was rejected (`invalid_grant`): only a new sign-in helps.
    public static let needsSignIn = Code(.needsSignIn)
    /// The server answered with an OAuth error or a response that is not one.
    public static let serverError = Code(.serverError)
    /// No response: DNS, connection, timeout, TLS.
    public static let networkFailure = Code(.networkFailure)
    /// The ID token failed a check of OpenID Connect Core §3.1.3.7.
    public static let invalidIDToken = Code(.invalidIDToken)
    /// The revocation endpoint refused or could not be reached.
    public static let revocationFailed = Code(.revocationFailed)
    /// The authorization server refused a scope asked for (`invalid_scope`, RFC 6749
    /// §5.2): it is unknown, or beyond what the grant covers.
    public static let scopeRefused = Code(.scopeRefused)

    /// A stable, machine-readable name (used in `--json` error output).
    public var description: String { raw.rawValue }

    /// The code of that name, as `description` gives it.
    public init?(name: String) {
      guard let raw = Raw(rawValue: name) else { return nil }
      self.raw = raw
    }
  }

  public let code: Code
  /// What went wrong, in one sentence.
  public let message: String
  /// What the user can do next, if anything, in words that name no front end's commands.
  public let recovery: String?
  /// What the user can do next as a fact (the account, type, setting or action involved),
  /// for a front end to word; its `advice` is `recovery` when no other is given.
  public let remedy: Remedy?
  /// Seconds the server asked us to wait before trying again (`Retry-After`), when it did:
  /// whoever retries on their own, such as the agent refreshing ahead, waits at least that.
  public var retryAfter: Double?
  /// The authorization server's error this one reports, when it reports one: for an
  /// account type's plugin to add what its provider's documentation says about it.
  public var oauthError: OAuthError?

  public init(_ code: Code, _ message: String, recovery: String? = nil, remedy: Remedy? = nil) {
    self.code = code
    self.message = message
    self.recovery = recovery ?? remedy?.advice
    self.remedy = remedy
  }

  /// The same error with other advice.
  public func with(recovery: String? = nil, remedy: Remedy?) -> TokenKitError {
    var copy = TokenKitError(code, message, recovery: recovery, remedy: remedy)
    copy.retryAfter = retryAfter
    copy.oauthError = oauthError
    return copy
  }

  public var description: String {
    guard let recovery else { return message }
    return "\(message)\n\(recovery)"
  }
}
