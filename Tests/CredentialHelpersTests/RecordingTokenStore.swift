import Synchronization
import TokenKit
import TokenStoreTesting

/// An in-memory store that records each call, to show which keyring reads a request costs.
final class RecordingTokenStore: TokenStore {
  let inner: InMemoryTokenStore
  private let log = Mutex<[String]>([])
  /// When set, `loadAll` throws, as the keyring does when one of the items is damaged.
  let failLoadAll: Bool

  init(_ accounts: [StoredAccount] = [], failLoadAll: Bool = false) throws {
    inner = InMemoryTokenStore()
    self.failLoadAll = failLoadAll
    for stored in accounts { try inner.save(stored.account, tokens: stored.tokens) }
  }

  var group: String { inner.group }
  var calls: [String] { log.withLock { $0 } }

  private func record(_ call: String) { log.withLock { $0.append(call) } }

  private static func describe(_ query: AccountQuery) -> String {
    [query.type.map { "type=\($0)" }, query.id.map { "id=\($0)" }, query.name.map { "name=\($0)" }]
      .compactMap { $0 }.joined(separator: " ")
  }

  func list(_ query: AccountQuery) throws -> [AccountListing] {
    record("list \(Self.describe(query))")
    return try inner.list(query)
  }

  func load(_ key: AccountKey) throws -> StoredAccount? {
    record("load \(key)")
    return try inner.load(key)
  }

  func loadAll(_ query: AccountQuery) throws -> [StoredAccount] {
    record("loadAll \(Self.describe(query))")
    if failLoadAll { throw TokenKitError(.storeFailure, "a damaged item") }
    return try inner.loadAll(query)
  }

  func save(_ account: Account, tokens: TokenSet) throws {
    record("save \(account.key)")
    try inner.save(account, tokens: tokens)
  }

  func remove(_ key: AccountKey) throws -> Bool {
    record("remove \(key)")
    return try inner.remove(key)
  }
}

/// Locks nobody holds: the helper's tests refresh nothing themselves (the refresher is a
/// closure they pass).
struct NoRefreshInFlight: AccountLocking {
  struct Handle: AccountLockHandle { func release() {} }
  func acquire(_ key: AccountKey, group: String, timeout: Duration) async throws -> any AccountLockHandle { Handle() }
  func isHeld(_ key: AccountKey, group: String) -> Bool { false }
}
