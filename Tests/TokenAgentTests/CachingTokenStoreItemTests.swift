import Foundation
import Synchronization
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenAgent

/// The agent's memory of a group in front of a store with item addresses, as the Secret
/// Service's object paths are: a change to one item costs a read of that item,
/// not of the group.
@Suite struct CachingTokenStoreItemTests {
  /// An in-memory store whose items have addresses (`TYPE/ID`), counting its group reads
  /// and its reads by address.
  final class AddressedStore: AddressedTokenStore, Sendable {
    let inner: InMemoryTokenStore
    let groupReads = Atomic(0)
    let addressReads = Atomic(0)
    let listReads = Atomic(0)
    let searches = Atomic(0)
    /// While true, reads by address wait: a read of the keyring that takes its time.
    let holdsAddressReads = Atomic(false)
    var group: String { inner.group }

    init(_ inner: InMemoryTokenStore = InMemoryTokenStore(group: "items")) { self.inner = inner }

    static func address(_ key: AccountKey) -> String { "\(key.type)/\(key.id)" }

    func loadAllAddressed(_ query: AccountQuery) throws -> [AddressedAccount] {
      groupReads.add(1, ordering: .sequentiallyConsistent)
      return try inner.loadAll(query).map { AddressedAccount(address: Self.address($0.account.key), stored: $0) }
    }
    func load(address: String) throws -> StoredAccount? {
      addressReads.add(1, ordering: .sequentiallyConsistent)
      while holdsAddressReads.load(ordering: .sequentiallyConsistent) { usleep(1000) }
      // Another program's item, as the keyring's own search would not find it.
      if address.hasPrefix(Self.elsewhere) { return nil }
      let parts = address.split(separator: "/", maxSplits: 1).map(String.init)
      guard parts.count == 2, let stored = try inner.load(AccountKey(type: parts[0], id: parts[1])) else {
        throw TokenKitError(.storeFailure, "no item at \(address)")
      }
      return stored
    }
    /// The prefix of addresses of items that are not this group's accounts.
    static let elsewhere = "elsewhere:"

    let attributeReads = Atomic(0)
    func isAccountItem(address: String) throws -> Bool? {
      attributeReads.add(1, ordering: .sequentiallyConsistent)
      if address.hasPrefix(Self.elsewhere) { return false }
      let parts = address.split(separator: "/", maxSplits: 1).map(String.init)
      guard parts.count == 2, try inner.load(AccountKey(type: parts[0], id: parts[1])) != nil else { return nil }
      return true
    }

    func addresses() throws -> Set<String>? {
      searches.add(1, ordering: .sequentiallyConsistent)
      return Set(try inner.list(.all).map { Self.address($0.account.key) })
    }
    func list(_ query: AccountQuery) throws -> [AccountListing] {
      listReads.add(1, ordering: .sequentiallyConsistent)
      return try inner.list(query)
    }
    func load(_ key: AccountKey) throws -> StoredAccount? { try inner.load(key) }
    func loadAll(_ query: AccountQuery) throws -> [StoredAccount] {
      try loadAllAddressed(query).map(\.stored)
    }
    func save(_ account: Account, tokens: TokenSet) throws { try inner.save(account, tokens: tokens) }
    func remove(_ key: AccountKey) throws -> Bool { try inner.remove(key) }
    func loadToken(for key: AccountKey, scopes: ScopeSet) throws -> TokenSet? {
      try inner.loadToken(for: key, scopes: scopes)
    }
    func saveToken(_ tokens: TokenSet, scopes: ScopeSet, of account: Account) throws {
      try inner.saveToken(tokens, scopes: scopes, of: account)
    }

    var counts: (group: Int, address: Int, list: Int) {
      (
        groupReads.load(ordering: .sequentiallyConsistent), addressReads.load(ordering: .sequentiallyConsistent),
        listReads.load(ordering: .sequentiallyConsistent)
      )
    }
  }

  static let backings = InMemoryTokenStore.Backing()

  /// Everything a store must do, the memory of items included.
  @Test(arguments: TokenStoreConformance.checks)
  func conformance(_ check: TokenStoreConformance.Check) throws {
    try check.run { group in
      CachingTokenStore(AddressedStore(InMemoryTokenStore(group: group, backing: Self.backings)))
    }
  }

  static func account(_ index: Int) -> Account {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    return Account(
      type: "corp", id: "id-\(index)", name: "user\(index)", group: "items", createdAt: now, updatedAt: now)
  }

  static func tokens(_ access: String, expiresIn: Double = 3600) -> TokenSet {
    TokenSet(
      accessToken: access, refreshToken: "refresh", expiresAt: Date(timeIntervalSince1970: 1_790_000_000 + expiresIn))
  }

