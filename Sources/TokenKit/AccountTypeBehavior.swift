/// What an account type does beyond what its descriptor can say: the provider's own ways
/// of naming the user or revoking a token, supplied by its plugin. The core calls these
/// only where the standards leave a gap, so a type without a behavior is fully standard.
public protocol AccountTypeBehavior: Sendable {
  /// Who signed in, for servers that issue no ID token and have no userinfo endpoint
  /// (a REST call such as `GET /user`). Nil means "use the standard ways".
  func identity(
    accessToken: String, configuration: ServiceConfiguration, transport: any HTTPTransport
  )
    async throws -> AccountIdentity?

  /// The identity an ID token states, for providers whose `sub` is not the identifier
  /// users and other tools know (a pairwise `sub`). Nil means `iss` + `sub`.
  func identity(claims: IDTokenClaims) -> AccountIdentity?

  /// The token response as the standard reads it, for providers that deviate in form
  /// (granted scopes separated by commas).
  func normalized(_ response: TokenResponse) -> TokenResponse

  /// Whether `revoke` does anything: signing out of a type that cannot revoke needs no
  /// client configuration, so it is not resolved.
  var revokesTokens: Bool { get }

  /// Revokes `tokens` for a type without an RFC 7009 endpoint. Returns false when the
  /// type cannot revoke at all.
  func revoke(
    _ tokens: TokenSet, configuration: ServiceConfiguration, transport: any HTTPTransport
  )
    async throws -> Bool

  /// The error as the standards name it, for a provider that says a standard thing its
  /// own way (an `invalid_grant` whose extension member says consent is needed, which
  /// OpenID Connect calls `consent_required`). The core decides what an error means from
  /// the standard code only.
  func normalized(_ error: OAuthError) -> OAuthError

  /// What to do about `error` when only the provider's own documentation says (a setting
  /// of the app's registration), in words that name no front end's commands; nil: the
  /// core's generic advice.
  func advice(for error: OAuthError) -> String?

  /// For a type whose fixed endpoints serve many issuers, one per tenant (an authority
  /// whose issuer the descriptor leaves open): the endpoints of the tenant behind
  /// `issuer`, made from `configured`. An account keeps talking to the tenant it signed in
  /// at, whatever the type's settings name now: a refresh token need not be bound to a
  /// tenant, and another tenant would issue tokens for another principal. Nil when the
  /// authority `configured` names does not issue `issuer` (another host, another cloud):
  /// nothing of the account may be sent there. The default, for types of one issuer:
  /// `configured`.
  func endpoints(_ configured: Endpoints, forIssuer issuer: String) -> Endpoints?

  /// Why the client credentials grant (RFC 6749 §4.4) cannot work with `configuration` as
  /// set up, said before anything is sent; nil: it can.
  func clientCredentialsProblem(_ configuration: ServiceConfiguration) -> TokenKitError?

  /// Parameters to add to an authorization request, knowing whether the user already has
  /// an account of this type with a refresh token (a provider may send a refresh token
  /// only on the first consent unless asked again).
  func authorizationParameters(hasRefreshableAccount: Bool) -> [String: String]

  /// Parameters to add to an authorization request that signs in `again`, an account kept
  /// before (the user repairing it), or a new account when nil: a provider whose browser
  /// session signs its last user in again without asking must be told to let the person
  /// choose for a new account, and which user it is for a repair (OpenID Connect Core
  /// §3.1.2.1 `prompt`, `login_hint`). They win over the core's `login_hint`. The default:
  /// ``authorizationParameters(hasRefreshableAccount:)``.
  func authorizationParameters(hasRefreshableAccount: Bool, signingInAgain again: Account?) -> [String: String]

  /// What the provider's answers to requests that sign no one in show about the client's
  /// registration (``RegistrationFinding``), for a diagnosis before anyone signs in; each
  /// setting the provider's documentation names but no such answer shows is a finding of
  /// verdict `unknown` that says where to look. Nothing secret is sent. The default: none.
  func registrationFindings(
    _ configuration: ServiceConfiguration, transport: any HTTPTransport
  ) async
    -> [RegistrationFinding]
}

extension AccountTypeBehavior {
  public func identity(
    accessToken: String, configuration: ServiceConfiguration, transport: any HTTPTransport
  )
    async throws -> AccountIdentity?
  { nil }

  public func revoke(
    _ tokens: TokenSet, configuration: ServiceConfiguration, transport: any HTTPTransport
  )
    async throws -> Bool
  { false }

  public func authorizationParameters(hasRefreshableAccount: Bool) -> [String: String] { [:] }

  public func authorizationParameters(hasRefreshableAccount: Bool, signingInAgain again: Account?) -> [String: String] {
    authorizationParameters(hasRefreshableAccount: hasRefreshableAccount)
  }

  public func identity(claims: IDTokenClaims) -> AccountIdentity? { nil }

  public var revokesTokens: Bool { false }

  public func normalized(_ response: TokenResponse) -> TokenResponse { response }

  public func normalized(_ error: OAuthError) -> OAuthError { error }

  public func advice(for error: OAuthError) -> String? { nil }

  public func clientCredentialsProblem(_ configuration: ServiceConfiguration) -> TokenKitError? { nil }

  public func endpoints(_ configured: Endpoints, forIssuer issuer: String) -> Endpoints? { configured }

  public func registrationFindings(
    _ configuration: ServiceConfiguration, transport: any HTTPTransport
  ) async
    -> [RegistrationFinding]
  { [] }
}
