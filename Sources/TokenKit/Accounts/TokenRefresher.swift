#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Hands out access tokens that are valid for long enough, refreshing them first when
/// needed (RFC 6749 §6), with at most one refresh of an account in flight across every
/// process that shares the lock directory.
public struct TokenRefresher: Sendable {
  public var registry: AccountTypeRegistry
  public var store: any TokenStore
  public var transport: any HTTPTransport
  public var clock: any WallClock
  public var locks: any AccountLocking
  public var discovery: MetadataDiscovery
  public var events: AccountEventCenter
  /// How long to wait for another process's refresh: two full HTTP timeouts, so that a
  /// refresh stuck on a dead network times out before its waiters give up.
  public var lockTimeout: Duration = .seconds(2 * HTTPTransportLimits.totalTimeoutSeconds + 5)
  /// Where the exchange and the store run once the lock is held; nil: in this process.
  public var isolation: (any RefreshIsolation)?
  /// How long an exchange waits for a server that asks to be asked again.
  public var retry: RetryPolicy = .standard
  /// For tests only: called once a rotated grant is journaled and before the store is
  /// written, where a fault costs the grant without the journal (`TOKENCTL_TEST_PAUSE`).
  public var pauseForTests: (@Sendable (AccountKey) -> Void)?

  public init(
    registry: AccountTypeRegistry, store: any TokenStore, transport: any HTTPTransport,
    clock: any WallClock, locks: any AccountLocking, discovery: MetadataDiscovery,
    events: AccountEventCenter
  ) {
    self.registry = registry
    self.store = store
    self.transport = transport
    self.clock = clock
    self.locks = locks
    self.discovery = discovery
    self.events = events
  }

  /// The account with an access token valid for at least `minimumValidity` seconds, or
  /// the token's own margin (`TokenSet.defaultRefreshMargin`) when nil.
  ///
  /// When another process refreshed while this one waited for the lock, its new token is
  /// accepted even if shorter-lived than asked: refreshing again would only burn a
  /// rotation and return a token of the same lifetime.
  public func freshTokens(for key: AccountKey, minimumValidity: Double? = nil) async throws -> StoredAccount {
    try await freshTokens(for: try load(key), minimumValidity: minimumValidity)
  }

  /// The same, for an account the caller has just read from the store: it is not read
  /// again unless it needs a refresh, and then only under the lock, where it must be.
  public func freshTokens(for stored: StoredAccount, minimumValidity: Double? = nil) async throws -> StoredAccount {
    try requireRecordedIssuer(stored.account)
    guard !stored.account.needsSignIn else { throw needsSignIn(stored.account) }
    if stored.isServable(forAtLeast: minimumValidity ?? stored.tokens.defaultRefreshMargin, clock: clock, locks: locks)
    {
      return stored
    }
    return try await refresh(stored, minimumValidity: minimumValidity, force: false)
  }

  /// Refreshes the account now, whatever its token's expiry; `tokenctl refresh`.
  public func refresh(_ key: AccountKey) async throws -> StoredAccount {
    let stored = try load(key)
    try requireRecordedIssuer(stored.account)
    return try await refresh(stored, minimumValidity: nil, force: true)
  }

  /// Refuses before anything happens when the account's type now names another issuer
  /// (see ``ServiceConfiguration/requireRecordedIssuer(of:in:)``): a valid token is not
  /// handed out either, since its holder will send it to the server the type now names.
  /// An account whose type is gone fails later, with its own message.
  func requireRecordedIssuer(_ account: Account) throws {
    try registry.requireRecordedIssuer(of: account)
  }

  private func refresh(_ stored: StoredAccount, minimumValidity: Double?, force: Bool) async throws -> StoredAccount {
    let account = stored.account
    guard !account.needsSignIn else { throw needsSignIn(account) }
    guard stored.tokens.refreshToken != nil || account.isServiceAccount else {
      throw TokenKitError(
        .tokenNotValid, "the access token of \(account.qualifiedName) has expired and there is no refresh token",
        remedy: signInAgain(account))
    }
    let lock = try await self.lock(account)
    defer { lock.release() }

    // Another process may have refreshed while we waited: its tokens are the current ones,
    // and the refresh token we read before is now spent. Its answer may still be in the
    // journal, if the store refused it.
    try replayJournal(account.key, group: account.group)
    let current = try load(account.key)
    // Another process refreshed when the tokens themselves differ, not their times: the
    // caller's copy may have come through the keyring's JSON, which keeps whole seconds,
    // and this one from a store that keeps more. Taking that for another's refresh gave
    // back the old token as new, and the agent asked again at once, and again.
    if current.tokens.accessToken != stored.tokens.accessToken
      || current.tokens.refreshToken != stored.tokens.refreshToken
    {
      if current.account.needsSignIn {
        throw TokenKitError(
          .needsSignIn, "\(account.qualifiedName) needs a new sign-in", remedy: signInAgain(account))
      }
      let margin =
        force ? 0 : min(minimumValidity ?? current.tokens.defaultRefreshMargin, current.tokens.defaultRefreshMargin)
      if current.tokens.isValid(forAtLeast: margin, clock: clock) { return current }
    } else if !force,
      current.tokens.isValid(forAtLeast: minimumValidity ?? current.tokens.defaultRefreshMargin, clock: clock)
    {
      return current
    }
    if let isolation, try await isolation.refresh(account.key, group: account.group, holding: lock) {
      return try load(account.key)
    }
    return try await performRefresh(current)
  }

