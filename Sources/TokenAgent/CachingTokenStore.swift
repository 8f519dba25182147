import Synchronization
import TokenKit

/// The agent's memory of one group: a store in front of the keyring that answers reads
/// from what it last read, and forgets the moment the keyring says something changed,
/// called on the Secret Service's signals: the one item a signal names
/// (``forget(item:)``), or everything (``forget()``).
///
/// What it holds: the listings it was asked for, by query, and every account of the
/// group with its tokens, read in one search, the tokens kept in ``SecretBox``es. Errors
/// are never kept: a locked keyring is asked again next time, so unlocking it is seen at
/// once. Writes go straight through, then the item written is read again when next asked.
///
/// A signal reads nothing. It marks the item it names as changed, and a read settles what
/// it needs, one read at a time, taking every change marked by then at once:
/// - an answer for an account whose item is unchanged comes from memory at once, never
///   behind a read of another item (a client's token, the agent's status);
/// - an answer for an account whose item changed reads that item alone;
/// - a listing, or an answer that finds no account in memory, first asks the keyring which
///   items are the group's (one search, no item read): a changed item that is not, of
///   another group, kind or program, is never read, and is remembered as not ours.
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
    /// What a listing shows of `tokens`, kept so that listing the group (every look for
    /// accounts to keep fresh) decodes no token.
    var summary: TokenSummary

    init(_ stored: StoredAccount, address: String? = nil) throws {
      account = stored.account
      tokens = SecretBox(try stored.tokens.storageJSON())
      self.address = address
      summary = stored.tokens.summary
    }
  }
  private struct ScopedKey: Hashable {
    var account: AccountKey
    var scopes: ScopeSet
  }
  private struct Memory {
    /// Moves on every change: a listing or token for other scopes read meanwhile is not kept.
    var generation = 0
    /// Moves when everything is forgotten: a read of the group in flight is not kept.
    var epoch = 0
    /// Moves whenever the accounts held may have changed: everything forgotten, the group
    /// read or listed, or an item of the group settled. Not when the changes settled were
    /// all another program's items (``accountsRevision``).
    var revision = 0
    var listings: [AccountQuery: [AccountListing]] = [:]
    var accounts: [Entry]?
    /// The addresses of `accounts`' items.
    var held: Set<String> = []
    /// Items the keyring said changed and no read has settled yet, each with the number of
    /// the change that marked it last: a read settles an item only if no change came
    /// after the one it read for.
    var changed: [String: Int] = [:]
    var changes = 0
    /// Items found not to be accounts of this group: their changes are ignored.
    var foreign: Set<String> = []
    /// nil for a token read and found absent.
    var scoped: [ScopedKey: SecretBox?] = [:]

    /// Whether `accounts` answer `query` now: none of those it matches changed, and a
    /// query that matches none, or a listing (`whole`), has no changed item that could be
    /// the one. Nothing is copied: with 1,000 accounts held, copying them for each answer
    /// cost more than the answer.
    func answers(_ accounts: [Entry], _ query: AccountQuery, whole: Bool) -> Bool {
      if changed.isEmpty { return true }
      if whole { return false }
      var matched = false
      for entry in accounts where query.matches(entry.account) {
        matched = true
        if let address = entry.address, changed[address] != nil { return false }
      }
      return matched
    }
  }
  private let memory = Mutex(Memory())
  /// Held while the keyring is read for the memory: requests that need a read wait for
  /// the one in flight, which settles every change marked by then, instead of each
  /// starting their own. With 1,000 accounts one read of the group holds some 14 MiB of
  /// D-Bus replies until it ends. Only requests that need the keyring take it.
  private let reading = Mutex(())
  /// Whether to remember at all: only while someone tells us of changes.
  private let remembers: @Sendable () -> Bool
  /// How many addresses found not to be ours are remembered: a program that writes many
  /// items of its own is ignored, and memory stays bounded whatever it writes.
  static let foreignLimit = 4096

  init(_ backing: any TokenStore, remembers: @escaping @Sendable () -> Bool = { true }) {
    self.backing = backing
    self.remembers = remembers
  }

  /// Drops what is held; reads in flight are not kept.
  func forget() {
    memory.withLock { memory in
      memory = Memory(
        generation: memory.generation + 1, epoch: memory.epoch + 1, revision: memory.revision + 1,
        changes: memory.changes)
    }
  }

  /// Marks the item at `address` as changed (a change signal named it), and drops every
  /// listing and token for other scopes; nothing is read until an answer needs that item.
  /// A store without addresses forgets everything.
  func forget(item address: String) {
    guard backing is any AddressedTokenStore else { return forget() }
    memory.withLock { memory in
      memory.generation += 1
      memory.listings = [:]
      // Tokens for other scopes are items of their own, with no address held: read again.
      memory.scoped = [:]
      guard !memory.foreign.contains(address) else { return }
      memory.changes += 1
      memory.changed[address] = memory.changes
    }
  }

  /// After a write of `key`'s item by another process of ours (a refresh child): that item
  /// alone is read again when next asked, as after its change signal, when its address is
  /// held; the store replaces an account's item in place. Else everything is forgotten.
  func forget(account key: AccountKey) {
    let address = memory.withLock { $0.accounts?.first { $0.account.key == key }?.address }
    if let address { forget(item: address) } else { forget() }
  }

  /// A number that moves whenever the group's accounts may have changed, so that a look
  /// over all of them (for accounts to keep fresh, for changes to report) can be skipped
  /// when it has not moved since the last: another program's writes, settled as not the
  /// group's, leave it where it was. nil when nothing is remembered, and every look reads.
  var accountsRevision: Int? {
    guard remembers() else { return nil }
    return memory.withLock { $0.revision }
  }

  /// The changes marked since the last read settled, as an answer would settle them, and
  /// ``accountsRevision`` after that, without listing the accounts; nil when the group's
  /// accounts are not held (only a listing can say) or cannot be read now.
  func settledRevision() -> Int? {
    guard remembers(), memory.withLock({ $0.accounts != nil }),
      (try? entries(for: .all, whole: true)) != nil
    else { return nil }
    return memory.withLock { $0.revision }
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
    if holdsAccounts, let entries = try entries(for: query, whole: true) {
      return entries.filter { query.matches($0.account) }
        .map { AccountListing(account: $0.account, tokens: $0.summary) }
        .sorted { ($0.account.type, $0.account.name) < ($1.account.type, $1.account.name) }
    }
    let listings = try backing.list(query)
    memory.withLock { memory in
      // Read from the keyring, not from what is held: it may differ from the last.
      memory.revision += 1
      if memory.generation == generation { memory.listings[query] = listings }
    }
    return listings
  }

  func load(_ key: AccountKey) throws -> StoredAccount? {
    try loadAll(AccountQuery(type: key.type, id: key.id)).first
  }

  func loadAll(_ query: AccountQuery) throws -> [StoredAccount] {
    guard remembers() else { return try backing.loadAll(query) }
    guard let entries = try entries(for: query, whole: false) else {
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

  /// The group's accounts, enough of them current to answer `query` (all of them for a
  /// listing, `whole`): from memory when it answers, else after the one read at a time;
  /// nil when the group's search failed.
  private func entries(for query: AccountQuery, whole: Bool) throws -> [Entry]? {
    let fromMemory = memory.withLock { memory -> [Entry]? in
      guard let accounts = memory.accounts,
        memory.answers(accounts, query, whole: whole)
      else { return nil }
      return accounts
    }
    if let fromMemory { return fromMemory }
    return try reading.withLock { _ in
      // What the read this one waited for settled, if that is enough.
      let (epoch, held, changed) = memory.withLock { ($0.epoch, $0.accounts, $0.changed) }
      if let held, memory.withLock({ $0.answers(held, query, whole: whole) }) {
        return held
      }
      if let held, let addressed = backing as? any AddressedTokenStore,
        let settled = try? settle(changed, in: held, from: addressed)
      {
        memory.withLock { memory in
          guard memory.epoch == epoch else { return }
          memory.accounts = settled.entries
          memory.held = Set(settled.entries.compactMap(\.address))
          if settled.foreign.count < changed.count { memory.revision += 1 }
          for (address, change) in changed where memory.changed[address] == change {
            memory.changed[address] = nil
          }
          if memory.foreign.count + settled.foreign.count > Self.foreignLimit { memory.foreign = [] }
          memory.foreign.formUnion(settled.foreign)
        }
        return settled.entries
      }
      return try readGroup(epoch: epoch)
    }
  }

  /// Every account of the group with its tokens, in one search, so that the next request,
  /// whatever account it names, is answered from memory; nil when the search failed. Run
  /// with `reading` held.
  private func readGroup(epoch: Int) throws -> [Entry]? {
    let before = memory.withLock { $0.changes }
    let entries: [Entry]
    if let addressed = backing as? any AddressedTokenStore {
      guard let all = try? addressed.loadAllAddressed(.all) else { return nil }
      entries = try all.map {
        try Entry($0.stored, address: $0.address)
      }
    } else {
      guard let all = try? backing.loadAll(.all) else { return nil }
      entries = try all.map { try Entry($0) }
    }
    memory.withLock { memory in
      guard memory.epoch == epoch else { return }
      memory.accounts = entries
      memory.held = Set(entries.compactMap(\.address))
      memory.revision += 1
      // A change marked while the search ran may or may not be in what it read.
      memory.changed = memory.changed.filter { $0.value > before }
    }
    return entries
  }

  /// `held` with the changed items at `changed` read again, alone; an item changed that is
  /// not held is first looked for among the group's items (one search), and read only if
  /// it is one. nil where only reading the whole group again is sure to be right: a held
  /// item that cannot be read (gone, locked) and no search says it is gone, or an account
  /// held from another item (copies of one account, of which the group's read keeps the
  /// newest).
  private func settle(
    _ changed: [String: Int], in held: [Entry], from store: any AddressedTokenStore
  ) throws -> (entries: [Entry], foreign: Set<String>)? {
    var entries = held
    let heldAddresses = Set(held.compactMap(\.address))
    var foreign: Set<String> = []
    // Which changed items that are not held are the group's (or may be gone): by what each
    // says of itself when they are few, else by the group's search.
    let unheld = changed.keys.filter { !heldAddresses.contains($0) }
    var ours: Set<String>?
    var notOurs: Set<String> = []
    if !unheld.isEmpty {
      if let each = try Self.itemsNotOfTheGroup(unheld, in: store) {
        notOurs = each
      } else {
        ours = try store.addresses()
      }
    }
    for address in changed.keys.sorted() {
      if notOurs.contains(address) || ours.map({ !$0.contains(address) }) == true {
        // Not an account item of this group, or no longer: nothing to read. Another
        // program's item was never held: `entries` stays as it is, uncopied.
        if heldAddresses.contains(address) {
          entries.removeAll { $0.address == address }
        } else {
          foreign.insert(address)
        }
        continue
      }
      let stored: StoredAccount?
      do {
        stored = try store.load(address: address)
      } catch  where !heldAddresses.contains(address) {
        // Gone before it could be read: it holds no account now.
        continue
      } catch {
        // A held item that cannot be read: gone, if the group's search no longer finds it.
        guard let ours = try ours ?? store.addresses(), !ours.contains(address) else { throw error }
        stored = nil
      }
      entries.removeAll { $0.address == address }
      guard let stored else {
        if !heldAddresses.contains(address) { foreign.insert(address) }
        continue
      }
      let key = stored.account.key
      guard !entries.contains(where: { $0.account.key == key }) else { return nil }
      entries.append(try Entry(stored, address: address))
    }
    return (entries, foreign)
  }

  /// How many changed items not held are asked about one by one before the group's search
  /// is cheaper: a search costs about as much as a few item reads at a hundred accounts.
  static let itemsAskedAlone = 8

  /// Which of `addresses` are not account items of the group, asking each item
  /// (``AddressedTokenStore/isAccountItem(address:)``); nil when they are too many, or one
  /// cannot tell, and the group's search must say.
  private static func itemsNotOfTheGroup(
    _ addresses: [String], in store: any AddressedTokenStore
  ) throws -> Set<String>? {
    guard addresses.count <= itemsAskedAlone else { return nil }
    var notOurs: Set<String> = []
    for address in addresses {
      guard let isAccount = try store.isAccountItem(address: address) else { return nil }
      if !isAccount { notOurs.insert(address) }
    }
    return notOurs
  }

  func save(_ account: Account, tokens: TokenSet) throws {
    defer { forget(account: account.key) }
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
