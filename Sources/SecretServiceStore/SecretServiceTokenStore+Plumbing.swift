import CLibSecret
import GLibBus
import SecretServiceWire
import TokenKit
#if canImport(Glibc)
  import Glibc
#endif

/// How ``SecretServiceTokenStore`` talks to the Secret Service: its reads and replacements
/// in place without GIO (``SecretServiceWireRead``, ``SecretServiceWireWrite``), its reads
/// with GDBus, the searches, unlocking and prompts, the collections, and the choice among
/// copies of an item. Where a provider behaves in its own way, the code names the case of
/// ``SecretServiceQuirk`` it copes with.
extension SecretServiceTokenStore {

  /// The items that match `attributes`, with what `reading` needs: read without GIO where
  /// the read is the ordinary one (``SecretServiceWireRead``), else through GDBus
  /// (`find(_:_:reading:unlocking:searched:)`), which unlocks, prompts, and says what went
  /// wrong, from the search made without GIO where there was one.
  func found(_ attributes: [String: String], reading: Reading) throws -> [FoundItem] {
    var searched: (unlocked: [String], locked: [String])?
    if let wire = wireRoute() {
      switch SecretServiceWireRead.items(
        matching: attributes, properties: reading.needsProperties, secrets: reading != .properties,
        algorithm: wire.algorithm, busAddress: wire.address, runtimeDirectory: wire.runtimeDirectory,
        timeoutMilliseconds: wire.timeout)
      {
      case .read(let items):
        return items.map {
          FoundItem(path: $0.path, attributes: $0.attributes, modified: $0.modified, secret: $0.secret)
        }
      case .searched(let unlocked, let locked): searched = (unlocked, locked)
      case .noAnswer: throw SecretServiceError.didNotAnswer("searching the keyring")
      case nil: break
      }
    }
    return try withBus { try find($0, attributes, reading: reading, searched: searched) }
  }

  /// Replaces the item `key` identifies in place without GIO and libsecret
  /// (``SecretServiceWireWrite``) where the write is the ordinary one: exactly one item
  /// found, unlocked, every call answered. False where it did not write it all, and the
  /// caller's write through libsecret does it all, as it would have without this; it is
  /// idempotent, so a write here that stopped after the secret is no harm. How each quirk
  /// of a write is coped with here:
  ///
  /// - SecretServiceQuirk.mergesAttributes, SecretServiceQuirk.addsEntryAttributes: the
  ///   attributes are the ones libsecret's write sets (`attributes(_:replacing:)`), from
  ///   the item's own, read in the same session.
  /// - SecretServiceQuirk.createsEmptyItems: an item is never created here; nothing found
  ///   goes to libsecret.
  /// - SecretServiceQuirk.locksItemsPerProgram: a locked item found goes to libsecret,
  ///   which unlocks it.
  /// - SecretServiceQuirk.holdsCallsForItsDialog: the calls wait as long as a prompt would
  ///   (`callTimeout`); one not answered in time goes to libsecret.
  /// - SecretServiceQuirk.forgetsSessionsOnRestart, SecretServiceQuirk.refusesSomeSessions:
  ///   the session is opened for this write alone, and a plain one has no key to refuse;
  ///   any error reply, a ``SessionRefusal`` among them, goes to libsecret, which copes.
  /// - SecretServiceQuirk.keepsContentType: the secret goes as ``KeyringSchema/contentType``,
  ///   as libsecret's write sends it.
  func replacedWithoutGIO(
    secret: [UInt8], attributes: [String: String], identifiedBy key: [String: String], label: String
  ) -> Bool {
    guard let wire = wireRoute() else { return false }
    return SecretServiceWireWrite.replace(
      matching: key, secret: secret, contentType: KeyringSchema.contentType,
      attributes: { Self.attributes(attributes, replacing: $0) }, label: label, algorithm: wire.algorithm,
      busAddress: wire.address, runtimeDirectory: wire.runtimeDirectory, timeoutMilliseconds: wire.timeout) != nil
  }

