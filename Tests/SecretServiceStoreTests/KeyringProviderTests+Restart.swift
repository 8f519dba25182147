import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

extension KeyringProviderTests {
  /// A process that lives across a restart of the provider (an agent, when the user's
  /// session restarts kwalletd5 or gnome-keyring-daemon) reads and writes on after it:
  /// libsecret's service and session, and the session reads keep, belonged to the daemon
  /// that left. Each kind of call comes first after a restart once: a read, a new item.
  @Test(.enabled(if: ProviderRestart.isAvailable))
  func readsAndWritesGoOnAcrossRestarts() async throws {
    let group = TokenStoreConformance.freshGroup()
    let store = Self.store(group: group)
    let saved = SecretServiceTokenStoreTests.sample(group: group)
    try store.save(saved.account, tokens: saved.tokens)
    defer { _ = try? store.remove(saved.account.key) }

    try await ProviderRestart.run()
    #expect(try store.load(saved.account.key)?.tokens == saved.tokens)
    var refreshed = saved.tokens
    refreshed.accessToken = "eyJ-AFTER-RESTART-\(UUID().uuidString)"
    try store.save(saved.account, tokens: refreshed)
    #expect(try store.load(saved.account.key)?.tokens == refreshed)

    try await ProviderRestart.run()
    var second = saved.account
    second.id = "00000000-bob-oid"
    second.name = "bob@contoso.com"
    try store.save(second, tokens: saved.tokens)
    defer { _ = try? store.remove(second.key) }
    #expect(try store.load(second.key)?.tokens == saved.tokens)
    #expect(try store.list(.all).map(\.account.key).sorted { $0.id < $1.id } == [saved.account.key, second.key])
  }
}
