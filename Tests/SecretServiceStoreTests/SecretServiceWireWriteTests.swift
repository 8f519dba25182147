import Foundation
import SecretServiceWire
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

@testable import SecretServiceStore

/// The replacement of an item in place without GIO (``SecretServiceWireWrite``), every
/// refresh's save, against a real gnome-keyring: it leaves the item libsecret's write
/// leaves, and every write that is not the ordinary one (a new item, copies of one, a
/// locked one, a session refused) is libsecret's, which still does it.
@Suite struct SecretServiceWireWriteTests {
  init() throws { try TestKeyring.require() }

  /// `stored` as a refresh saves it: new tokens, a new expiry (or none any more), a later
  /// update time.
  static func refreshed(_ stored: StoredAccount, expiring: Bool) -> StoredAccount {
    var refreshed = stored
    refreshed.tokens.accessToken = "eyJ-REFRESHED-\(UUID().uuidString)"
    refreshed.tokens.refreshToken = "0.ROTATED-\(UUID().uuidString)"
    refreshed.tokens.expiresAt = expiring ? SecretServiceTokenStoreTests.epoch.addingTimeInterval(7200) : nil
    refreshed.account.updatedAt = SecretServiceTokenStoreTests.epoch.addingTimeInterval(60)
    return refreshed
  }

  /// The replacement without GIO of `stored`'s item, as `save` makes it.
  static func replaceWithoutGIO(_ store: SecretServiceTokenStore, _ stored: StoredAccount) throws -> Bool {
    store.replacedWithoutGIO(
      secret: try stored.tokens.storageJSON(),
      attributes: KeyringSchema.attributes(of: stored.account, tokens: stored.tokens.summary),
      identifiedBy: KeyringSchema.keyAttributes(stored.account.key, group: store.group),
      label: KeyringSchema.label(of: stored.account, defaultGroup: Account.defaultGroup))
  }

  /// The one item of `group` as `secret-tool` prints it (label, attributes, secret), with
  /// its object path, and without its modification time.
  static func item(of store: SecretServiceTokenStore) async throws -> [String: String] {
    let items = try await TestKeyring.items(["group": store.group])
    try #require(items.count == 1, "\(items.count) items")
    var item = items[0]
    item["modified"] = nil
    item["path"] = try store.loadAllAddressed(.all).first?.address
    return item
  }

  /// An expiry that is gone is an empty attribute either way (SecretServiceQuirk's
  /// `mergesAttributes`), and reads back as none.
  @Test(arguments: [true, false])
  func aReplacementLeavesTheItemLibsecretsWriteLeaves(expiring: Bool) async throws {
    let group = TokenStoreConformance.freshGroup()
    let store = SecretServiceTokenStore(group: group)
    let throughLibsecret = SecretServiceTokenStore(
      group: group, prompting: nil, sessionAlgorithm: SecretSessionTests.refused)
    let stored = SecretServiceTokenStoreTests.sample(group: group)
    let refreshed = Self.refreshed(stored, expiring: expiring)
    try store.save(stored.account, tokens: stored.tokens)
    defer { _ = try? store.remove(stored.account.key) }
    let created = try await Self.item(of: store)

    #expect(try Self.replaceWithoutGIO(store, refreshed))
    let withoutGIO = try await Self.item(of: store)
    #expect(try store.load(stored.account.key) == refreshed)

    // The same write through libsecret, from the same item.
    try store.save(stored.account, tokens: stored.tokens)
    #expect(try await Self.item(of: store) == created)
    try throughLibsecret.save(refreshed.account, tokens: refreshed.tokens)
    let withLibsecret = try await Self.item(of: store)

    #expect(withoutGIO == withLibsecret)
    #expect(withoutGIO["path"] == created["path"])
    #expect(withoutGIO["secret"] != created["secret"])
    #expect(withoutGIO["attribute.expires"] == (expiring ? "1790007200" : ""))
  }

  /// A new account: nothing is written without GIO, and libsecret creates the item.
  @Test func aNewItemIsLibsecretsToCreate() throws {
    let store = SecretServiceTokenStore(group: TokenStoreConformance.freshGroup())
    let stored = SecretServiceTokenStoreTests.sample(group: store.group)
    #expect(try !Self.replaceWithoutGIO(store, stored))
    #expect(try store.loadAll(.all).isEmpty)
    try store.save(stored.account, tokens: stored.tokens)
    defer { _ = try? store.remove(stored.account.key) }
    #expect(try store.load(stored.account.key) == stored)
  }

