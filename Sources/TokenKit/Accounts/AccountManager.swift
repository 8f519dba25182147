#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The account store of a desktop tool: sign in to an account type, list the accounts,
/// get fresh tokens, sign out. NXOAuth2AccountStore's role, for Swift on Linux.
///
/// The walkthrough's flow — configure the type, request access, use the token — reads
/// as below, here with the OpenID Connect type; `Examples/GraphSearch` is the whole app,
/// on the walkthrough's own provider.
///
/// ```swift
/// import NativeAppSupport
/// import OpenIDConnectAccount
/// import SecretServiceStore
/// import TokenKit
///
/// var registry = AccountTypeRegistry()
/// try registry.register(OpenIDConnectPlugin.self)           // the "account type"
/// let directories = XDGDirectories(environment: environment)
/// let manager = AccountManager(
///   registry: registry, store: SecretServiceTokenStore(group: "default"),
///   transport: CurlHTTPTransport(), clock: SystemClock(),
///   locks: FileAccountLocks(directories: directories),       // tokenctl's, so one refresh at a time
///   discoveryCache: FileDiscoveryCache(directories: directories))
///
/// // requestAccessToAccountWithType: the browser opens, the user signs in.
/// let listener = try LoopbackRedirectListener()
/// let account = try await manager.signIn(
///   type: "oidc", options: SignInOptions(clientID: "my-app", issuer: "https://id.example.org"),
///   method: .browser(receiver: listener) { url in
///     BrowserLauncher(environment: environment).open(url.absoluteString)
///   })
///
/// // Later, in any process sharing the group: a token valid for at least a minute,
/// // refreshed first if needed, with one refresh across all processes.
/// let tokens = try await manager.freshTokens(for: account.key, minimumValidity: 60)
/// let header = "Authorization: Bearer \(tokens.accessToken)"
///
/// // Watch what happens to accounts, as NXOAuth2AccountStore's notifications did.
/// for await event in manager.events.events() { print(event) }
///
/// // Sign out: revoke at the server (RFC 7009) when the type can, then forget it.
/// try await manager.signOut(account.key)
/// ```
public struct AccountManager: Sendable {
  public var registry: AccountTypeRegistry
  public var store: any TokenStore
  public var transport: any HTTPTransport
  public var clock: any WallClock
  public var locks: any AccountLocking
  public var discovery: MetadataDiscovery
  public var events: AccountEventCenter
  /// Waits a sign-in makes on its own: the pause before asking about a client registered
  /// moments ago once more (``RecentRegistration``). Injected so that tests do not wait.
  public var sleep: @Sendable (Double) async throws -> Void = { try await Task.sleep(for: .seconds($0)) }
  /// Where refreshes run once their lock is held (see ``RefreshIsolation``); nil: here.
  public var refreshIsolation: (any RefreshIsolation)?
  /// For tests only: see ``TokenRefresher/pauseForTests``.
  public var pauseForTests: (@Sendable (AccountKey) -> Void)?
  /// For tests only: called once a sign-in's tokens are issued and before the store is
  /// read or written, where a fault leaves a grant nobody holds.
  public var pauseSignInForTests: (@Sendable (AccountKey) -> Void)?

  public init(
    registry: AccountTypeRegistry, store: any TokenStore, transport: any HTTPTransport,
    clock: any WallClock, locks: any AccountLocking, discoveryCache: (any DiscoveryCache)?,
    events: AccountEventCenter = AccountEventCenter()
  ) {
    self.registry = registry
    self.store = store
    self.transport = transport
    self.clock = clock
    self.locks = locks
    self.discovery = MetadataDiscovery(transport: transport, cache: discoveryCache, clock: clock)
    self.events = events
  }

  var refresher: TokenRefresher {
    var refresher = TokenRefresher(
      registry: registry, store: store, transport: transport, clock: clock, locks: locks, discovery: discovery,
      events: events)
    refresher.isolation = refreshIsolation
    refresher.pauseForTests = pauseForTests
    return refresher
  }

