import CLibSecret
import TokenKit

/// A `TokenStore` in the Secret Service (the GNOME keyring), through libsecret.
///
/// Each account is one item in the default collection (the login keyring), with the
/// attributes of `KeyringSchema` and its `TokenSet` as a JSON secret. The group attribute
/// plays the role of an iOS keychain access group: every tool that uses the same group
/// sees the same accounts. The Secret Service gives no per-application isolation, so a
/// group is a namespace and not a wall: any program of the user's can read every item.
///
/// A locked keyring makes libsecret's lookups return nothing without an error. This store
/// checks the lock state whenever it finds nothing, or finds a locked item, and throws
/// `keyringLocked` then, so that "locked" is never mistaken for "no such account".
public struct SecretServiceTokenStore: TokenStore {
  public let group: String

  public init(group: String = Account.defaultGroup) {
    self.group = group
  }

  public func list(_ query: AccountQuery) throws -> [AccountListing] {
    try withService { service in
      let items = try search(service, KeyringSchema.searchAttributes(query, group: group), loadSecrets: false)
      defer { items.forEach(GLibBridge.unref) }
      try requireUnlocked(service, items)
      // The search matched our schema and group, so an item with incomplete attributes was
      // damaged or written by something else: skip it rather than fail the whole listing.
      return newestPerAccount(items).compactMap { KeyringSchema.listing(from: attributes(of: $0)) }
        .filter { query.matches($0.account) }
        .sorted { ($0.account.type, $0.account.name) < ($1.account.type, $1.account.name) }
    }
  }

  public func load(_ key: AccountKey) throws -> StoredAccount? {
    try loadAll(AccountQuery(type: key.type, id: key.id)).first
  }

  /// One search that also fetches the secrets: `tokenctl token` makes no other call.
  public func loadAll(_ query: AccountQuery) throws -> [StoredAccount] {
    try withService { service in
      let items = try search(service, KeyringSchema.searchAttributes(query, group: group), loadSecrets: true)
      defer { items.forEach(GLibBridge.unref) }
      try requireUnlocked(service, items)
      return try newestPerAccount(items).map(storedAccount).filter { query.matches($0.account) }
    }
  }

  private func storedAccount(_ item: OpaquePointer) throws -> StoredAccount {
    let attributes = attributes(of: item)
    let name =
      "\(attributes[KeyringSchema.Attribute.type] ?? "?"):\(attributes[KeyringSchema.Attribute.account] ?? "?")"
    guard let listing = KeyringSchema.listing(from: attributes) else {
      throw TokenKitError(
        .corruptItem, "the keyring item of \(name) has incomplete attributes",
        recovery: "Remove it with Seahorse or `secret-tool clear`, then sign in again.")
    }
    guard let value = tokenctl_secret_item_get_secret(item) else {
      throw TokenKitError(.storeFailure, "the keyring returned no secret for \(name)")
    }
    defer { tokenctl_secret_value_unref(UnsafeMutableRawPointer(value)) }
    var length = 0
    let bytes = tokenctl_secret_value_get(value, &length)!
    let json = Array(UnsafeRawBufferPointer(start: bytes, count: length))
    return StoredAccount(account: listing.account, tokens: try TokenSet(storageJSON: json, item: name))
  }