  @Test func anItemChangedByAnotherProcessIsReadAgainAlone() throws {
    let backing = AddressedStore()
    for index in 0..<100 { try backing.save(Self.account(index), tokens: Self.tokens("a\(index)")) }
    let store = CachingTokenStore(backing)
    #expect(try store.load(Self.account(1).key)?.tokens.accessToken == "a1")
    #expect(backing.counts.group == 1)

    // Another process refreshes account 5: the keyring names its item.
    try backing.inner.save(Self.account(5), tokens: Self.tokens("a5-new", expiresIn: 7200))
    store.forget(item: AddressedStore.address(Self.account(5).key))
    #expect(try store.load(Self.account(5).key)?.tokens.accessToken == "a5-new")
    #expect(try store.load(Self.account(7).key)?.tokens.accessToken == "a7")
    let listed = try store.list(.all)
    #expect(listed.count == 100)
    #expect(listed.first { $0.account.id == "id-5" }?.tokens.expiresAt == Date(timeIntervalSince1970: 1_790_007_200))
    #expect(backing.counts == (group: 1, address: 1, list: 0), "\(backing.counts)")
  }

  @Test func aRefreshWrittenThroughTheMemoryIsReadAgainAlone() throws {
    let backing = AddressedStore()
    for index in 0..<10 { try backing.save(Self.account(index), tokens: Self.tokens("a\(index)")) }
    let store = CachingTokenStore(backing)
    _ = try store.loadAll(.all)
    try store.save(Self.account(3), tokens: Self.tokens("a3-refreshed"))
    #expect(try store.load(Self.account(3).key)?.tokens.accessToken == "a3-refreshed")
    #expect(backing.counts.group == 1 && backing.counts.address == 1, "\(backing.counts)")
  }

  @Test func aNewItemJoinsAndAnItemThatIsGoneLeavesWithoutReadingTheGroup() throws {
    let backing = AddressedStore()
    for index in 0..<10 { try backing.save(Self.account(index), tokens: Self.tokens("a\(index)")) }
    let store = CachingTokenStore(backing)
    _ = try store.loadAll(.all)
    // Signed in by another process.
    try backing.inner.save(Self.account(10), tokens: Self.tokens("a10"))
    store.forget(item: AddressedStore.address(Self.account(10).key))
    #expect(try store.load(Self.account(10).key)?.tokens.accessToken == "a10")
    #expect(backing.counts.group == 1)
    // Removed by another process: its item cannot be read, and the group's search no
    // longer finds it; the rest stay.
    _ = try backing.inner.remove(Self.account(4).key)
    store.forget(item: AddressedStore.address(Self.account(4).key))
    #expect(try store.load(Self.account(4).key) == nil)
    #expect(try store.loadAll(.all).count == 10)
    #expect(backing.counts.group == 1, "\(backing.counts)")
  }

  /// Another program's writes cost one small read of each item's attributes, not the
  /// group's search, whose answer grows with the accounts held; a burst of them, more
  /// than a few at once, one search.
  @Test func anotherProgramsItemsAreToldApartByTheirAttributes() throws {
    let backing = AddressedStore()
    for index in 0..<10 { try backing.save(Self.account(index), tokens: Self.tokens("a\(index)")) }
    let store = CachingTokenStore(backing)
    _ = try store.loadAll(.all)
    store.forget(item: AddressedStore.elsewhere + "1")
    #expect(try store.list(.all).count == 10)
    #expect(backing.searches.load(ordering: .sequentiallyConsistent) == 0)
    #expect(backing.attributeReads.load(ordering: .sequentiallyConsistent) == 1)
    #expect(backing.counts.address == 0, "no item read")
    // Remembered as not ours: a second change of it reads nothing.
    store.forget(item: AddressedStore.elsewhere + "1")
    #expect(try store.list(.all).count == 10)
    #expect(backing.attributeReads.load(ordering: .sequentiallyConsistent) == 1)

    for index in 0...CachingTokenStore.itemsAskedAlone {
      store.forget(item: AddressedStore.elsewhere + "burst\(index)")
    }
    #expect(try store.list(.all).count == 10)
    #expect(backing.searches.load(ordering: .sequentiallyConsistent) == 1)
    #expect(backing.attributeReads.load(ordering: .sequentiallyConsistent) == 1)
    #expect(backing.counts.group == 1)
  }

  /// A change the keyring does not pin to one item forgets everything, as before.
  @Test func aChangeWithoutAnItemForgetsTheGroup() throws {
    let backing = AddressedStore()
    for index in 0..<3 { try backing.save(Self.account(index), tokens: Self.tokens("a\(index)")) }
    let store = CachingTokenStore(backing)
    _ = try store.loadAll(.all)
    try backing.inner.save(Self.account(1), tokens: Self.tokens("a1-new"))
    store.forget()
    #expect(try store.load(Self.account(1).key)?.tokens.accessToken == "a1-new")
    #expect(backing.counts.group == 2)
  }
}
