/// Tokens for other scopes from one sign-in: a refresh request may ask for a scope other
/// than the grant's own (RFC 6749 §6), which is also how some identity platforms hand out
/// a token for another resource (another API's scopes) from one sign-in. A service account
/// asks again with its client's credentials and those scopes (§4.4.2).
///
/// Such a token is kept beside the account (``TokenStore/saveToken(_:scopes:of:)``), one
/// per scope set, and never replaces the account's own token or its refresh token by a
/// narrower one. The exchange presents the account's refresh token, so it runs under the
/// account's lock, through the same ``RefreshIsolation``, and a rotated refresh token in
/// its answer goes into the account's item before anything else is stored: the server has
/// spent the old one.
extension TokenRefresher {
  /// A token for exactly `scopes`, valid for at least `minimumValidity` seconds (the
  /// token's own margin when nil): the account's own when `scopes` are its scopes, else
  /// the one kept for them, else a new one from the account's grant.
  public func freshTokens(
    for stored: StoredAccount, scopes: ScopeSet, minimumValidity: Double? = nil
  ) async throws -> TokenSet {
    if scopes.isOwn(of: stored.account) {
      return try await freshTokens(for: stored, minimumValidity: minimumValidity).tokens
    }
    try requireRecordedIssuer(stored.account)
    // As for the account's own token: one the server declared dead is not handed out.
    guard !stored.account.needsSignIn else { throw needsSignIn(stored.account) }
    let held = try store.loadToken(for: stored.account.key, scopes: scopes)
    if let held, held.isValid(forAtLeast: minimumValidity ?? held.defaultRefreshMargin, clock: clock) {
      return held
    }
    return try await exchange(stored, for: scopes, seen: held, minimumValidity: minimumValidity, force: false)
  }

  /// The same, for an account named by its key.
  public func freshTokens(
    for key: AccountKey, scopes: ScopeSet, minimumValidity: Double? = nil
  ) async throws -> TokenSet {
    try await freshTokens(for: try load(key), scopes: scopes, minimumValidity: minimumValidity)
  }

  /// A new token for `scopes` now, whatever the kept one's expiry: after a resource
  /// refused it (401).
  public func refresh(_ key: AccountKey, scopes: ScopeSet) async throws -> TokenSet {
    let stored = try load(key)
    if scopes.isOwn(of: stored.account) { return try await refresh(key).tokens }
    try requireRecordedIssuer(stored.account)
    guard !stored.account.needsSignIn else { throw needsSignIn(stored.account) }
    let held = try store.loadToken(for: key, scopes: scopes)
    return try await exchange(stored, for: scopes, seen: held, minimumValidity: nil, force: true)
  }

  /// The exchange proper, for a caller that holds the account's lock already: the process
  /// a ``RefreshIsolation`` starts, which inherited it.
  public func exchangeHoldingLock(_ key: AccountKey, scopes: ScopeSet) async throws -> TokenSet {
    try replayJournal(key, group: store.group)
    let current = try load(key)
    guard !current.account.needsSignIn else { throw needsSignIn(current.account) }
    return try await performExchange(current, for: scopes)
  }

  /// Under the account's lock: the token another process got meanwhile when it will do,
  /// else a new one. `seen` is the kept token as read before the lock.
  private func exchange(
    _ stored: StoredAccount, for scopes: ScopeSet, seen: TokenSet?, minimumValidity: Double?, force: Bool
  ) async throws -> TokenSet {
    let account = stored.account
    guard stored.tokens.refreshToken != nil || account.isServiceAccount else {
      throw TokenKitError(
        .tokenNotValid,
        "\(account.qualifiedName) has no refresh token, without which there is no token for the "
          + "\(scopes.phrase)",
        remedy: signInAgain(account))
    }
    let lock = try await self.lock(account)
    defer { lock.release() }

    try replayJournal(account.key, group: account.group)
    let current = try load(account.key)
    guard !current.account.needsSignIn else { throw needsSignIn(current.account) }
    // Another process may have got one while we waited: it is as good as a new one, and
    // asking again would only spend a rotation.
    if let held = try store.loadToken(for: account.key, scopes: scopes) {
      if held != seen {
        let margin = force ? 0 : min(minimumValidity ?? held.defaultRefreshMargin, held.defaultRefreshMargin)
        if held.isValid(forAtLeast: margin, clock: clock) { return held }
      } else if !force, held.isValid(forAtLeast: minimumValidity ?? held.defaultRefreshMargin, clock: clock) {
        return held
      }
    }
    if let isolation, try await isolation.refresh(account.key, group: account.group, scopes: scopes, holding: lock) {
      guard let got = try store.loadToken(for: account.key, scopes: scopes) else {
        throw TokenKitError(
          .storeFailure,
          "the token for the \(scopes.phrase) of \(account.qualifiedName) was not found where it was just stored")
      }
      return got
    }
    return try await performExchange(current, for: scopes)
  }