  /// Two items for one account (two processes created it at once): nothing is written
  /// without GIO, and libsecret's write replaces the newest and removes the other.
  @Test func copiesOfAnItemAreLibsecretsToWrite() async throws {
    let store = SecretServiceTokenStore(group: TokenStoreConformance.freshGroup())
    let stored = SecretServiceTokenStoreTests.sample(group: store.group)
    try store.save(stored.account, tokens: stored.tokens)
    defer { _ = try? store.remove(stored.account.key) }
    // A copy whose attributes differ from the first's (its name), so that the service
    // does not replace the first with it.
    var copy = stored
    copy.account.name = "copy@contoso.com"
    let written = try await TestKeyring.secretTool(Self.storeArguments(copy), stdin: try Self.secret(copy))
    try #require(written.status == 0)
    try #require(try await TestKeyring.items(["group": store.group]).count == 2)

    let refreshed = Self.refreshed(stored, expiring: true)
    #expect(try !Self.replaceWithoutGIO(store, refreshed))
    try store.save(refreshed.account, tokens: refreshed.tokens)
    #expect(try await TestKeyring.items(["group": store.group]).count == 1)
    #expect(try store.load(stored.account.key) == refreshed)
  }

  /// A provider that refuses the session: nothing is written without GIO, and libsecret's
  /// write, in its own session, replaces the item.
  @Test func aRefusedSessionIsLibsecretsToWrite() throws {
    let group = TokenStoreConformance.freshGroup()
    let store = SecretServiceTokenStore(group: group, prompting: nil, sessionAlgorithm: SecretSessionTests.refused)
    let stored = SecretServiceTokenStoreTests.sample(group: group)
    try store.save(stored.account, tokens: stored.tokens)
    defer { _ = try? store.remove(stored.account.key) }
    let refreshed = Self.refreshed(stored, expiring: false)
    #expect(try !Self.replaceWithoutGIO(store, refreshed))
    try store.save(refreshed.account, tokens: refreshed.tokens)
    #expect(try store.load(stored.account.key) == refreshed)
  }

  /// A locked item: nothing is written without GIO (libsecret's write unlocks it, or says
  /// the keyring is locked: `SecretServiceWireWriteLoadingTests`).
  @Test func aLockedItemIsNotWritten() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    let stored = SecretServiceTokenStoreTests.sample(group: "locked")
    let seeded = try await session.run("secret-tool", Self.storeArguments(stored), stdin: try Self.secret(stored))
    try #require(seeded.status == 0, "\(seeded.stderr)")
    try await session.lockLoginKeyring()
    let refreshed = Self.refreshed(stored, expiring: true)
    let written = SecretServiceWireWrite.replace(
      matching: KeyringSchema.keyAttributes(stored.account.key, group: "locked"),
      secret: try refreshed.tokens.storageJSON(), contentType: KeyringSchema.contentType,
      attributes: { _ in KeyringSchema.attributes(of: refreshed.account, tokens: refreshed.tokens.summary) },
      label: "refreshed", algorithm: SecretSession.plainAlgorithm,
      busAddress: session.environment["DBUS_SESSION_BUS_ADDRESS"],
      runtimeDirectory: nil, timeoutMilliseconds: 10_000)
    #expect(written == nil)
  }

  /// A provider that takes the secret and refuses the attributes (a stand-in,
  /// Tests/Support/secret-service-refusing-attributes.py): the write is not done, for
  /// libsecret's to make whole, and the session is closed all the same.
  @Test func aWriteRefusedAfterTheSecretIsNotDone() async throws {
    let service = FileManager.default.currentDirectoryPath + "/Tests/Support/secret-service-refusing-attributes.py"
    let session = try await PrivateSession.started(
      .busWithoutSecretService,
      services: ["org.freedesktop.secrets.service": "[D-BUS Service]\nName=org.freedesktop.secrets\nExec=\(service)\n"])
    defer { session.stop() }
    let written = SecretServiceWireWrite.replace(
      matching: ["type": "graph"], secret: Array("{}".utf8), contentType: KeyringSchema.contentType,
      attributes: { $0 }, label: "refused", algorithm: SecretSession.plainAlgorithm,
      busAddress: session.environment["DBUS_SESSION_BUS_ADDRESS"], runtimeDirectory: nil, timeoutMilliseconds: 10_000)
    #expect(written == nil)
    let calls = try await session.run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
        "--method", "org.tokenctl.Test.Calls",
      ])
    #expect(calls.stdout == "(['SearchItems', 'OpenSession', 'SetSecret', 'GetAll', 'Set', 'Set', 'Close'],)\n")
  }

  /// `stored`'s secret as `secret-tool store` reads it.
  static func secret(_ stored: StoredAccount) throws -> String {
    String(decoding: try stored.tokens.storageJSON(), as: UTF8.self)
  }

  /// `secret-tool store`'s arguments for `stored`'s item, as the store writes it.
  static func storeArguments(_ stored: StoredAccount) -> [String] {
    let attributes = KeyringSchema.attributes(of: stored.account, tokens: stored.tokens.summary)
    return ["store", "--label", KeyringSchema.label(of: stored.account, defaultGroup: Account.defaultGroup)]
      + attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
  }
}