  // MARK: Signing in

  /// The account type's configuration as a sign-in with `options` would use it: its
  /// endpoints (discovered if need be) and client.
  public func configuration(
    type: String, options: SignInOptions = SignInOptions()
  ) async throws
    -> ServiceConfiguration
  {
    try await ServiceConfiguration.resolve(
      try registry.descriptor(type), issuer: options.issuer, clientID: options.clientID,
      clientSecret: options.clientSecret, discovery: discovery)
  }

  /// Signs in to an account type and stores the account; signing in again as the same
  /// user updates that account rather than adding another.
  @discardableResult
  public func signIn(
    type: String, options: SignInOptions = SignInOptions(), method: SignInMethod
  )
    async throws -> Account
  {
    do {
      return try await performSignIn(type: type, options: options, method: method)
    } catch let error as TokenKitError {
      throw advised(error, type: type)
    }
  }

  /// `error` with the advice the account type's plugin has for the server's error in it.
  func advised(_ error: TokenKitError, type: String) -> TokenKitError {
    guard let advice = registry.advice(for: error, type: type) else { return error }
    return error.with(recovery: advice, remedy: nil)
  }

  /// The error for a failed exchange, with the advice the account type's plugin has.
  func explained(_ error: AuthorizationServiceError, while action: String, type: String) -> TokenKitError {
    advised(TokenKitError(error, while: action), type: type)
  }

