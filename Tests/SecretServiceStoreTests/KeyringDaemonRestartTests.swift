import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit

/// A long-lived process keeps working when gnome-keyring-daemon restarts under it.
///
/// libsecret binds its one `SecretService` per process to the daemon that answered first;
/// after a restart every call failed with `ServiceUnknown` until the process ended. Each
/// test is an exit test, in a process of its own, on a private bus with a keyring of its
/// own: the test process's session bus and libsecret's service belong to the other tests,
/// and a restart would disturb them.
@Suite(ExitTestGate.trait) struct KeyringDaemonRestartTests {
  @Test func theStoreReadsAndWritesAcrossRestarts() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      [environment = session.environment as [String: String]] in
      OwnProcess.run(on: environment, KeyringDaemonRestartTests.readAndWriteAcrossRestarts)
    }
    OwnProcess.report(result)
  }

  static func readAndWriteAcrossRestarts(_ session: PrivateSession) throws {
    let store = SecretServiceTokenStore(group: "restart")
    let saved = SecretServiceTokenStoreTests.sample(group: "restart")
    try store.save(saved.account, tokens: saved.tokens)

    try session.restartKeyring()
    #expect(try store.load(saved.account.key)?.tokens == saved.tokens)

    // A write, after another restart, takes the same way back.
    try session.restartKeyring()
    var refreshed = saved.tokens
    refreshed.accessToken = "eyJ-AFTER-RESTART-\(UUID().uuidString)"
    try store.save(saved.account, tokens: refreshed)
    #expect(try store.load(saved.account.key)?.tokens == refreshed)
    #expect(try store.list(.all).map(\.account.key) == [saved.account.key])
    #expect(try store.remove(saved.account.key))
  }

  /// Without any Secret Service after the old one left, the retry fails as the first
  /// attempt would have: `keyringUnavailable`, not a retry loop or a crash.
  @Test func aServiceThatLeftForGoodIsUnavailable() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      [environment = session.environment as [String: String]] in
      OwnProcess.run(on: environment, KeyringDaemonRestartTests.failWhenTheServiceLeft)
    }
    OwnProcess.report(result)
  }

  static func failWhenTheServiceLeft(_ session: PrivateSession) throws {
    let store = SecretServiceTokenStore(group: "gone")
    #expect(try store.list(.all) == [])

    try session.stopKeyring()
    let error = #expect(throws: TokenKitError.self) { try store.list(.all) }
    #expect(error?.code == .keyringUnavailable, "\(String(describing: error))")
  }
}
