import Foundation
import SecretServiceStore
import SecretServiceWire
import Testing
import TokenKit
import TokenStoreTesting

/// The reads without GIO (``SecretServiceWireRead``) against a real gnome-keyring: they
/// see what `secret-tool` sees, across more items than one batch of calls, and leave
/// every read that is not the ordinary one to GDBus (nil), which says what went wrong.
@Suite struct SecretServiceWireReadTests {
  init() throws { try TestKeyring.require() }

  static func read(
    _ attributes: [String: String], properties: Bool = true, secrets: Bool = true, algorithm: String = "plain",
    address: String? = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"]
  ) -> SecretServiceWireRead.Outcome? {
    SecretServiceWireRead.items(
      matching: attributes, properties: { properties || $0 > 1 }, secrets: secrets, algorithm: algorithm,
      busAddress: address, runtimeDirectory: nil, timeoutMilliseconds: 10_000)
  }

  /// The items of an ordinary read; nil for any other outcome.
  static func items(_ outcome: SecretServiceWireRead.Outcome?) -> [SecretServiceWireRead.Item]? {
    guard case .read(let items) = outcome else { return nil }
    return items
  }

  @Test func itReadsWhatSecretToolReads() async throws {
    let store = SecretServiceTokenStore(group: TokenStoreConformance.freshGroup())
    try await SecretServiceTokenStoreTests.withSample(in: store) { _ in try await readsWhatSecretToolReads(store.group)
    }
  }

  private func readsWhatSecretToolReads(_ group: String) async throws {
    let search = ["xdg:schema": "org.tokenctl.Account", "group": group]
    let items = try #require(Self.items(Self.read(search)))
    try #require(items.count == 1)
    let seen = try await TestKeyring.items(search)
    try #require(seen.count == 1)
    var expected: [String: String] = [:]
    for (key, value) in seen[0] where key.hasPrefix("attribute.") { expected[String(key.dropFirst(10))] = value }
    expected["xdg:schema"] = seen[0]["schema"]
    #expect(items[0].attributes == expected)
    #expect(items[0].modified > 0)
    let lookup = try await TestKeyring.secretTool(["lookup", "group", group, "type", "graph"])
    #expect(items[0].secret.map { String(decoding: $0, as: UTF8.self) } == lookup.stdout)
    #expect(items[0].path.hasPrefix("/org/freedesktop/secrets/collection/"))

    // What each read needs, and no more: the secret alone of a single item, or the
    // properties alone.
    let secretOnly = try #require(Self.items(Self.read(search, properties: false)))
    #expect(secretOnly.map(\.attributes) == [[:]] && secretOnly.map(\.secret) == items.map(\.secret))
    let propertiesOnly = try #require(Self.items(Self.read(search, secrets: false)))
    #expect(propertiesOnly.map(\.attributes) == [expected] && propertiesOnly.map(\.secret) == [nil])
  }

  /// Secrets go 50 to a `GetSecrets`, and calls 50 to a write: 55 items take two rounds,
  /// each item with the properties the caller asks for by the number found (as the store
  /// does, to choose the newest of several copies).
  @Test func moreItemsThanOneBatch() throws {
    let group = TokenStoreConformance.freshGroup()
    let store = SecretServiceTokenStore(group: group)
    var saved: [StoredAccount] = []
    defer { for stored in saved { _ = try? store.remove(stored.account.key) } }
    for index in 0..<55 {
      var stored = SecretServiceTokenStoreTests.sample(group: group)
      stored.account.id = "oid-\(index)"
      stored.account.name = "user\(index)@contoso.com"
      try store.save(stored.account, tokens: stored.tokens)
      saved.append(stored)
    }
    let items = try #require(
      Self.items(Self.read(["xdg:schema": "org.tokenctl.Account", "group": group], properties: false)))
    #expect(items.count == 55)
    let secrets = Dictionary(uniqueKeysWithValues: items.map { ($0.attributes["account"] ?? "", $0.secret) })
    for stored in saved {
      let secret = try #require(secrets[stored.account.id] ?? nil, "\(stored.account.id) not read")
      #expect(try TokenSet(storageJSON: secret, item: stored.account.id) == stored.tokens)
    }
    // And the store, which reads the same way, loads each of them.
    #expect(try store.loadAll(.all).count == 55)
  }

  @Test func whatIsNotTheOrdinaryReadIsLeftToGDBus() async throws {
    let store = SecretServiceTokenStore(group: TokenStoreConformance.freshGroup())
    try await SecretServiceTokenStoreTests.withSample(in: store) { _ in try leftToGDBus(store.group) }
  }

  private func leftToGDBus(_ group: String) throws {
    let search = ["xdg:schema": "org.tokenctl.Account", "group": group]
    let read = try #require(Self.items(Self.read(search)))
    let found = SecretServiceWireRead.Outcome.searched(unlocked: read.map(\.path), locked: [])
    // gnome-keyring answers an algorithm it does not know with NotSupported: the search's
    // answer goes to GDBus, which does not search again.
    #expect(Self.read(search, algorithm: SecretSessionTests.refused) == found)
    // Nothing found: GDBus tells "no such account" from "locked" and "no keyring".
    #expect(
      Self.read(["xdg:schema": "org.tokenctl.Account", "group": group + "-none"])
        == .searched(unlocked: [], locked: []))
    // A bus that is not there, or not reachable without GDBus: not even a search.
    #expect(Self.read(search, address: "unix:path=/nonexistent/bus") == nil)
    #expect(Self.read(search, address: "tcp:host=127.0.0.1,port=9") == nil)
  }
}