  private func performSignIn(
    type: String, options: SignInOptions, method: SignInMethod
  )
    async throws -> Account
  {
    let descriptor = try registry.descriptor(type)
    var configuration = try await ServiceConfiguration.resolve(
      descriptor, issuer: options.issuer, clientID: options.clientID, clientSecret: options.clientSecret,
      discovery: discovery)
    // A repair signs in where the account lives, as its refreshes go there: for a type of
    // one authority and many issuers, the tenant of the account's issuer, whatever tenant
    // the type's settings name now.
    if let again = options.signingInAgain, let issuer = again.issuer, let behavior = registry.behavior(type),
      let own = behavior.endpoints(configuration.endpoints, forIssuer: issuer)
    {
      configuration.endpoints = own
    }
    let scopes =
      options.scopes ?? (method.isClientCredentials ? descriptor.clientCredentialsScopes : nil)
      ?? (method.isClientCredentials ? descriptor.defaultScopes : descriptor.signInScopes)
    var response: TokenResponse
    var nonce: String?
    switch method {
    case .browser(let receiver, let bareCodeAllowed, let presentURL):
      var configuration = configuration
      if let loginHint = options.loginHint {
        configuration.descriptor.additionalAuthorizationParameters["login_hint"] = loginHint
      }
      if descriptor.offlineAccessNeedsConsent {
        // The account signed in again, if any: a new sign-in has no refresh token yet, and
        // one that needs a sign-in holds a refresh token the server refused.
        var refreshToken = false
        if let again = options.signingInAgain, let stored = try store.load(again.key) {
          refreshToken = stored.tokens.refreshToken != nil && !stored.account.needsSignIn
        }
        configuration.descriptor.additionalAuthorizationParameters.merge(
          OfflineAccessConsent.parameters(
            scopes: scopes, accountHasRefreshToken: refreshToken,
            configured: configuration.descriptor.additionalAuthorizationParameters)
        ) { $1 }
      }
      if let behavior = registry.behavior(type) {
        let refreshable = try store.list(AccountQuery(type: type)).contains { $0.tokens.refreshable }
        configuration.descriptor.additionalAuthorizationParameters.merge(
          behavior.authorizationParameters(hasRefreshableAccount: refreshable, signingInAgain: options.signingInAgain)
        ) { $1 }
      }
      var flow = AuthorizationCodeFlow(
        configuration: configuration, scopes: scopes, receiver: receiver, transport: transport,
        timeout: options.timeout, bareCodeAllowed: bareCodeAllowed, presentURL: presentURL)
      flow.recentRegistration = recentRegistration(options, configuration, sleep: sleep)
      let (tokens, request) = try await flow.run()
      response = tokens
      nonce = request.nonce
    case .device(let present, let sleep):
      guard configuration.endpoints.deviceAuthorization != nil else {
        // The issuer's own metadata decides, not the type: the same type at another
        // issuer may offer it.
        let server = configuration.endpoints.issuer.map { "the server at \($0)" } ?? "account type '\(type)'"
        throw TokenKitError(
          .notConfigured,
          "\(server) does not offer the device authorization grant (no device_authorization_endpoint)",
          remedy: .signInAnotherWay(type: type, device: false))
      }
      var flow = DeviceAuthorizationFlow(
        configuration: configuration, scopes: scopes, transport: transport, clock: clock,
        timeout: Double(options.timeout.components.seconds), sleep: sleep, present: present)
      flow.recentRegistration = recentRegistration(options, configuration, sleep: sleep)
      response = try await flow.run()
    case .clientCredentials:
      guard configuration.client.secret != nil else {
        throw TokenKitError(
          .notConfigured, "account type '\(type)' has no client secret, which the client credentials grant needs",
          remedy: .configure(type: type, setting: "client_secret"))
      }
      if let problem = registry.behavior(type)?.clientCredentialsProblem(configuration) { throw problem }
      do {
        response = try await configuration.service(transport: transport).token(.clientCredentials(scope: scopes))
      } catch .oauth(let oauth, _) where oauth.code == OAuthError.invalidScope && scopes.isEmpty {
        // None was asked for (RFC 6749 §4.4.2 lets a client name none): the server wants
        // one named, which only its administrator knows.
        var error = TokenKitError(
          .scopeRefused,
          "the authorization server wants a scope named, and none was asked for (\(oauth)) while trying to get a "
            + "token for client \(configuration.client.id)" + TokenKitError.reference(oauth),
          remedy: .nameScope(type: type))
        error.oauthError = oauth
        throw advised(error, type: type)
      } catch {
        throw explained(error, while: "get a token for client \(configuration.client.id)", type: type)
      }
    }
    if let behavior = registry.behavior(type) { response = behavior.normalized(response) }
    let identity: AccountIdentity
    if method.isClientCredentials {
      identity = AccountIdentity(
        id: configuration.client.id, name: configuration.client.id, issuer: configuration.issuer)
    } else {
      identity = try await self.identity(of: response, nonce: nonce, configuration: configuration)
    }
    do {
      return try save(
        response, identity: identity, scopes: scopes, configuration: configuration,
        isServiceAccount: method.isClientCredentials)
    } catch {
      // The server issued a grant the keyring did not take: it must not outlive the
      // sign-in unseen, a live refresh token nobody holds.
      throw await unstored(response, configuration: configuration, storeError: error)
    }
  }

  /// The client of `configuration` as one registered moments ago, when `options` say when
  /// tokenctl registered it.
  private func recentRegistration(
    _ options: SignInOptions, _ configuration: ServiceConfiguration,
    sleep: @escaping @Sendable (Double) async throws -> Void
  ) -> RecentRegistration? {
    options.clientRegisteredAt.map {
      RecentRegistration(clientID: configuration.client.id, registeredAt: $0, clock: clock, sleep: sleep)
    }
  }

