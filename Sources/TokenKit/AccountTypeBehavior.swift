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

  /// Parameters to add to an authorization request, knowing whether the user already has
  /// an account of this type with a refresh token (a provider may send a refresh token
  /// only on the first consent unless asked again).
  func authorizationParameters(hasRefreshableAccount: Bool) -> [String: String]
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

  public func identity(claims: IDTokenClaims) -> AccountIdentity? { nil }

  public var revokesTokens: Bool { false }

  public func normalized(_ response: TokenResponse) -> TokenResponse { response }
}
