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
    struct ScopedKey: Hashable {
      var account: Key
      var scopes: ScopeSet
    }
    struct Items {
      var accounts: [Key: StoredAccount] = [:]
      /// Tokens for other scopes, apart from the accounts, as the keyring keeps them.
      var scoped: [ScopedKey: TokenSet] = [:]
    }
    let items = Mutex(Items())
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
      items.accounts.filter { $0.key.group == group && query.matches($0.value.account) }
        .map { AccountListing(account: $0.value.account, tokens: $0.value.tokens.summary) }
        .sorted { ($0.account.type, $0.account.name) < ($1.account.type, $1.account.name) }
    }
  }

  public func load(_ key: AccountKey) throws -> StoredAccount? {
    backing.items.withLock { $0.accounts[Backing.Key(group: group, account: key)] }
  }

  public func save(_ account: Account, tokens: TokenSet) throws {
    guard account.group == group else { throw groupMismatch(account) }
    backing.items.withLock {
      $0.accounts[Backing.Key(group: group, account: account.key)] = StoredAccount(account: account, tokens: tokens)
    }
  }

  @discardableResult
  public func remove(_ key: AccountKey) throws -> Bool {
    let account = Backing.Key(group: group, account: key)
    return backing.items.withLock { items in
      items.scoped = items.scoped.filter { $0.key.account != account }
      return items.accounts.removeValue(forKey: account) != nil
    }
  }

  public func loadToken(for key: AccountKey, scopes: ScopeSet) throws -> TokenSet? {
    backing.items.withLock {
      $0.scoped[Backing.ScopedKey(account: Backing.Key(group: group, account: key), scopes: scopes)]
    }
  }

  public func saveToken(_ tokens: TokenSet, scopes: ScopeSet, of account: Account) throws {
    guard account.group == group else { throw groupMismatch(account) }
    backing.items.withLock {
      $0.scoped[Backing.ScopedKey(account: Backing.Key(group: group, account: account.key), scopes: scopes)] =
        tokens.withoutGrant
    }
  }
}