  private func save(
    _ response: TokenResponse, identity: AccountIdentity, scopes: [String], configuration: ServiceConfiguration,
    isServiceAccount: Bool
  ) throws -> Account {
    let now = clock.now
    let key = AccountKey(type: configuration.descriptor.id, id: identity.id)
    pauseSignInForTests?(key)
    let existing = try store.load(key)
    let account = Account(
      type: key.type, id: key.id, name: identity.name, group: store.group, scopes: response.scope ?? scopes,
      createdAt: existing?.account.createdAt ?? now, updatedAt: now, issuer: identity.issuer,
      clientID: configuration.client.id, isServiceAccount: isServiceAccount,
      authority: Self.authority(of: configuration))
    try store.save(account, tokens: response.tokenSet(receivedAt: now, requestedScope: scopes))
    events.publish(AccountEvent(.added, account))
    return account
  }

  /// The authority an account signed in with `configuration` records: its token endpoint's
  /// origin, for a type whose endpoints are fixed (one with discovered endpoints records
  /// its issuer, which says more).
  static func authority(of configuration: ServiceConfiguration) -> String? {
    guard case .fixed = configuration.descriptor.endpoints else { return nil }
    return Origin(configuration.endpoints.token)?.description
  }

  /// The identity from the ID token, checked per OpenID Connect Core §3.1.3.7, or from the
  /// userinfo endpoint (§5.3) when the server issued no ID token.
  private func identity(
    of response: TokenResponse, nonce: String?, configuration: ServiceConfiguration
  )
    async throws -> AccountIdentity
  {
    let perAccountIssuer = configuration.descriptor.endpoints == .discoveredFromUserIssuer
    if let idToken = response.idToken {
      let unverified = try IDTokenClaims(unverified: idToken)
      // A type with fixed endpoints may leave the issuer open (one per tenant); the token's
      // own `iss` is then checked for consistency and recorded, the signature still is.
      let validator = IDTokenValidator(
        issuer: configuration.issuer ?? unverified.issuer, clientID: configuration.client.id,
        keys: try await configuration.signingKeys(transport: transport))
      let claims = try validator.validate(idToken, nonce: nonce, clock: clock)
      if let identity = registry.behavior(configuration.descriptor.id)?.identity(claims: claims) { return identity }
      return AccountIdentity(claims: claims, issuerIsPerAccount: perAccountIssuer)
    }
    if let behavior = registry.behavior(configuration.descriptor.id),
      let identity = try await behavior.identity(
        accessToken: response.accessToken, configuration: configuration, transport: transport)
    {
      return identity
    }
    if let userinfo = configuration.endpoints.userinfo {
      return try await self.userinfo(userinfo, accessToken: response.accessToken, configuration: configuration)
    }
    throw TokenKitError(
      .signInFailed,
      "the server issued no ID token and has no userinfo endpoint, so there is no telling who signed in",
      remedy: .requestScope("openid"))
  }

  private func userinfo(
    _ endpoint: URL, accessToken: String, configuration: ServiceConfiguration
  ) async throws
    -> AccountIdentity
  {
    let action = "ask \(endpoint.absoluteString) who signed in"
    do {
      let response = try await transport.send(
        HTTPRequest(
          method: "GET", url: endpoint,
          headers: [HTTPHeader("Authorization", "Bearer \(accessToken)"), HTTPHeader("Accept", "application/json")]))
      let body = try AuthorizationService.body(of: response, document: "userinfo response", bodyRequired: true)
      let object = try JSONObject(body, what: "userinfo response")
      guard let subject = object.string("sub") else {
        throw AuthorizationServiceError.malformedResponse("the userinfo response has no sub")
      }
      let issuer = configuration.issuer
      let perAccount = configuration.descriptor.endpoints == .discoveredFromUserIssuer
      return AccountIdentity(
        id: perAccount ? "\(AccountIdentity.shortIssuer(issuer ?? endpoint.absoluteString))|\(subject)" : subject,
        name: object.string("preferred_username") ?? object.string("email") ?? subject, issuer: issuer)
    } catch let error as TransportError {
      throw TokenKitError(.transport(error), while: action)
    } catch let error as AuthorizationServiceError {
      throw TokenKitError(error, while: action)
    }
  }

  // MARK: Using accounts

