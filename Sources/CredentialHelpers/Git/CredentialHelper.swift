import TokenKit

/// Answers git's credential requests (git-credential(1)) with the tokens of the account
/// that serves the request's host: the store's side of ``CredentialAccountChooser``.
///
/// Printing nothing is the usual way to decline: git then asks the next helper or the
/// user. Why we declined, when the host is ours, goes to `explain`, never a token.
public struct CredentialHelper: Sendable {
  /// Seconds a token handed to git must stay valid: long enough for a clone or a push to
  /// start, so the first command after expiry does not fail.
  public static let minimumValidity: Double = 60

  let registry: AccountTypeRegistry
  let store: any TokenStore
  let chooser: CredentialAccountChooser
  let clock: any WallClock
  /// The refresh locks, whose holder may be about to replace a stored token.
  let locks: any AccountLocking
  let explain: @Sendable (CredentialDecline) -> Void

  /// Whether a stored token valid long enough is answered here; false leaves every
  /// answer to the caller's `freshTokens` (the agent, which also knows when it will
  /// replace a token ahead of expiry).
  let handsOutStoredTokens: Bool

  /// `rules` are `[git.accounts]` of config.toml; `environment` may name the account in
  /// `TOKENCTL_ACCOUNT`; `explain` tells the user why a request of ours got no answer.
  public init(
    registry: AccountTypeRegistry, store: any TokenStore, environment: [String: String],
    rules: [String: String] = [:], clock: any WallClock, locks: any AccountLocking,
    handsOutStoredTokens: Bool = true, explain: @escaping @Sendable (CredentialDecline) -> Void
  ) {
    self.handsOutStoredTokens = handsOutStoredTokens
    self.locks = locks
    self.registry = registry
    self.store = store
    chooser = CredentialAccountChooser(
      registry: registry, rules: rules, requestedAccount: environment["TOKENCTL_ACCOUNT"])
    self.clock = clock
    self.explain = explain
  }

  /// The answer to `get`, or nil to let git go on.
  ///
  /// When types serve the host but no account is signed in, `signIn` may sign one in (it
  /// returns whether it did); without it, or when it declines, `explain` hears of it.
  /// `freshTokens` is given the account as the choosing read it, when it did, so that the
  /// refresher reads it again only under the lock.
  public func get(
    _ request: CredentialMessage, freshTokens: (AccountKey, StoredAccount?) async throws -> TokenSet,
    signIn: ((_ types: [String], _ host: String) async throws -> Bool)? = nil
  ) async throws
    -> CredentialMessage?
  {
    var selection = try choose(for: request)
    if case .declined(.noAccount(let types, let host)) = selection, let signIn, try await signIn(types, host) {
      selection = try choose(for: request)
      // The sign-in ran on the terminal, where the user saw how it went: nothing to add.
      if case .declined(.noAccount) = selection { return nil }
    }
    let choice: CredentialChoice
    switch selection {
    case .account(let chosen): choice = chosen
    case .notOurs: return nil
    case .declined(let reason):
      explain(reason)
      return nil
    }
    // A token valid long enough is answered as the refresher's own first step would answer
    // it, by the one hand-out rule (the account's issuer included), without a second
    // keyring search or reading the configuration again; anything else goes through the
    // refresher (issuer check, lock, re-read, refresh).
    let tokens: TokenSet
    if handsOutStoredTokens, let stored = choice.stored,
      let servable = try stored.servableTokens(
        forAtLeast: Self.minimumValidity, clock: clock, locks: locks, registry: { [registry] in registry })
    {
      tokens = servable
    } else {
      tokens = try await freshTokens(choice.account.key, choice.stored)
    }
    return choice.answer(with: tokens, to: request)
  }

  /// Git says the credential it got was refused: mark the account's access token expired
  /// so the next `get` refreshes. The refresh token is kept; it may well still be good.
  public func erase(_ request: CredentialMessage) throws {
    guard case .account(let choice) = try choose(for: request),
      var stored = try store.load(choice.account.key)
    else { return }
    // Another helper's password, or one we already replaced, is not ours to judge.
    if let password = request["password"] ?? request["credential"], password != stored.tokens.accessToken { return }
    stored.tokens.expiresAt = clock.now.addingTimeInterval(-1)
    try store.save(stored.account, tokens: stored.tokens)
  }

