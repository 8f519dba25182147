import CLibSecret
import GLibBus
import SecretServiceWire
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// A `TokenStore` in the Secret Service (the GNOME keyring): reads, and the replacement of
/// an item in place, over D-Bus in a plain session (``SecretSession`` says why); every
/// other write through libsecret.
///
/// Each account is one item in the default collection (the login keyring), with the
/// attributes of `KeyringSchema` and its `TokenSet` as a JSON secret. The group attribute
/// plays the role of an iOS keychain access group: every tool that uses the same group
/// sees the same accounts. The Secret Service gives no per-application isolation, so a
/// group is a namespace and not a wall: any program of the user's can read every item.
///
/// A locked collection hides its items from searches, and a provider may report items
/// locked to a program it has not allowed yet (KeePassXC's access confirmation). This
/// store unlocks them through the Secret Service's `Unlock` and its prompt when
/// `prompting` allows (``KeyringPrompting``), and otherwise throws `keyringLocked`; when it
/// finds nothing it checks every collection, so that "locked" is never mistaken for "no
/// such account".
public struct SecretServiceTokenStore: AddressedTokenStore {
  public let group: String
  /// Whether a locked collection or item may be unlocked, prompting the user; nil: never.
  public let prompting: KeyringPrompting?

  /// The algorithm of the session reads and replacements in place open; nil for
  /// ``SecretSession``'s rule. Tests name one no provider supports, to see them fall back
  /// to libsecret.
  let sessionAlgorithm: String?

  public init(group: String = Account.defaultGroup, prompting: KeyringPrompting? = nil) {
    self.init(group: group, prompting: prompting, sessionAlgorithm: nil)
  }

  init(group: String, prompting: KeyringPrompting?, sessionAlgorithm: String?) {
    self.group = group
    self.prompting = prompting
    self.sessionAlgorithm = sessionAlgorithm
  }

  public func list(_ query: AccountQuery) throws -> [AccountListing] {
    let items = try found(KeyringSchema.searchAttributes(query, group: group), reading: .properties)
    // The search matched our schema and group, so an item with incomplete attributes was
    // damaged or written by something else: skip it rather than fail the whole listing.
    return newestPerAccount(items).compactMap { KeyringSchema.listing(from: $0.attributes) }
      .filter { query.matches($0.account) }
      .sorted { ($0.account.type, $0.account.name) < ($1.account.type, $1.account.name) }
  }

  public func load(_ key: AccountKey) throws -> StoredAccount? {
    try loadAll(AccountQuery(type: key.type, id: key.id)).first
  }

  /// The matching items' paths, then their secrets in one call and each one's properties
  /// (see `items(_:_:reading:)`).
  public func loadAll(_ query: AccountQuery) throws -> [StoredAccount] {
    let items = try found(KeyringSchema.searchAttributes(query, group: group), reading: .both)
    return try newestPerAccount(items).map { (try listing(of: $0), $0.secret) }
      .filter { query.matches($0.0.account) }
      .map { listing, secret in try storedAccount(listing, secret: secret) }
  }

  /// As ``loadAll(_:)``, each account with its item's object path.
  public func loadAllAddressed(_ query: AccountQuery) throws -> [AddressedAccount] {
    let items = try found(KeyringSchema.searchAttributes(query, group: group), reading: .both)
    return try newestPerAccount(items).map { (try listing(of: $0), $0) }
      .filter { query.matches($0.0.account) }
      .map { listing, item in
        AddressedAccount(address: item.path, stored: try storedAccount(listing, secret: item.secret))
      }
  }

  /// The account at the item `address` (an object path a change signal named): its
  /// `GetAll`, then its secret; nil when the item is not an account item of this group (a
  /// token for other scopes, another group's, another program's). An item that is gone
  /// throws, as the service answers for it, and the caller reads the group again.
  public func load(address: String) throws -> StoredAccount? {
    try withBus { bus in
      let item = try properties(bus, of: address)
      // The schema and group a search of this store's would ask for.
      guard isAccountItem(item.attributes), let listing = KeyringSchema.listing(from: item.attributes)
      else { return nil }
      let found = try items(bus, [address], reading: .secrets)
      return try storedAccount(listing, secret: found.first?.secret)
    }
  }

  /// The object paths of this group's account items, unlocked and locked: one
  /// `SearchItems`, no item read.
  public func addresses() throws -> Set<String>? {
    try withBus { bus in
      let (unlocked, locked) = try searchPaths(bus, KeyringSchema.searchAttributes(.all, group: group))
      return Set(unlocked + locked)
    }
  }