  /// The accounts of this manager's group.
  public func accounts(_ query: AccountQuery = .all) throws -> [AccountListing] { try store.list(query) }

  /// Tokens valid for at least `minimumValidity` seconds (the token's own margin when
  /// nil), refreshed first when needed.
  public func freshTokens(for key: AccountKey, minimumValidity: Double? = nil) async throws -> TokenSet {
    try await refresher.freshTokens(for: key, minimumValidity: minimumValidity).tokens
  }

  /// The same for an account just read from the store, which is then not read again
  /// unless it needs a refresh.
  public func freshTokens(for stored: StoredAccount, minimumValidity: Double? = nil) async throws -> TokenSet {
    try await refresher.freshTokens(for: stored, minimumValidity: minimumValidity).tokens
  }

  /// Refreshes now, whatever the expiry.
  @discardableResult
  public func refresh(_ key: AccountKey) async throws -> StoredAccount { try await refresher.refresh(key) }

  /// A token for exactly `scopes` from the account's sign-in, valid for at least
  /// `minimumValidity` seconds: the account's own when those are its scopes, else one
  /// kept for them or got with its refresh token (RFC 6749 §6), without replacing its own.
  public func freshTokens(
    for key: AccountKey, scopes: ScopeSet, minimumValidity: Double? = nil
  ) async throws -> TokenSet {
    try await refresher.freshTokens(for: key, scopes: scopes, minimumValidity: minimumValidity)
  }

  /// The same for an account just read from the store.
  public func freshTokens(
    for stored: StoredAccount, scopes: ScopeSet, minimumValidity: Double? = nil
  ) async throws -> TokenSet {
    try await refresher.freshTokens(for: stored, scopes: scopes, minimumValidity: minimumValidity)
  }

  /// A new token for `scopes` now, whatever the kept one's expiry.
  @discardableResult
  public func refresh(_ key: AccountKey, scopes: ScopeSet) async throws -> TokenSet {
    try await refresher.refresh(key, scopes: scopes)
  }

  /// A new token for `scopes` now, for a caller that already holds the account's lock:
  /// the process a ``RefreshIsolation`` starts.
  @discardableResult
  public func exchangeHoldingLock(_ key: AccountKey, scopes: ScopeSet) async throws -> TokenSet {
    try await refresher.exchangeHoldingLock(key, scopes: scopes)
  }

  /// Refreshes now, for a caller that already holds the account's lock: the process a
  /// ``RefreshIsolation`` starts.
  @discardableResult
  public func refreshHoldingLock(_ key: AccountKey) async throws -> StoredAccount {
    try await refresher.refreshHoldingLock(key)
  }

  // MARK: Signing out

  /// Revokes through the type's plugin, for types whose provider revokes its own way.
  /// Returns false when the plugin cannot; throws, keeping the account, when it failed.
  private func revokeByBehavior(_ stored: StoredAccount) async throws -> Bool {
    let account = stored.account
    guard let behavior = registry.behavior(account.type), behavior.revokesTokens else { return false }
    let configuration = try await ServiceConfiguration.resolve(
      for: account, descriptor: try registry.descriptor(account.type), behavior: behavior, discovery: discovery)
    do {
      return try await behavior.revoke(stored.tokens, configuration: configuration, transport: transport)
    } catch {
      let message = "could not revoke the tokens of \(account.qualifiedName): \(error); the account is kept"
      events.publish(AccountEvent(.failed, account, message: message))
      throw TokenKitError(
        .revocationFailed, message,
        remedy: .forgetLocally(account: account.qualifiedName))
    }
  }