  public func save(_ account: Account, tokens: TokenSet) throws {
    guard account.group == group else { throw groupMismatch(account) }
    try GLibBridge.requireLibsecret()
    let attributes = GLibBridge.hashTable(KeyringSchema.attributes(of: account, tokens: tokens.summary))
    defer { tokenctl_g_hash_table_unref(attributes) }
    let label = KeyringSchema.label(of: account, defaultGroup: Account.defaultGroup)
    let json = try tokens.storageJSON()
    let value = json.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) {
        tokenctl_secret_value_new($0.baseAddress, gssize($0.count), KeyringSchema.contentType)!
      }
    }
    defer { tokenctl_secret_value_unref(UnsafeMutableRawPointer(value)) }

    try withService { service in
      let existing = try search(service, KeyringSchema.keyAttributes(account.key, group: group), loadSecrets: false)
      defer { existing.forEach(GLibBridge.unref) }
      try requireUnlocked(service, existing)
      if let item = newestPerAccount(existing).first {
        // Replace in place. The secret goes first and in one call, so the tokens are
        // swapped atomically; the attributes then catch up. Creating with "replace" would
        // not do: the Secret Service replaces only an item whose attributes are all equal,
        // and ours change (expiry) with every refresh.
        _ = try GLibBridge.call("storing the tokens of \(account.key)") {
          tokenctl_secret_item_set_secret_sync(item, value, nil, $0)
        }
        _ = try GLibBridge.call("updating the attributes of \(account.key)") {
          tokenctl_secret_item_set_attributes_sync(item, nil, attributes, nil, $0)
        }
        _ = try GLibBridge.call("updating the label of \(account.key)") {
          tokenctl_secret_item_set_label_sync(item, label, nil, $0)
        }
        // Two tokenctl processes that created the same account at once leave two items;
        // the newest wins, and the rest go now.
        for duplicate in existing where duplicate != item {
          _ = try? GLibBridge.call("removing a duplicate of \(account.key)") {
            tokenctl_secret_item_delete_sync(duplicate, nil, $0)
          }
        }
      } else {
        let collection = try defaultCollection(service)
        defer { GLibBridge.unref(collection) }
        let created = try GLibBridge.call("storing the tokens of \(account.key)") {
          tokenctl_secret_item_create_sync(collection, nil, attributes, label, value, SECRET_ITEM_CREATE_NONE, nil, $0)
        }
        created.map(GLibBridge.unref)
      }
    }
  }

  @discardableResult
  public func remove(_ key: AccountKey) throws -> Bool {
    try withService { service in
      let items = try search(service, KeyringSchema.keyAttributes(key, group: group), loadSecrets: false)
      defer { items.forEach(GLibBridge.unref) }
      try requireUnlocked(service, items)
      for item in items {
        _ = try GLibBridge.call("removing \(key)") { tokenctl_secret_item_delete_sync(item, nil, $0) }
      }
      return !items.isEmpty
    }
  }

  // MARK: - Secret Service plumbing

  /// Runs `body` with the Secret Service, and once more with a fresh connection to it when
  /// the daemon libsecret knew has left the bus meanwhile (a restart of
  /// gnome-keyring-daemon): libsecret would otherwise keep calling the old one for the
  /// rest of the process, which matters to a process that lives longer than one command.
  private func withService<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
    try GLibBridge.requireLibsecret()
    do {
      return try withConnectedService(body)
    } catch is StaleSecretService {
      tokenctl_secret_service_disconnect()
      do {
        return try withConnectedService(body)
      } catch let stale as StaleSecretService {
        throw stale.error
      }
    }
  }

  private func withConnectedService<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
    // Ask for the bus first so that "no session bus" and "no Secret Service on it" get
    // different messages. GLib holds the shared connection only weakly: keep our reference
    // until the work is done, or libsecret would open and authenticate a second one.
    var error: UnsafeMutablePointer<GError>? = nil
    guard let bus = tokenctl_g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
      let detail = error.map(GLibBridge.message) ?? "unknown error"
      if let error { tokenctl_g_error_free(error) }
      throw SecretServiceError.noSessionBus(detail)
    }
    defer { GLibBridge.unref(bus) }
    guard
      let service = try GLibBridge.call(
        "connecting to the Secret Service",
        {
          tokenctl_secret_service_get_sync(SECRET_SERVICE_NONE, nil, $0)
        })
    else { throw SecretServiceError.noSecretService("libsecret returned no service") }
    defer { GLibBridge.unref(service) }
    return try GLibBridge.withOwnContext { try body(service) }
  }

  private func search(
    _ service: OpaquePointer, _ attributes: [String: String], loadSecrets: Bool
  ) throws -> [OpaquePointer] {
    let table = GLibBridge.hashTable(attributes)
    defer { tokenctl_g_hash_table_unref(table) }
    // SECRET_SEARCH_ALL returns locked items too (without UNLOCK, which would prompt), so
    // that a locked item can be reported as locked.
    var flags = SECRET_SEARCH_ALL.rawValue
    if loadSecrets { flags |= SECRET_SEARCH_LOAD_SECRETS.rawValue }
    // The asynchronous search, run here: its items belong to the store's own context (see
    // GLibBridge.withOwnContext), where the _sync search's would leak.
    let list = try GLibBridge.call("searching the keyring") { error in
      GLibBridge.runAsync(
        { callback, data in
          tokenctl_secret_service_search(
            service, nil, table, SecretSearchFlags(rawValue: flags), nil, callback, data)
        },
        finish: { tokenctl_secret_service_search_finish(service, $0, error) })
    }
    return GLibBridge.takeObjects(list ?? nil)
  }

  /// Throws `keyringLocked` when any found item is locked, or when nothing was found and
  /// the default collection is locked: a locked keyring hides its items from searches.
  private func requireUnlocked(
    _ service: OpaquePointer, _ items: [OpaquePointer]
  ) throws {
    if items.contains(where: { tokenctl_secret_item_get_locked($0) != 0 }) {
      throw SecretServiceError.locked(try collectionLabel(service))
    }
    if items.isEmpty {
      let collection = try defaultCollection(service)
      GLibBridge.unref(collection)
    }
  }

  /// The default collection, checked to be unlocked.
  private func defaultCollection(
    _ service: OpaquePointer
  ) throws
    -> OpaquePointer
  {
    guard
      let collection = try GLibBridge.call(
        "opening the default keyring",
        {
          tokenctl_secret_collection_for_alias_sync(service, SECRET_COLLECTION_DEFAULT, SECRET_COLLECTION_NONE, nil, $0)
        })
    else { throw SecretServiceError.noDefaultKeyring }
    if tokenctl_secret_collection_get_locked(collection) != 0 {
      let label = Self.label(of: collection)
      GLibBridge.unref(collection)
      throw SecretServiceError.locked(label)
    }
    return collection
  }

  private func collectionLabel(_ service: OpaquePointer) throws -> String {
    guard
      let collection = try GLibBridge.call(
        "opening the default keyring",
        {
          tokenctl_secret_collection_for_alias_sync(service, SECRET_COLLECTION_DEFAULT, SECRET_COLLECTION_NONE, nil, $0)
        })
    else { return "default" }
    defer { GLibBridge.unref(collection) }
    return Self.label(of: collection)
  }

  private static func label(of collection: OpaquePointer) -> String {
    tokenctl_secret_collection_get_label(collection).map(GLibBridge.takeString) ?? "default"
  }

  private func attributes(of item: OpaquePointer) -> [String: String] {
    guard let table = tokenctl_secret_item_get_attributes(item) else { return [:] }
    defer { tokenctl_g_hash_table_unref(table) }
    return GLibBridge.dictionary(table)
  }

  /// For each account among `items`, the most recently modified item: two processes that
  /// created one account at once leave two items until the next save removes one.
  private func newestPerAccount(_ items: [OpaquePointer]) -> [OpaquePointer] {
    var newest: [String: OpaquePointer] = [:]
    for item in items {
      let attributes = attributes(of: item)
      let key =
        "\(attributes[KeyringSchema.Attribute.type] ?? "")\u{0}\(attributes[KeyringSchema.Attribute.account] ?? "")"
      if let current = newest[key],
        tokenctl_secret_item_get_modified(current) >= tokenctl_secret_item_get_modified(item)
      {
        continue
      }
      newest[key] = item
    }
    return Array(newest.values)
  }
}
