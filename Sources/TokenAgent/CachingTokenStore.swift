import Synchronization
import TokenKit

/// The agent's memory of one group: a store in front of the keyring that answers reads
/// from what it last read, and forgets everything the moment the keyring says something
/// changed (``forget()``, called on the Secret Service's signals).
///
/// What it holds: the listings it was asked for, by query, and every account of the
/// group with its tokens, read in one search, the tokens kept in ``SecretBox``es. A read
/// that raced with a change (the generation moved while it ran) is answered but not kept.
/// Errors are never kept: a locked keyring is asked again next time, so unlocking it is
/// seen at once. Writes go straight through, then everything is forgotten.
///
/// Tokens for other scopes are held apart, by account and scope set, as read one at a
/// time: nothing the group's read returns is one, and no account's own token is one.
final class CachingTokenStore: TokenStore, Sendable {
  let backing: any TokenStore
  var group: String { backing.group }

  private struct Entry {
    var account: Account
    var tokens: SecretBox
  }
  private struct ScopedKey: Hashable {
    var account: AccountKey
    var scopes: ScopeSet
  }
  private struct Memory {
    var generation = 0
    var listings: [AccountQuery: [AccountListing]] = [:]
    var accounts: [Entry]?
    /// nil for a token read and found absent.
    var scoped: [ScopedKey: SecretBox?] = [:]
  }
  private let memory = Mutex(Memory())
  /// Held while the group is read whole: requests that find nothing held wait for the one
  /// read in flight instead of each starting their own. With 1,000 accounts one read holds
  /// some 14 MiB of D-Bus replies and item proxies until it ends; the first clients and
  /// the refresh-ahead tasks they start all missed at once, and the agent's peak memory was
  /// several reads' worth (issue 13, row 9).
  private let reading = Mutex(())
  /// Whether to remember at all: only while someone tells us of changes.
  private let remembers: @Sendable () -> Bool

  init(_ backing: any TokenStore, remembers: @escaping @Sendable () -> Bool = { true }) {
    self.backing = backing
    self.remembers = remembers
  }

  /// Drops what is held; reads in flight are not kept.
  func forget() {
    memory.withLock { memory in
      memory = Memory(generation: memory.generation + 1)
    }
  }

  /// How many accounts with tokens are held, for the agent's status.
  var heldAccounts: Int { memory.withLock { $0.accounts?.count ?? 0 } }

  func list(_ query: AccountQuery) throws -> [AccountListing] {
    guard remembers() else { return try backing.list(query) }
    let (generation, held) = memory.withLock { ($0.generation, $0.listings[query]) }
    if let held { return held }
    let listings = try backing.list(query)
    memory.withLock { if $0.generation == generation { $0.listings[query] = listings } }
    return listings
  }

  func load(_ key: AccountKey) throws -> StoredAccount? {
    try loadAll(AccountQuery(type: key.type, id: key.id)).first
  }

  func loadAll(_ query: AccountQuery) throws -> [StoredAccount] {
    guard remembers() else { return try backing.loadAll(query) }
    let entries: [Entry]
    if let held = memory.withLock({ $0.accounts }) {
      entries = held
    } else if let read = try readGroup() {
      entries = read
    } else {
      // A damaged item makes the group's search throw; the query is then asked as it came,
      // uncached, so that it fails, or not, exactly as without the agent.
      return try backing.loadAll(query)
    }
    return try entries.filter { query.matches($0.account) }.map { entry in
      StoredAccount(
        account: entry.account,
        tokens: try entry.tokens.withBytes { try TokenSet(storageJSON: $0, item: entry.account.qualifiedName) })
    }
  }

  /// Every account of the group with its tokens, in one search, so that the next request,
  /// whatever account it names, is answered from memory; nil when the search failed.
  private func readGroup() throws -> [Entry]? {
    try reading.withLock { _ in
      // What the read this one waited for found, if nothing changed since.
      let (generation, held) = memory.withLock { ($0.generation, $0.accounts) }
      if let held { return held }
      guard let all = try? backing.loadAll(.all) else { return nil }
      let entries = try all.map { Entry(account: $0.account, tokens: SecretBox(try $0.tokens.storageJSON())) }
      memory.withLock { if $0.generation == generation { $0.accounts = entries } }
      return entries
    }
  }

  func save(_ account: Account, tokens: TokenSet) throws {
    defer { forget() }
    try backing.save(account, tokens: tokens)
  }

  func remove(_ key: AccountKey) throws -> Bool {
    defer { forget() }
    return try backing.remove(key)
  }

  func loadToken(for key: AccountKey, scopes: ScopeSet) throws -> TokenSet? {
    guard remembers() else { return try backing.loadToken(for: key, scopes: scopes) }
    let scopedKey = ScopedKey(account: key, scopes: scopes)
    let (generation, held) = memory.withLock { ($0.generation, $0.scoped[scopedKey]) }
    let name = "\(key) for \(scopes)"
    if let held { return try held.map { box in try box.withBytes { try TokenSet(storageJSON: $0, item: name) } } }
    let read = try backing.loadToken(for: key, scopes: scopes)
    let box = try read.map { SecretBox(try $0.storageJSON()) }
    memory.withLock { if $0.generation == generation { $0.scoped[scopedKey] = .some(box) } }
    return read
  }

  func saveToken(_ tokens: TokenSet, scopes: ScopeSet, of account: Account) throws {
    defer { forget() }
    try backing.saveToken(tokens, scopes: scopes, of: account)
  }
}