  /// The one account that should answer `request`, if any, reading the store as the
  /// chooser's steps need it.
  public func choose(for message: CredentialMessage) throws -> CredentialSelection {
    guard let request = CredentialRequest(message) else { return .notOurs }
    let serving = try servingTypes(request)
    let named = chooser.namedAccount(for: request)
    // No type of ours serves this host (or not over this protocol): nothing to read, and
    // nothing to say, unless a rule of the user's names an account for it.
    guard !serving.types.isEmpty else {
      guard let named, case .rule = named.source else { return .notOurs }
      return .declined(.ruleForUnservedHost(named, host: request.host))
    }
    if let named {
      return chooser.select(named, resolvedTo: try account(named.reference), serving: serving, for: request)
    }
    return chooser.select(among: try candidates(of: serving.typesToRead), serving: serving, for: request)
  }

  /// Whether some type serves the request's host (and protocol), whether or not an account
  /// may answer now: what tells a tool "not mine, ask the next helper" from "mine, but no
  /// account" where its protocol has the two answers (cargo's).
  public func serves(_ message: CredentialMessage) throws -> Bool {
    guard let request = CredentialRequest(message) else { return false }
    return try !servingTypes(request).types.isEmpty
  }

  /// The types that serve the request's host. The accounts of types that list no hosts
  /// say which hosts they serve, so they are listed, one keyring search per such type,
  /// only for hosts that no type lists.
  private func servingTypes(_ request: CredentialRequest) throws -> CredentialAccountChooser.ServingTypes {
    try chooser.servingTypes(of: request) {
      var accounts: [String: [Account]] = [:]
      for type in chooser.typesWithoutHosts {
        accounts[type.id] = try store.list(AccountQuery(type: type.id)).map(\.account)
      }
      return accounts
    }
  }

  /// The account `reference` names, or nil when none is signed in.
  private func account(_ reference: AccountReference) throws -> Account? {
    do {
      // No message is shown: no listing for a suggestion either.
      return try reference.resolve(in: store, suggesting: false).account
    } catch let error as TokenKitError where error.code == .noSuchAccount {
      return nil
    }
  }

  /// The accounts of `types`, with their tokens: one keyring search that reads
  /// attributes and secrets together, where a listing and then a load took two. When it
  /// throws (a damaged item among them, say), the listing chooses as before: it skips
  /// such items, and reports every other failure as it always did.
  private func candidates(of types: [GitAccountType]) throws -> [CredentialAccountChooser.Candidate] {
    do {
      return try types.flatMap { type in
        try store.loadAll(AccountQuery(type: type.id)).map { .init($0.account, stored: $0) }
      }
    } catch {
      return try types.flatMap { type in try store.list(AccountQuery(type: type.id)).map { .init($0.account) } }
    }
  }

  /// Every git host the types serve, for `tokenctl setup-git`. Accounts that cannot be
  /// read add nothing: the listed hosts are still worth knowing.
  public func servedHosts() -> [String] {
    chooser.servedHosts(accounts: accountsOfTypesWithoutHosts())
  }

  /// The URLs to configure git with for `hosts` (every served host when nil): each
  /// scheme this helper answers there (``CredentialAccountChooser/servedURLs(of:accounts:)``).
  public func servedURLs(hosts: [String]? = nil) -> [GitServedURL] {
    let accounts = accountsOfTypesWithoutHosts()
    return (hosts ?? chooser.servedHosts(accounts: accounts)).flatMap {
      chooser.servedURLs(of: $0, accounts: accounts)
    }
  }

  /// The accounts that say which hosts the types without hosts serve; none for a type
  /// whose accounts cannot be listed.
  private func accountsOfTypesWithoutHosts() -> [String: [Account]] {
    var accounts: [String: [Account]] = [:]
    for type in chooser.typesWithoutHosts {
      accounts[type.id] = (try? store.list(AccountQuery(type: type.id)))?.map(\.account) ?? []
    }
    return accounts
  }
}