  /// What a new sign-in must ask for to keep what `account` has: the type's default scopes
  /// (a server's answer may leave some out, such as the one that brings the refresh
  /// token), then the others the account was granted.
  func signedInScopes(_ account: Account) -> [String] {
    var scopes = (try? registry.descriptor(account.type).defaultScopes) ?? []
    for scope in account.scopes where !scopes.contains(scope) { scopes.append(scope) }
    return scopes
  }

  private func performExchange(_ current: StoredAccount, for scopes: ScopeSet) async throws -> TokenSet {
    let account = current.account
    let action = "get a token for the \(scopes.phrase) from the sign-in of \(account.qualifiedName)"
    let configuration: ServiceConfiguration
    do {
      configuration = try await ServiceConfiguration.resolve(
        for: account, descriptor: try registry.descriptor(account.type), behavior: registry.behavior(account.type),
        discovery: discovery)
    } catch let error as TokenKitError {
      events.publish(AccountEvent(.failed, account, message: error.message))
      throw error
    }
    let grant = try renewalGrant(for: current, configuration: configuration, scopes: scopes)
    var response: TokenResponse
    do {
      response = try await configuration.service(transport: transport, retry: retry).token(grant)
    } catch {
      // The server wants the user, in person, for these scopes (consent, a stronger
      // sign-in): that concerns this token only, and the account's own grant is as good
      // as before, so it is not marked.
      if case .oauth(let oauth, _) = normalized(error, type: account.type),
        OAuthError.needsInteraction.contains(oauth.code)
      {
        let failure = TokenKitError(
          .scopeRefused,
          "the authorization server wants consent or a new sign-in before it issues a token for the "
            + "\(scopes.phrase) from the sign-in of \(account.qualifiedName) (\(oauth)); the account and its stored "
            + "tokens are unchanged" + TokenKitError.reference(oauth),
          remedy: .consentToScopes(
            account: reference(to: account), granted: signedInScopes(account), asked: scopes.scopes))
        events.publish(AccountEvent(.failed, account, message: failure.message))
        throw failure
      }
      let failure = try failed(error, while: action, current)
      guard failure.code == .scopeRefused, case .oauth(let oauth, _) = error else { throw failure }
      throw TokenKitError(
        .scopeRefused,
        "the authorization server refused to issue a token for the \(scopes.phrase) from the sign-in of "
          + "\(account.qualifiedName) (\(oauth)); the stored tokens are unchanged" + TokenKitError.reference(oauth),
        remedy: .requestGrantedScopes(account: reference(to: account), granted: account.scopes, asked: scopes.scopes))
    }
    if let behavior = registry.behavior(account.type) { response = behavior.normalized(response) }
    let now = clock.now
    var updated = account
    if let rotated = response.refreshToken, rotated != current.tokens.refreshToken {
      // The server has spent the refresh token it was sent: its successor goes into the
      // account's own item before anything else can fail, replacing nothing but itself.
      // The grant's scope is unchanged by a narrower request (§6), and so is the account.
      var tokens = current.tokens
      tokens.refreshToken = rotated
      updated.updatedAt = now
      try saveRefreshed(updated, tokens: tokens, replacing: current.tokens)
    }
    // An ID token in the answer says nothing the account's does not, and is not kept. The
    // scope is what the server named, nil when it named none: that it granted what was
    // asked is an assumption (``CarriedScopes``), not the server's word.
    let tokens = response.tokenSet(receivedAt: now).withoutGrant
    try store.saveToken(tokens, scopes: scopes, of: updated)
    return tokens
  }
}
