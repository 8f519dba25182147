import Testing
import TokenKit
import TokenStoreTesting

/// The conformance suite must catch a store that breaks its rules; a suite that passes
/// every store proves nothing.
@Suite struct ConformanceSuiteTests {
  /// Saves into whichever group the account names, and forgets nothing on remove, tokens
  /// for other scopes included: two bugs a real store could have.
  struct CarelessStore: TokenStore {
    let group: String
    let backing: InMemoryTokenStore.Backing
    func list(_ query: AccountQuery) throws -> [AccountListing] {
      try InMemoryTokenStore(group: group, backing: backing).list(query)
    }
    func load(_ key: AccountKey) throws -> StoredAccount? {
      try InMemoryTokenStore(group: group, backing: backing).load(key)
    }
    func save(_ account: Account, tokens: TokenSet) throws {
      try InMemoryTokenStore(group: account.group, backing: backing).save(account, tokens: tokens)
    }
    func remove(_ key: AccountKey) throws -> Bool { try load(key) != nil }
    func loadToken(for key: AccountKey, scopes: ScopeSet) throws -> TokenSet? {
      try InMemoryTokenStore(group: group, backing: backing).loadToken(for: key, scopes: scopes)
    }
    func saveToken(_ tokens: TokenSet, scopes: ScopeSet, of account: Account) throws {
      try InMemoryTokenStore(group: account.group, backing: backing).saveToken(tokens, scopes: scopes, of: account)
    }
  }

  @Test func aCarelessStoreFailsTheChecksItBreaks() throws {
    let backing = InMemoryTokenStore.Backing()
    var failed: [String] = []
    for check in TokenStoreConformance.checks {
      do {
        try check.run { CarelessStore(group: $0, backing: backing) }
      } catch is ConformanceFailure {
        failed.append(check.name)
      }
    }
    #expect(
      failed == [
        "remove deletes the account and says whether there was one",
        "saving an account of another group is refused",
        "remove removes the account's tokens for other scopes, and no other account's",
        "a token for other scopes of an account of another group is refused",
      ])
  }
}