  /// The account's lock, held by whoever uses its refresh token.
  func lock(_ account: Account) async throws -> any AccountLockHandle {
    do {
      return try await locks.acquire(account.key, group: account.group, timeout: lockTimeout)
    } catch let error as TokenKitError {
      throw error
    } catch {
      throw TokenKitError(.internalFailure, "could not lock \(account.qualifiedName) for refreshing: \(error)")
    }
  }

  /// The refresh proper, for a caller that holds the account's lock already: the process
  /// a ``RefreshIsolation`` starts, which inherited it.
  public func refreshHoldingLock(_ key: AccountKey) async throws -> StoredAccount {
    try replayJournal(key, group: store.group)
    let current = try load(key)
    guard !current.account.needsSignIn else { throw needsSignIn(current.account) }
    return try await performRefresh(current)
  }

  private func performRefresh(_ current: StoredAccount) async throws -> StoredAccount {
    let account = current.account
    let action = "refresh the tokens of \(account.qualifiedName)"
    let descriptor = try registry.descriptor(account.type)
    let configuration: ServiceConfiguration
    do {
      configuration = try await ServiceConfiguration.resolve(
        for: account, descriptor: descriptor, behavior: registry.behavior(account.type), discovery: discovery)
    } catch let error as TokenKitError {
      events.publish(AccountEvent(.failed, account, message: error.message))
      throw error
    }
    let grant = try renewalGrant(for: current, configuration: configuration)
    var response: TokenResponse
    do {
      response = try await configuration.service(transport: transport, retry: retry).token(grant)
    } catch {
      throw try failed(error, while: action, current)
    }
    if let behavior = registry.behavior(account.type) { response = behavior.normalized(response) }
    // A new ID token is stored only once checked, and checking may need the network (the
    // issuer's keys): the set is stored first with the ID token it had.
    var unchecked = response
    unchecked.idToken = nil
    var tokens = unchecked.tokenSet(receivedAt: clock.now, previous: current.tokens)
    var updated = account
    updated.updatedAt = clock.now
    if let granted = response.scope { updated.scopes = granted }
    // The server has rotated the refresh token by now: store the new set before anything
    // else can fail, or the only valid refresh token would be lost.
    try saveRefreshed(updated, tokens: tokens, replacing: current.tokens)
    if let idToken = response.idToken {
      var checked = false
      do {
        try await checkRefreshedIDToken(idToken, of: updated, previous: current.tokens.idToken, configuration)
        checked = true
      } catch {
        // The grant is fine and already stored; only the identity statement is bad or
        // could not be checked. Keeping the tokens loses nothing, keeping the ID token
        // would hand other programs reading the keyring an unchecked identity.
        let reason = (error as? TokenKitError)?.message ?? "\(error)"
        events.publish(
          AccountEvent(
            .failed, updated,
            message:
              "the ID token that came with the refresh of \(account.qualifiedName) was dropped: \(reason); "
              + "the new access and refresh tokens were kept"))
      }
      // Outside the check: a keyring that fails here fails the refresh as any store does.
      if checked {
        tokens.idToken = idToken
        try store.save(updated, tokens: tokens)
      }
    }
    let refreshed = StoredAccount(account: updated, tokens: tokens)
    events.publish(AccountEvent(.refreshed, updated))
    return refreshed
  }

  /// The error to throw for a failed exchange of `current`'s grant, once the account is
  /// marked and the event published.
  func failed(
    _ error: AuthorizationServiceError, while action: String, _ current: StoredAccount
  ) throws
    -> TokenKitError
  {
    let account = current.account
    let failure = explained(error, while: action, account)
    if failure.code == .needsSignIn {
      // Keep the account, so the user sees which one to sign in to again, but stop
      // sending a refresh token the server has declared dead.
      var marked = account
      marked.needsSignIn = true
      marked.updatedAt = clock.now
      try store.save(marked, tokens: current.tokens)
      events.publish(AccountEvent(.needsSignIn, marked, message: failure.message))
    } else {
      events.publish(AccountEvent(.failed, account, message: failure.message))
    }
    return failure
  }

