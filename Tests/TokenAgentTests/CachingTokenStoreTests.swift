import Foundation
import Synchronization
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenAgent

/// The agent's memory of a group, in front of a store that counts and slows its reads.
@Suite struct CachingTokenStoreTests {
  /// An in-memory store whose group-wide reads are counted and take a while, as a keyring
  /// with many items does.
  final class SlowStore: TokenStore, Sendable {
    let inner = InMemoryTokenStore(group: "slow")
    let groupReads = Atomic(0)
    var group: String { inner.group }

    func list(_ query: AccountQuery) throws -> [AccountListing] { try inner.list(query) }
    func load(_ key: AccountKey) throws -> StoredAccount? { try inner.load(key) }
    func loadAll(_ query: AccountQuery) throws -> [StoredAccount] {
      if query == .all {
        groupReads.add(1, ordering: .sequentiallyConsistent)
        usleep(200_000)
      }
      return try inner.loadAll(query)
    }
    func save(_ account: Account, tokens: TokenSet) throws { try inner.save(account, tokens: tokens) }
    func remove(_ key: AccountKey) throws -> Bool { try inner.remove(key) }
    let scopedReads = Atomic(0)
    func loadToken(for key: AccountKey, scopes: ScopeSet) throws -> TokenSet? {
      scopedReads.add(1, ordering: .sequentiallyConsistent)
      return try inner.loadToken(for: key, scopes: scopes)
    }
    func saveToken(_ tokens: TokenSet, scopes: ScopeSet, of account: Account) throws {
      try inner.saveToken(tokens, scopes: scopes, of: account)
    }
  }

  static let backings = InMemoryTokenStore.Backing()

  @Test(arguments: TokenStoreConformance.checks)
  func conformance(_ check: TokenStoreConformance.Check) throws {
    try check.run { group in CachingTokenStore(InMemoryTokenStore(group: group, backing: Self.backings)) }
  }

  /// Tokens for other scopes are remembered apart from the accounts, absent ones too,
  /// until the keyring changes.
  @Test func tokensForOtherScopesAreRememberedApartUntilAChange() throws {
    let backing = SlowStore()
    let ada = Self.account("ada")
    try backing.save(ada, tokens: TokenSet(accessToken: "access-ada", refreshToken: "refresh-ada"))
    let store = CachingTokenStore(backing)
    let read = ScopeSet(["read"])!
    let reads = { backing.scopedReads.load(ordering: .sequentiallyConsistent) }

    #expect(try store.loadToken(for: ada.key, scopes: read) == nil)
    #expect(try store.loadToken(for: ada.key, scopes: read) == nil)
    #expect(reads() == 1)
    try store.saveToken(TokenSet(accessToken: "access-ada-read"), scopes: read, of: ada)
    #expect(try store.loadToken(for: ada.key, scopes: read)?.accessToken == "access-ada-read")
    #expect(try store.loadToken(for: ada.key, scopes: read)?.accessToken == "access-ada-read")
    #expect(reads() == 2)
    #expect(try store.loadToken(for: ada.key, scopes: ScopeSet(["write"])!) == nil)
    #expect(reads() == 3)
    // The account's own token is its own, and the scoped one is not an account.
    #expect(try store.load(ada.key)?.tokens.accessToken == "access-ada")
    #expect(try store.loadAll(.all).map(\.tokens.accessToken) == ["access-ada"])

    try backing.saveToken(TokenSet(accessToken: "access-ada-read-2"), scopes: read, of: ada)
    #expect(try store.loadToken(for: ada.key, scopes: read)?.accessToken == "access-ada-read")
    store.forget()
    #expect(try store.loadToken(for: ada.key, scopes: read)?.accessToken == "access-ada-read-2")
  }

  static func account(_ name: String) -> Account {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    return Account(type: "corp", id: "id-\(name)", name: name, group: "slow", createdAt: now, updatedAt: now)
  }

  @Test func requestsThatMissTogetherShareOneReadOfTheGroup() async throws {
    let backing = SlowStore()
    for name in ["ada", "grace", "linus"] {
      try backing.save(Self.account(name), tokens: TokenSet(accessToken: "access-\(name)"))
    }
    let store = CachingTokenStore(backing)
    let answers = Mutex<[String]>([])
    let threads = (0..<8).map { index in
      Thread {
        let name = ["ada", "grace", "linus"][index % 3]
        let token = try? store.load(Self.account(name).key)?.tokens.accessToken
        answers.withLock { $0.append(token ?? "none") }
      }
    }
    threads.forEach { $0.start() }
    while answers.withLock({ $0.count }) < threads.count { try await Task.sleep(for: .milliseconds(10)) }

    #expect(backing.groupReads.load(ordering: .sequentiallyConsistent) == 1)
    #expect(
      answers.withLock { $0.sorted() }
        == [
          "access-ada", "access-ada", "access-ada", "access-grace",
          "access-grace", "access-grace", "access-linus", "access-linus",
        ].sorted())
  }
}
