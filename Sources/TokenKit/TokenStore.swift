/// Where accounts and their tokens are kept.
///
/// A store is bound to one group and sees only that group's accounts.
///
/// ## Implementation requirements
/// Every conformance must pass `TokenStoreConformance` (in `TokenStoreTesting`):
/// - `save` inserts, or replaces the tokens and metadata of the account with the same
///   key. A replacement is atomic: a concurrent `load` sees the old token set or the new
///   one whole, never a mix, and never two accounts for one key.
/// - `list` returns no secret and must not need one; `load` returns the tokens.
/// - Stores of different groups never see each other's accounts.
/// - A store that cannot tell "absent" from "unreadable" (a locked keyring) must throw
///   rather than report the account missing.
/// - Tokens for other scopes (``loadToken(for:scopes:)``) are kept apart from the
///   account's own, one per account and ``ScopeSet``, without a refresh token or an ID
///   token; `list` and `load` never show them, and `remove` removes them with the account.
///   A store that keeps none may leave these to the default, which throws.
public protocol TokenStore: Sendable {
  /// The group this store reads and writes.
  var group: String { get }

  /// The accounts in this group that match `query`, without their tokens.
  func list(_ query: AccountQuery) throws -> [AccountListing]

  /// The account with this key and its tokens, or `nil` when there is none.
  func load(_ key: AccountKey) throws -> StoredAccount?

  /// The accounts in this group that match `query`, with their tokens. A store that can
  /// fetch both in one round trip should; the default lists, then loads each.
  func loadAll(_ query: AccountQuery) throws -> [StoredAccount]

  /// Inserts the account, or atomically replaces the one with the same key.
  /// Throws when `account.group` is not this store's group.
  func save(_ account: Account, tokens: TokenSet) throws

  /// Removes the account and its tokens, its tokens for other scopes included; returns
  /// whether there was an account.
  @discardableResult
  func remove(_ key: AccountKey) throws -> Bool

  /// The token the account's grant gave for exactly `scopes`, as stored by
  /// ``saveToken(_:scopes:of:)``, or nil when there is none (valid or not).
  func loadToken(for key: AccountKey, scopes: ScopeSet) throws -> TokenSet?

  /// Inserts, or atomically replaces, the account's token for `scopes`: its access token,
  /// expiry, granted scope and type. A refresh token or ID token in `tokens` is not kept:
  /// the account's own item holds the grant. Throws when `account.group` is not this
  /// store's group. The account's own item is left as it is.
  func saveToken(_ tokens: TokenSet, scopes: ScopeSet, of account: Account) throws

  /// Throws what ``save(_:tokens:)`` would throw for a store it cannot write to (a locked
  /// keyring nobody unlocks, no keyring at all), unlocking it where the store may: a
  /// sign-in checks this before it asks the user to sign in, so that an issued grant is not
  /// left without a place to go.
  func checkWritable() throws
}

extension TokenStore {
  /// A store that is always writable (in memory) checks nothing.
  public func checkWritable() throws {}

  public func loadAll(_ query: AccountQuery) throws -> [StoredAccount] {
    try list(query).compactMap { try load($0.account.key) }
  }

  public func loadToken(for key: AccountKey, scopes: ScopeSet) throws -> TokenSet? {
    throw keepsNoScopedTokens
  }

  public func saveToken(_ tokens: TokenSet, scopes: ScopeSet, of account: Account) throws {
    throw keepsNoScopedTokens
  }

  private var keepsNoScopedTokens: TokenKitError {
    TokenKitError(.storeFailure, "this token store keeps no tokens for other scopes than an account's own")
  }

  /// The error a store throws when asked to save an account of another group.
  public func groupMismatch(_ account: Account) -> TokenKitError {
    TokenKitError(
      .storeFailure,
      "account \(account.qualifiedName) belongs to group '\(account.group)', not to this store's group '\(group)'"
    )
  }
}
