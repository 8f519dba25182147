import Testing
import TokenKit
import TokenStoreTesting

/// The in-memory store passes the same conformance suite as the keyring store.
@Suite struct InMemoryTokenStoreTests {
  let backing = InMemoryTokenStore.Backing()

  @Test(arguments: TokenStoreConformance.checks)
  func conformance(_ check: TokenStoreConformance.Check) throws {
    let backing = backing
    try check.run { group in InMemoryTokenStore(group: group, backing: backing) }
  }
}
