import Synchronization
import TokenKit

/// A `TokenStore` in memory, for tests of code that uses a store.
///
/// Stores made with the same `Backing` share it as keyring items share a keyring: each sees
/// only its own group.
public struct InMemoryTokenStore: TokenStore {
  /// What several in-memory stores share.
  public final class Backing: Sendable {
    struct Key: Hashable {
      var group: String
      var account: AccountKey
    }
    let items = Mutex<[Key: StoredAccount]>([:])
    public init() {}
  }

  public let group: String
  private let backing: Backing

  public init(group: String = Account.defaultGroup, backing: Backing = Backing()) {
    self.group = group
    self.backing = backing
  }

  public func list(_ query: AccountQuery) throws -> [AccountListing] {
    backing.items.withLock { items in
      items.filter { $0.key.group == group && query.matches($0.value.account) }
        .map { AccountListing(account: $0.value.account, tokens: $0.value.tokens.summary) }
        .sorted { ($0.account.type, $0.account.name) < ($1.account.type, $1.account.name) }
    }
  }

  public func load(_ key: AccountKey) throws -> StoredAccount? {
    backing.items.withLock { $0[Backing.Key(group: group, account: key)] }
  }

  public func save(_ account: Account, tokens: TokenSet) throws {
    guard account.group == group else { throw groupMismatch(account) }
    backing.items.withLock {
      $0[Backing.Key(group: group, account: account.key)] = StoredAccount(account: account, tokens: tokens)
    }
  }

  @discardableResult
  public func remove(_ key: AccountKey) throws -> Bool {
    backing.items.withLock { $0.removeValue(forKey: Backing.Key(group: group, account: key)) != nil }
  }
}
