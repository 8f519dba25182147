import Synchronization
import TokenKit

/// The agent's memory of one group: a store in front of the keyring that answers reads
/// from what it last read, and forgets the moment the keyring says something changed,
/// called on the Secret Service's signals: the one item a signal names
/// (``forget(item:)``), which is read again alone, or everything (``forget()``).
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
    /// Its item's address, where the store has them (``AddressedTokenStore``).
    var address: String?
  }
  private struct ScopedKey: Hashable {
    var account: AccountKey
    var scopes: ScopeSet
  }
  private struct Memory {
    var generation = 0
    var listings: [AccountQuery: [AccountListing]] = [:]
    var accounts: [Entry]?
    /// Items the keyring said changed since `accounts` was read (``forget(item:)``): read
    /// again, one by one, before `accounts` answers.
    var pending: Set<String> = []
    /// nil for a token read and found absent.
    var scoped: [ScopedKey: SecretBox?] = [:]
  }
  private let memory = Mutex(Memory())
  /// Held while the group is read whole: requests that find nothing held wait for the one
  /// read in flight instead of each starting their own. With 1,000 accounts one read holds
  /// some 14 MiB of D-Bus replies and item proxies until it ends; the first clients and
  /// the refresh-ahead tasks they start all missed at once, and the agent's peak memory was
  /// several reads' worth (`make bench`, row 9).
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

  /// Drops what is held of the item at `address` (a change signal named it), and of every
  /// listing; the group's accounts are kept, and the next read reads that item alone
  /// (with 1,000 accounts, a refresh every few seconds made every answer wait
  /// for the whole group). A store without addresses forgets everything.
  func forget(item address: String) {
    guard backing is any AddressedTokenStore else { return forget() }
    memory.withLock { memory in
      memory.generation += 1
      memory.listings = [:]
      // Tokens for other scopes are items of their own, with no address held: read again.
      memory.scoped = [:]
      guard var accounts = memory.accounts else { return }
      accounts.removeAll { $0.address == address }
      memory.accounts = accounts
      memory.pending.insert(address)
    }
  }

  /// How many accounts with tokens are held, for the agent's status.
  var heldAccounts: Int { memory.withLock { $0.accounts?.count ?? 0 } }

  func list(_ query: AccountQuery) throws -> [AccountListing] {
    guard remembers() else { return try backing.list(query) }
    let (generation, held, holdsAccounts) = memory.withLock {
      ($0.generation, $0.listings[query], $0.accounts != nil)
    }
    if let held { return held }
    // The group's accounts are held: the listing is theirs, without asking the keyring.
    if holdsAccounts, let entries = try readGroup() {
      return try entries.filter { query.matches($0.account) }.map { entry in
        AccountListing(
          account: entry.account,
          tokens: try entry.tokens.withBytes { try TokenSet(storageJSON: $0, item: entry.account.qualifiedName) }
            .summary)
      }.sorted { ($0.account.type, $0.account.name) < ($1.account.type, $1.account.name) }
    }
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
    if let held = memory.withLock({ $0.pending.isEmpty ? $0.accounts : nil }) {
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
      let (generation, held, pending) = memory.withLock { ($0.generation, $0.accounts, $0.pending) }
      if let held, pending.isEmpty { return held }
      if let held, let addressed = backing as? any AddressedTokenStore,
        let entries = try? reread(pending, into: held, from: addressed)
      {
        memory.withLock { memory in
          if memory.generation == generation {
            memory.accounts = entries
            memory.pending = []
          }
        }
        return entries
      }
      let entries: [Entry]
      if let addressed = backing as? any AddressedTokenStore {
        guard let all = try? addressed.loadAllAddressed(.all) else { return nil }
        entries = try all.map {
          Entry(account: $0.stored.account, tokens: SecretBox(try $0.stored.tokens.storageJSON()), address: $0.address)
        }
      } else {
        guard let all = try? backing.loadAll(.all) else { return nil }
        entries = try all.map { Entry(account: $0.account, tokens: SecretBox(try $0.tokens.storageJSON())) }
      }
      memory.withLock { memory in
        if memory.generation == generation {
          memory.accounts = entries
          memory.pending = []
        }
      }
      return entries
    }
  }

  /// `held` with the items at `addresses` read again; nil where only reading the whole
  /// group again is sure to be right: an item that cannot be read (gone, locked), or an
  /// account held from another item (copies of one account, of which the group's read
  /// keeps the newest).
  private func reread(
    _ addresses: Set<String>, into held: [Entry], from store: any AddressedTokenStore
  ) throws
    -> [Entry]?
  {
    var entries = held
    for address in addresses.sorted() {
      guard let stored = try store.load(address: address) else { continue }
      let key = stored.account.key
      guard !entries.contains(where: { $0.account.key == key && $0.address != address }) else { return nil }
      entries.removeAll { $0.account.key == key }
      entries.append(
        Entry(account: stored.account, tokens: SecretBox(try stored.tokens.storageJSON()), address: address))
    }
    return entries
  }

  func save(_ account: Account, tokens: TokenSet) throws {
    defer { forgetAfterWriting(account.key) }
    try backing.save(account, tokens: tokens)
  }

  /// After a write of `key`'s item (a refresh ahead, one of 1,000 every few seconds): that
  /// item alone is read again, as after its change signal, when its address is held; the
  /// store replaces an account's item in place. Anything else forgets everything.
  private func forgetAfterWriting(_ key: AccountKey) {
    let address = memory.withLock { $0.accounts?.first { $0.account.key == key }?.address }
    if let address { forget(item: address) } else { forget() }
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