  /// `error` as the account's type reads its provider's answer: in the standard's terms
  /// (``AccountTypeBehavior/normalized(_:)-(OAuthError)``).
  func normalized(_ error: AuthorizationServiceError, type: String) -> AuthorizationServiceError {
    guard case .oauth(let oauth, let status) = error, let behavior = registry.behavior(type) else { return error }
    return .oauth(behavior.normalized(oauth), status: status)
  }

  /// The error for a failed exchange of `account`'s grant, with the advice the account's
  /// type has for it and, for a new sign-in, the account named.
  func explained(_ error: AuthorizationServiceError, while action: String, _ account: Account) -> TokenKitError {
    let error = normalized(error, type: account.type)
    let failure = TokenKitError(error, while: action, signingInAgainTo: account.type)
    if let advice = registry.advice(for: failure, type: account.type) {
      return failure.with(recovery: advice, remedy: nil)
    }
    if failure.code == .needsSignIn { return failure.with(remedy: signInAgain(account)) }
    return failure
  }

  /// Signing in to `account` again, as it signed in before (the account records its
  /// issuer, client and scopes).
  func signInAgain(_ account: Account) -> TokenKitError.Remedy {
    .signInAgain(account: reference(to: account), group: account.group)
  }

  /// How the user names `account` so that it names no other: `TYPE:NAME`, or `TYPE:ID`
  /// where another account of the type shares the display name (ids are unique within a
  /// type). The name is tried first when a name is resolved, as ``AccountReference`` does.
  func reference(to account: Account) -> String {
    let sharing = (try? store.list(AccountQuery(type: account.type, name: account.name)).count) ?? 0
    return "\(account.type):\(sharing <= 1 ? account.name : account.id)"
  }

  /// What is sent for new tokens: the refresh token (RFC 6749 §6), or for a service account
  /// the client's credentials again (§4.4), since that grant issues no refresh token.
  /// `scopes` asks for a token for those instead of the grant's own (§6, §4.4.2).
  func renewalGrant(
    for current: StoredAccount, configuration: ServiceConfiguration, scopes: ScopeSet? = nil
  ) throws -> TokenRequest.Grant {
    let account = current.account
    if let refreshToken = current.tokens.refreshToken { return .refreshToken(refreshToken, scope: scopes?.scopes) }
    guard account.isServiceAccount else {
      throw TokenKitError(.tokenNotValid, "\(account.qualifiedName) has no refresh token")
    }
    guard configuration.client.secret != nil else {
      throw TokenKitError(
        .notConfigured,
        "\(account.qualifiedName) is a service account, and account type '\(account.type)' no longer has the client secret "
          + "it renews its token with",
        remedy: .configure(type: account.type, setting: "client_secret"))
    }
    return .clientCredentials(scope: scopes?.scopes ?? account.scopes)
  }

  /// OpenID Connect Core §12.2: a refreshed ID token is checked as the sign-in's was
  /// (signature, issuer, audience, times), and must name the same issuer, subject,
  /// audience and authorized party as the one it replaces, issued no earlier.
  private func checkRefreshedIDToken(
    _ idToken: String, of account: Account, previous: String?, _ configuration: ServiceConfiguration
  ) async throws {
    let earlier = try previous.map { try IDTokenClaims(unverified: $0) }
    guard let issuer = configuration.issuer ?? earlier?.issuer ?? account.issuer else {
      throw TokenKitError(.invalidIDToken, "there is no issuer to check it against")
    }
    let validator = IDTokenValidator(
      issuer: issuer, clientID: configuration.client.id, keys: try await configuration.signingKeys(transport: transport)
    )
    let claims: IDTokenClaims
    if let earlier {
      claims = try validator.validateRefreshed(idToken, previous: earlier, clock: clock)
    } else {
      claims = try validator.validate(idToken, nonce: nil, clock: clock)
    }
    // The account's identity as its type derives it (a tenant and object id rather than
    // a pairwise `sub`) must not change either: a token naming another principal is no
    // statement about this account.
    if let identity = registry.behavior(account.type)?.identity(claims: claims), identity.id != account.id {
      throw TokenKitError(
        .invalidIDToken, "it names the identity \(identity.id), not the account's own \(account.id)")
    }
  }

  func needsSignIn(_ account: Account) -> TokenKitError {
    TokenKitError(
      .needsSignIn, "\(account.qualifiedName) needs a new sign-in: its refresh token no longer works",
      remedy: signInAgain(account))
  }

  func load(_ key: AccountKey) throws -> StoredAccount {
    guard let stored = try store.load(key) else {
      throw TokenKitError(
        .noSuchAccount, "no account \(key) in group '\(store.group)'",
        remedy: .listAccounts(group: nil))
    }
    return stored
  }
}