  /// Whether the item at `address` has this group's account attributes: one property
  /// read, no secret (a locked item's attributes can be read too). nil when it cannot be
  /// read: gone, most likely.
  public func isAccountItem(address: String) throws -> Bool? {
    try withBus { bus in
      guard let item = try? properties(bus, of: address) else { return nil }
      return isAccountItem(item.attributes)
    }
  }

  /// The schema and group a search of this store's asks for.
  func isAccountItem(_ attributes: [String: String]) -> Bool {
    KeyringSchema.searchAttributes(.all, group: group).allSatisfy { attributes[$0.key] == $0.value }
  }

  func listing(of item: FoundItem) throws -> AccountListing {
    guard let listing = KeyringSchema.listing(from: item.attributes) else {
      throw TokenKitError(
        .corruptItem, "the keyring item of \(Self.name(item.attributes)) has incomplete attributes",
        recovery: "Remove it with Seahorse or `secret-tool clear`, then sign in again.")
    }
    return listing
  }

  func storedAccount(_ listing: AccountListing, secret: [UInt8]?) throws -> StoredAccount {
    let account = listing.account
    let name = "\(account.type):\(account.id)"
    guard let secret else {
      throw TokenKitError(.storeFailure, "the keyring returned no secret for \(name)")
    }
    return StoredAccount(account: account, tokens: try TokenSet(storageJSON: secret, item: name))
  }

  static func name(_ attributes: [String: String]) -> String {
    "\(attributes[KeyringSchema.Attribute.type] ?? "?"):\(attributes[KeyringSchema.Attribute.account] ?? "?")"
  }

  public func save(_ account: Account, tokens: TokenSet) throws {
    guard account.group == group else { throw groupMismatch(account) }
    try put(
      secret: try tokens.storageJSON(), attributes: KeyringSchema.attributes(of: account, tokens: tokens.summary),
      identifiedBy: KeyringSchema.keyAttributes(account.key, group: group),
      label: KeyringSchema.label(of: account, defaultGroup: Account.defaultGroup), what: "the tokens of \(account.key)")
  }

  @discardableResult
  public func remove(_ key: AccountKey) throws -> Bool {
    // The tokens for other scopes first: should this fail, the account is still listed,
    // and removing it again removes them.
    try delete(ScopedTokenSchema.accountAttributes(key, group: group), what: "the tokens for other scopes of \(key)")
    return try delete(KeyringSchema.keyAttributes(key, group: group), what: "\(key)")
  }

  public func loadToken(for key: AccountKey, scopes: ScopeSet) throws -> TokenSet? {
    let attributes = ScopedTokenSchema.keyAttributes(key, scopes: scopes, group: group)
    guard let item = newest(try found(attributes, reading: .secrets)) else { return nil }
    let name = "\(key) for \(scopes)"
    guard let secret = item.secret else {
      throw TokenKitError(.storeFailure, "the keyring returned no secret for \(name)")
    }
    return try TokenSet(storageJSON: secret, item: name)
  }

  public func saveToken(_ tokens: TokenSet, scopes: ScopeSet, of account: Account) throws {
    guard account.group == group else { throw groupMismatch(account) }
    let kept = tokens.withoutGrant
    try put(
      secret: try kept.storageJSON(),
      attributes: ScopedTokenSchema.attributes(of: account, scopes: scopes, tokens: kept.summary),
      identifiedBy: ScopedTokenSchema.keyAttributes(account.key, scopes: scopes, group: group),
      label: ScopedTokenSchema.label(of: account, scopes: scopes, defaultGroup: Account.defaultGroup),
      what: "the tokens of \(account.key) for \(scopes)")
  }

  /// The default collection, where a new account goes, is there and unlocked (unlocking
  /// it where `prompting` allows).
  public func checkWritable() throws {
    try withService { service in try requireUnlocked(service, []) }
  }