  /// The service to revoke `account`'s tokens with, or nil when its type has no
  /// revocation endpoint. A type with fixed endpoints and none for revocation needs no
  /// client configuration to sign out.
  private func revocationService(for account: Account) async throws -> AuthorizationService? {
    let descriptor = try registry.descriptor(account.type)
    if case .fixed(let endpoints) = descriptor.endpoints, endpoints.revocation == nil { return nil }
    let configuration = try await ServiceConfiguration.resolve(
      for: account, descriptor: descriptor, behavior: registry.behavior(account.type), discovery: discovery)
    guard configuration.endpoints.revocation != nil else { return nil }
    return configuration.service(transport: transport)
  }

  /// What `signOut` did.
  public struct SignOut: Sendable, Hashable {
    public init(account: Account, revokedAtServer: Bool, note: String?) {
      self.account = account
      self.revokedAtServer = revokedAtServer
      self.note = note
    }
    public var account: Account
    /// Whether the server was told (RFC 7009).
    public var revokedAtServer: Bool
    /// Why not, when it was not.
    public var note: String?
  }

  /// Revokes the account's tokens at the server when its type has a revocation endpoint
  /// (RFC 7009), then removes the account. If the server cannot be told, the account is
  /// kept and the error thrown, unless `localOnly`, which skips the server entirely and
  /// reads no token. Either way the account's `revoked` event is published.
  @discardableResult
  public func signOut(_ key: AccountKey, localOnly: Bool = false) async throws -> SignOut {
    if localOnly {
      // Nothing is sent and no token is read, so an item whose secret cannot be read (a
      // damaged or newer item) can be removed too.
      guard let listing = try store.list(AccountQuery(type: key.type, id: key.id)).first, try store.remove(key) else {
        throw TokenKitError(.noSuchAccount, "no account \(key) in group '\(store.group)'")
      }
      // Nothing secret is left behind: a grant the keyring never got goes with the account.
      locks.journal?.remove(key, group: store.group)
      let result = SignOut(account: listing.account, revokedAtServer: false, note: "the server was not told")
      events.publish(AccountEvent(.revoked, listing.account, message: result.note))
      return result
    }
    if locks.journal?.contains(key, group: store.group) == true,
      let listed = try store.list(AccountQuery(type: key.type, id: key.id)).first
    {
      // The grant to revoke is the newest: one the keyring has not got yet is in the journal.
      try await refresher.replayingJournal(of: listed.account)
    }
    guard let stored = try store.load(key) else {
      throw TokenKitError(.noSuchAccount, "no account \(key) in group '\(store.group)'")
    }
    let account = stored.account
    var result = SignOut(account: account, revokedAtServer: false, note: nil)
    if let service = try await revocationService(for: account) {
      do {
        // Revoking the refresh token ends the grant (RFC 7009 §2.1); the access token is
        // revoked too, for servers that keep it alive until expiry otherwise.
        if let refreshToken = stored.tokens.refreshToken {
          try await service.revoke(refreshToken, hint: "refresh_token")
        } else {
          try await service.revoke(stored.tokens.accessToken, hint: "access_token")
        }
      } catch {
        let failure = TokenKitError(error, while: "revoke the tokens of \(account.qualifiedName)")
        events.publish(AccountEvent(.failed, account, message: failure.message))
        throw TokenKitError(
          .revocationFailed, failure.message + "; the account is kept",
          remedy: .forgetLocally(account: account.qualifiedName))
      }
      result.revokedAtServer = true
      if stored.tokens.refreshToken != nil {
        // The grant is over, so the account goes whatever happens here: keeping it would
        // keep a refresh token that no longer works.
        do {
          try await service.revoke(stored.tokens.accessToken, hint: "access_token")
        } catch {
          result.note = "the access token could not be revoked and stays valid until it expires"
        }
      }
    } else if try await revokeByBehavior(stored) {
      result.revokedAtServer = true
    } else {
      result.note =
        "account type '\(account.type)' has no revocation endpoint; its tokens stay valid at the server until they expire"
    }
    try store.remove(key)
    locks.journal?.remove(key, group: store.group)
    events.publish(AccountEvent(.revoked, account, message: result.note))
    return result
  }
}