  /// Where the calls without GIO go, in which session, and how long each write of them
  /// waits; nil where they do not go (a bus over TCP, where secrets travel in libsecret's
  /// session: ``SecretSession``).
  func wireRoute() -> (algorithm: String, address: String?, runtimeDirectory: String?, timeout: Int32)? {
    let address = getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) }
    guard let algorithm = sessionAlgorithm ?? SecretSession.readAlgorithm(busAddress: address) else { return nil }
    return (
      algorithm, address, getenv("XDG_RUNTIME_DIR").map { String(cString: $0) },
      callTimeout < 0 ? Self.defaultCallTimeout : callTimeout
    )
  }

  /// GDBus's default timeout of a call (25 s), for the calls made without it.
  static let defaultCallTimeout: Int32 = 25_000

  /// Runs `body` with the session bus, for the read paths, which call the Secret Service's
  /// methods themselves: no libsecret proxy, and no `SecretService` bound to one daemon.
  func withBus<R>(_ body: (SecretServiceBus) throws -> R) throws -> R {
    try GLibBridge.requireGIO()
    do {
      return try SecretServiceBus.withSessionBus { bus in try MainContext.withOwn { try body(bus) } }
    } catch let stale as StaleSecretService {
      // The calls went to the well-known name, which no daemon owns any more: no service.
      throw stale.error
    }
  }

  /// Runs `body` with libsecret's Secret Service, for the write paths (and reads where a
  /// plain session is not taken), and once more with a fresh connection to it when the
  /// daemon libsecret knew has left the bus meanwhile (a restart of gnome-keyring-daemon),
  /// or refuses the session libsecret opened with it (``SessionRefusal``): libsecret would
  /// otherwise keep calling the old daemon, or sending secrets in the refused session, for
  /// the rest of the process, which matters to a process that lives longer than one
  /// command. The second try repeats all of `body`, which each caller makes safe to repeat:
  /// a write finds the item the first try created, if it did, and replaces its secret.
  func withService<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
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

  func withConnectedService<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
    // Ask for the bus first so that "no session bus" and "no Secret Service on it" get
    // different messages, and hold it so that libsecret uses the same connection.
    try SecretServiceBus.withSessionBus { _ in
      guard
        let service = try GLibBridge.call(
          "connecting to the Secret Service",
          {
            tokenctl_secret_service_get_sync(SECRET_SERVICE_NONE, nil, $0)
          })
      else { throw SecretServiceError.noSecretService("libsecret returned no service") }
      defer { GLib.unref(service) }
      return try MainContext.withOwn { try body(service) }
    }
  }

  func search(
    _ service: OpaquePointer, _ attributes: [String: String], loadSecrets: Bool
  ) throws -> [OpaquePointer] {
    let table = GLibBridge.hashTable(attributes)
    defer { tokenctl_g_hash_table_unref(table) }
    // SECRET_SEARCH_ALL returns locked items too (without UNLOCK, which would prompt), so
    // that a locked item can be reported as locked.
    var flags = SECRET_SEARCH_ALL.rawValue
    if loadSecrets { flags |= SECRET_SEARCH_LOAD_SECRETS.rawValue }
    // The asynchronous search, run here: its items belong to the store's own context (see
    // MainContext.withOwn), where the _sync search's would leak.
    let list = try GLibBridge.call("searching the keyring") { error in
      MainContext.runAsync(
        { callback, data in
          tokenctl_secret_service_search(
            service, nil, table, SecretSearchFlags(rawValue: flags), nil, callback, data)
        },
        finish: { tokenctl_secret_service_search_finish(service, $0, error) })
    }
    return GLibBridge.takeObjects(list ?? nil)
  }

  /// An item the read paths found: its object path and the two properties they use,
  /// copied out of one D-Bus reply, and its secret. No `SecretItem` proxy is held: a
  /// proxy's property cache and signal subscription cost about 14 KiB per item, 14 MiB at
  /// once for a group of 1,000 accounts, and seven D-Bus calls to make.
  struct FoundItem {
    let path: String
    /// Empty, and `modified` 0, when the read did not need them (see `Reading`).
    var attributes: [String: String] = [:]
    var modified: UInt64 = 0
    /// The stored token set (JSON), when read.
    var secret: [UInt8]? = nil
  }

  /// What a read needs of each item it finds.
  enum Reading {
    /// The attributes and modification time (`list`): one `GetAll` per item.
    case properties
    /// The secret (a token for other scopes, a client registration): one `GetSecrets`
    /// for all; the properties only when there are copies to choose the newest from.
    case secrets
    /// Both (`load`, `loadAll`).
    case both

    /// Whether the items' properties are read when `found` items match: choosing the newest
    /// of several copies of an item needs their modification times.
    func needsProperties(_ found: Int) -> Bool { self != .secrets || found > 1 }
  }

  /// The items that match `attributes`, in every collection, with what `reading` needs;
  /// `searched`, the answer of a search for them made already.
  func find(
    _ bus: SecretServiceBus, _ attributes: [String: String], reading: Reading, unlocking: Bool = true,
    searched: (unlocked: [String], locked: [String])? = nil
  ) throws -> [FoundItem] {
    let (paths, locked) = try searched ?? searchPaths(bus, attributes)
    // SecretServiceQuirk.locksItemsPerProgram: the search names locked items apart instead
    // of hiding them (KeePassXC: items a
    // program has not been allowed to read yet): unlock them, then search again.
    if !locked.isEmpty {
      let names = try collections(bus, holding: locked)
      guard unlocking else { throw SecretServiceError.locked(names, provider: provider(bus)) }
      try SecretServiceUnlock.unlock(locked, names: names, bus: bus, prompting: prompting)
      return try find(bus, attributes, reading: reading, unlocking: false)
    }
    let items = try self.items(bus, paths, reading: reading)
    if items.isEmpty {
      // A locked collection hides its items, the one with this account among them perhaps
      // (two KeePassXC databases open, one locked): unlock every locked one, or say that
      // they are locked, rather than "no such account".
      let lockedCollections = try collections(bus).filter(\.isLocked)
      if !lockedCollections.isEmpty {
        let names = lockedCollections.map(\.label)
        guard unlocking else { throw SecretServiceError.locked(names, provider: provider(bus)) }
        try SecretServiceUnlock.unlock(lockedCollections.map(\.path), names: names, bus: bus, prompting: prompting)
        // SecretServiceQuirk.listsItemsAfterUnlock: KeePassXC completes the prompt before it
        // lists the database's items: "nothing"
        // is the answer only from a search that began once every collection unlocked here
        // said it is unlocked and listed its items (or after the deadline: an empty one
        // lists none).
        let unlocked = Set(lockedCollections.map(\.path))
        let deadline = ContinuousClock.now + Self.listingAfterUnlock
        while true {
          let listed = try collections(bus).filter { unlocked.contains($0.path) }
            .allSatisfy { !$0.isLocked && $0.itemCount > 0 }
          let found = try find(bus, attributes, reading: reading, unlocking: false)
          if !found.isEmpty || listed || ContinuousClock.now >= deadline { return found }
          usleep(50_000)
        }
      }
      // Nothing locked and nothing found: "no such account", unless there is no keyring
      // to keep accounts in at all.
      guard try bus.collection(alias: SECRET_COLLECTION_DEFAULT) != nil else {
        throw SecretServiceError.noDefaultKeyring
      }
    }
    return items
  }

  /// How long a search waits, after unlocking collections, for them to list their items
  /// (KeePassXC 2.7.4 lists a database's items a moment after it completes the unlock
  /// prompt, and a fixed 1 s was not always enough on a loaded 2-core machine). Only a
  /// collection that holds no item at all waits it out; the others end the wait as soon as
  /// they list their items.
  static let listingAfterUnlock: Duration = .seconds(15)

  /// How long a call that may wait for the provider's dialog waits, in milliseconds:
  /// as long as a prompt would where one may be shown, else GDBus's default (-1, 25 s).
  var callTimeout: Int32 {
    prompting.map { Int32(clamping: $0.timeout.components.seconds * 1000) } ?? -1
  }

  /// The paths of the unlocked and of the locked items that match `attributes`: the
  /// service's `SearchItems`, with `callTimeout` (``SecretServiceQuirk/holdsCallsForItsDialog``).
  /// KeePassXC holds the call while it asks
  /// for a locked database's password ("unlock before search", on by default), and
  /// GDBus's default of 25 s ended a slow answer in "Timeout was reached".
  func searchPaths(
    _ bus: SecretServiceBus, _ attributes: [String: String]
  ) throws -> (unlocked: [String], locked: [String]) {
    let reply = try bus.callService(
      "SearchItems", [.stringDictionary(attributes.sorted { $0.key < $1.key })], replyType: "(aoao)",
      timeout: callTimeout, what: "searching the keyring")
    defer { tokenctl_g_variant_unref(reply) }
    guard case .tuple(let found) = BusValue(reading: reply), case .objectPaths(let unlocked) = found[0],
      case .objectPaths(let locked) = found[1]
    else { return ([], []) }
    return (unlocked, locked)
  }

  func provider(_ bus: SecretServiceBus) -> SecretServiceProvider? {
    SecretServiceProvider.owning(bus: bus.connection)
  }

  /// The items at `paths`, with what `reading` needs: their secrets in the plain session,
  /// `secretsAtOnce` per `GetSecrets`, and their properties with one `GetAll` each; or,
  /// where reads take libsecret's session (``SecretSession``), through its item proxies.
  func items(_ bus: SecretServiceBus, _ paths: [String], reading: Reading) throws -> [FoundItem] {
    guard reading != .properties, !paths.isEmpty else {
      return try paths.map { try properties(bus, of: $0) }
    }
    guard let secrets = try plainSecrets(bus, paths) else {
      return try withService { service in try withSecrets(service, paths) }
    }
    return try paths.map { path in
      var item = reading.needsProperties(paths.count) ? try properties(bus, of: path) : FoundItem(path: path)
      item.secret = secrets[path]
      return item
    }
  }

  /// The secrets of the items at `paths`, by path, read in the plain session; nil where
  /// reads take libsecret's session instead.
  func plainSecrets(_ bus: SecretServiceBus, _ paths: [String]) throws -> [String: [UInt8]]? {
    var opened = try SecretSession.open(on: bus, algorithm: sessionAlgorithm, timeout: callTimeout)
    while true {
      guard case .plain(let session) = opened.session else { return nil }
      let secrets: [String: [UInt8]]?
      do {
        secrets = try plainSecrets(bus, paths, session: session)
      } catch  where !opened.isNew {
        // A session kept from an earlier read is unknown to a provider that restarted
        // since (``SecretServiceQuirk/forgetsSessionsOnRestart``): open another, once.
        secrets = nil
      }
      if let secrets { return secrets }
      guard !opened.isNew else {
        throw TokenKitError(.storeFailure, "the Secret Service returned encrypted secrets in a plain session")
      }
      // Or the restarted provider gave its number to another session of ours.
      SecretSession.forget(on: bus, algorithm: sessionAlgorithm)
      opened = try SecretSession.open(on: bus, algorithm: sessionAlgorithm, timeout: callTimeout)
    }
  }

  /// The secrets of the items at `paths` in the plain session at `session`, or nil when
  /// that path names another session now (see `SecretServiceBus.secrets(of:session:timeout:)`).
  func plainSecrets(_ bus: SecretServiceBus, _ paths: [String], session: String) throws -> [String: [UInt8]]? {
    var secrets: [String: [UInt8]] = [:]
    for start in stride(from: 0, to: paths.count, by: Self.secretsAtOnce) {
      let chunk = paths[start..<min(start + Self.secretsAtOnce, paths.count)]
      guard let found = try bus.secrets(of: chunk, session: session, timeout: callTimeout) else { return nil }
      secrets.merge(found) { new, _ in new }
    }
    return secrets
  }

  /// The `Attributes` and `Modified` properties of the item at `path`, read with one
  /// `GetAll` call, whose reply is freed before the next item's.
  func properties(_ bus: SecretServiceBus, of path: String) throws -> FoundItem {
    let dictionary = try bus.properties(of: path, interface: SecretServiceBus.itemInterface)
    defer { tokenctl_g_variant_unref(dictionary) }
    var attributes: [String: String] = [:]
    if let pairs = Variant.lookup(dictionary, "Attributes", type: "a{ss}") {
      defer { tokenctl_g_variant_unref(pairs) }
      if case .stringDictionary(let entries) = BusValue(reading: pairs) {
        attributes = Dictionary(entries) { _, last in last }
      }
    }
    var modified: UInt64 = 0
    if let value = Variant.lookup(dictionary, "Modified", type: "t") {
      modified = tokenctl_g_variant_get_uint64(value)
      tokenctl_g_variant_unref(value)
    }
    return FoundItem(path: path, attributes: attributes, modified: modified)
  }

  /// How many items one `GetSecrets` reads, or how many item proxies libsecret's session
  /// holds at once: a group of 1,000 accounts is read in replies of a bounded size.
  static let secretsAtOnce = 50

  /// The items at `paths` with their properties and secrets, through libsecret and its
  /// DH session: item proxies made and freed in the store's own context, `secretsAtOnce`
  /// at a time, as many D-Bus calls as a libsecret search that loads secrets, without
  /// holding every proxy at once.
  ///
  /// Not `secret_service_get_secrets_for_dbus_paths`, which needs no proxy: libsecret 0.20
  /// (Debian 12) never frees that call's D-Bus reply, so every read leaked all the
  /// (encrypted) secrets it fetched, 17 KB a call for 20 items (valgrind).
  func withSecrets(_ service: OpaquePointer, _ paths: [String]) throws -> [FoundItem] {
    var found: [FoundItem] = []
    for start in stride(from: 0, to: paths.count, by: Self.secretsAtOnce) {
      let chunk = paths[start..<min(start + Self.secretsAtOnce, paths.count)]
      var items: [OpaquePointer] = []
      defer { items.forEach(GLib.unref) }
      for path in chunk {
        let item = try GLibBridge.call("searching the keyring") { error in
          MainContext.runAsync(
            { callback, data in
              tokenctl_secret_item_new_for_dbus_path(service, path, SECRET_ITEM_NONE, nil, callback, data)
            },
            finish: { tokenctl_secret_item_new_for_dbus_path_finish($0, error) })
        }
        guard let item = item ?? nil else {
          throw TokenKitError(.storeFailure, "the Secret Service failed while searching the keyring: no item")
        }
        items.append(item)
      }
      var list: UnsafeMutablePointer<GList>? = nil
      for item in items.reversed() { list = tokenctl_g_list_prepend(list, UnsafeMutableRawPointer(item)) }
      defer { tokenctl_g_list_free(list) }
      _ = try GLibBridge.call("searching the keyring") { error in
        MainContext.runAsync(
          { callback, data in tokenctl_secret_item_load_secrets(list, nil, callback, data) },
          finish: { tokenctl_secret_item_load_secrets_finish($0, error) })
      }
      for (path, item) in zip(chunk, items) {
        var secret: [UInt8]?
        if let value = tokenctl_secret_item_get_secret(item) {
          defer { tokenctl_secret_value_unref(UnsafeMutableRawPointer(value)) }
          var length = 0
          let bytes = tokenctl_secret_value_get(value, &length)!
          secret = Array(UnsafeRawBufferPointer(start: bytes, count: length))
        }
        found.append(
          FoundItem(
            path: path, attributes: attributes(of: item), modified: tokenctl_secret_item_get_modified(item),
            secret: secret))
      }
    }
    return found
  }

  /// Unlocks the found items that are locked, or, when nothing was found, the default
  /// collection, where a new item goes (see `unlock(_:names:service:)`).
  func requireUnlocked(
    _ service: OpaquePointer, _ items: [OpaquePointer]
  ) throws {
    let locked = items.filter { tokenctl_secret_item_get_locked($0) != 0 }
    if !locked.isEmpty {
      let paths = locked.map { String(cString: tokenctl_g_dbus_proxy_get_object_path($0)) }
      let bus = SecretServiceBus(proxy: service)
      try SecretServiceUnlock.unlock(
        paths, names: try collections(bus, holding: paths), bus: bus, prompting: prompting)
    }
    if items.isEmpty {
      let collection = try defaultCollection(service)
      GLib.unref(collection)
    }
  }

  /// The default collection, unlocked (prompting as `prompting` allows).
  func defaultCollection(
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
      let path = String(cString: tokenctl_g_dbus_proxy_get_object_path(collection))
      do {
        try SecretServiceUnlock.unlock(
          [path], names: [label], bus: SecretServiceBus(proxy: service), prompting: prompting)
      } catch {
        GLib.unref(collection)
        throw error
      }
    }
    return collection
  }

  /// A collection of the Secret Service, read from its D-Bus properties.
  struct CollectionState {
    let path: String
    let label: String
    let isLocked: Bool
    /// How many items its `Items` property lists.
    let itemCount: Int
  }

  /// Every collection, with its label, lock and item count: the service's `Collections`
  /// property, then each one's properties.
  func collections(_ bus: SecretServiceBus) throws -> [CollectionState] {
    let list = try bus.properties(of: SecretServiceBus.servicePath, interface: SecretServiceBus.serviceInterface)
    defer { tokenctl_g_variant_unref(list) }
    guard let paths = Variant.lookup(list, "Collections", type: "ao") else { return [] }
    defer { tokenctl_g_variant_unref(paths) }
    return try (0..<tokenctl_g_variant_n_children(paths)).map { index in
      let path = Variant.string(paths, index)
      let properties = try bus.properties(of: path, interface: SecretServiceBus.collectionInterface)
      defer { tokenctl_g_variant_unref(properties) }
      var label = ""
      if let value = Variant.lookup(properties, "Label", type: "s") {
        label = String(cString: tokenctl_g_variant_get_string(value, nil))
        tokenctl_g_variant_unref(value)
      }
      var isLocked = false
      if let value = Variant.lookup(properties, "Locked", type: "b") {
        isLocked = tokenctl_g_variant_get_boolean(value) != 0
        tokenctl_g_variant_unref(value)
      }
      var itemCount = 0
      if let value = Variant.lookup(properties, "Items", type: "ao") {
        itemCount = Int(tokenctl_g_variant_n_children(value))
        tokenctl_g_variant_unref(value)
      }
      return CollectionState(path: path, label: label, isLocked: isLocked, itemCount: itemCount)
    }
  }

  /// The labels of the collections that hold the items at `paths` (an item's path is its
  /// collection's, one level down).
  func collections(_ bus: SecretServiceBus, holding paths: [String]) throws -> [String] {
    let parents = Set(paths.map { String($0[..<($0.lastIndex(of: "/") ?? $0.endIndex)]) })
    let labels = try collections(bus).filter { parents.contains($0.path) }.map(\.label)
    guard labels.isEmpty else { return labels }
    return [try bus.collection(alias: SECRET_COLLECTION_DEFAULT).map { try bus.label(ofCollection: $0) } ?? "default"]
  }

  static func label(of collection: OpaquePointer) -> String {
    tokenctl_secret_collection_get_label(collection).map(GLib.takeString) ?? "default"
  }

  func attributes(of item: OpaquePointer) -> [String: String] {
    guard let table = tokenctl_secret_item_get_attributes(item) else { return [:] }
    defer { tokenctl_g_hash_table_unref(table) }
    return GLibBridge.dictionary(table)
  }

  /// For each account among `items`, the most recently modified item: two processes that
  /// created one account at once leave two items until the next save removes one.
  func newestPerAccount(_ items: [FoundItem]) -> [FoundItem] {
    Self.newest(items, attributes: \.attributes, modified: \.modified)
  }

  /// The most recently modified of `items`, which are all one item's copies.
  func newest(_ items: [FoundItem]) -> FoundItem? {
    items.max { $0.modified < $1.modified }
  }

  /// The same choice among item proxies, for the write paths.
  func newestPerAccount(_ items: [OpaquePointer]) -> [OpaquePointer] {
    Self.newest(items, attributes: attributes(of:), modified: tokenctl_secret_item_get_modified)
  }

  static func newest<Item>(
    _ items: [Item], attributes: (Item) -> [String: String], modified: (Item) -> UInt64
  ) -> [Item] {
    var newest: [String: Item] = [:]
    for item in items {
      let key = accountKey(attributes(item))
      if let current = newest[key], modified(current) >= modified(item) { continue }
      newest[key] = item
    }
    return Array(newest.values)
  }

  static func accountKey(_ attributes: [String: String]) -> String {
    "\(attributes[KeyringSchema.Attribute.type] ?? "")\u{0}\(attributes[KeyringSchema.Attribute.account] ?? "")"
  }
}