  /// Stores `json` as the secret of the item `key` identifies, replacing it in place when
  /// there is one; `what` names it in errors. Items of every schema of ours (accounts,
  /// tokens for other scopes, registered clients) are written here: the ordinary
  /// replacement, every refresh's, without GIO and libsecret where it can be
  /// (`replacedWithoutGIO`), and all the rest, or all of it again, through libsecret.
  func put(
    secret json: [UInt8], attributes: [String: String], identifiedBy key: [String: String], label: String,
    what: String
  ) throws {
    if replacedWithoutGIO(secret: json, attributes: attributes, identifiedBy: key, label: label) { return }
    try GLibBridge.requireLibsecret()
    let table = GLibBridge.hashTable(attributes)
    defer { tokenctl_g_hash_table_unref(table) }
    let value = json.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) {
        tokenctl_secret_value_new($0.baseAddress, gssize($0.count), KeyringSchema.contentType)!
      }
    }
    defer { tokenctl_secret_value_unref(UnsafeMutableRawPointer(value)) }

    try withService { service in
      let existing = try search(service, key, loadSecrets: false)
      defer { existing.forEach(GLib.unref) }
      try requireUnlocked(service, existing)
      if let item = newestPerAccount(existing).first {
        let table = GLibBridge.hashTable(Self.attributes(attributes, replacing: self.attributes(of: item)))
        defer { tokenctl_g_hash_table_unref(table) }
        // Replace in place. The secret goes first and in one call, so the tokens are
        // swapped atomically; the attributes then catch up. Creating with "replace" would
        // not do: the Secret Service replaces only an item whose attributes are all equal,
        // and ours change (expiry) with every refresh.
        _ = try GLibBridge.call("storing \(what)") {
          tokenctl_secret_item_set_secret_sync(item, value, nil, $0)
        }
        _ = try GLibBridge.call("updating the attributes of \(what)") {
          tokenctl_secret_item_set_attributes_sync(item, nil, table, nil, $0)
        }
        _ = try GLibBridge.call("updating the label of \(what)") {
          tokenctl_secret_item_set_label_sync(item, label, nil, $0)
        }
        // Two tokenctl processes that created the same item at once leave two; the
        // newest wins, and the rest go now.
        for duplicate in existing where duplicate != item {
          _ = try? GLibBridge.call("removing a duplicate of \(what)") {
            tokenctl_secret_item_delete_sync(duplicate, nil, $0)
          }
        }
      } else {
        let collection = try defaultCollection(service)
        defer { GLib.unref(collection) }
        let created = try GLibBridge.call("storing \(what)") {
          tokenctl_secret_item_create_sync(collection, nil, table, label, value, SECRET_ITEM_CREATE_NONE, nil, $0)
        }
        // SecretServiceQuirk.createsEmptyItems: KeePassXC creates an item in a prompt, which, when the secret came in a session
        // it no longer has, leaves an empty entry (no attributes of ours, no secret) and is
        // dismissed; libsecret reports no error for that, and the write would seem done
        // with nothing stored. An item without the attributes written is removed, and the
        // write tried once more in a new session (then an error).
        guard let created else { throw StaleSecretService(error: SecretServiceError.notCreated(what)) }
        defer { GLib.unref(created) }
        let written = self.attributes(of: created)
        guard key.allSatisfy({ written[$0.key] == $0.value }) else {
          _ = try? GLibBridge.call("removing an unfinished item") { tokenctl_secret_item_delete_sync(created, nil, $0) }
          throw StaleSecretService(error: SecretServiceError.notCreated(what))
        }
      }
    }
  }

  /// The attributes a write of `attributes` sets on an item that has `kept`, through
  /// libsecret or without it.
  ///
  /// SecretServiceQuirk.mergesAttributes, SecretServiceQuirk.addsEntryAttributes: KeePassXC
  /// merges the attributes a write sets into those the item has, so one left out (no
  /// expiry any more) would keep its old value: each of our optional attributes the item
  /// has and this write lacks goes as an explicit empty value, which reads back as absent
  /// (KeyringSchema.listing). Only ours: KeePassXC adds its entry's fields (Uuid, Path,
  /// Title…) and refuses to have them changed.
  static func attributes(_ attributes: [String: String], replacing kept: [String: String]) -> [String: String] {
    attributes.merging(
      KeyringSchema.optionalAttributes.filter { attributes[$0] == nil && kept[$0] != nil }.map { ($0, "") }
    ) { new, _ in new }
  }

  /// Deletes every item that matches `attributes`; returns whether there was one.
  @discardableResult
  func delete(_ attributes: [String: String], what: String) throws -> Bool {
    try withService { service in
      let items = try search(service, attributes, loadSecrets: false)
      defer { items.forEach(GLib.unref) }
      try requireUnlocked(service, items)
      for item in items {
        _ = try GLibBridge.call("removing \(what)") { tokenctl_secret_item_delete_sync(item, nil, $0) }
      }
      return !items.isEmpty
    }
  }

  /// The secret of the newest item that matches `attributes`, nil when there is none;
  /// `what` names the item in the error thrown when the keyring returns no secret for it.
  func readSecret(matching attributes: [String: String], what: String) throws -> [UInt8]? {
    guard let item = newest(try found(attributes, reading: .secrets)) else { return nil }
    guard let secret = item.secret else {
      throw TokenKitError(.storeFailure, "the keyring returned no secret for \(what)")
    }
    return secret
  }
}
