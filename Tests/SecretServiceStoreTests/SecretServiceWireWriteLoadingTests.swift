import Foundation
import TestSupport
import Testing
import TokenKit

@testable import SecretServiceStore

/// What a save loads, in a process of its own (an exit test's), which has loaded nothing
/// before it: a refresh's save of an account that is there replaces its item without GIO
/// and libsecret, as a read does, and a save that is not that ordinary write still goes
/// through libsecret, which says what went wrong.
@Suite(ExitTestGate.trait) struct SecretServiceWireWriteLoadingTests {
  /// The GLib libraries, by the paths /proc/self/maps gives them.
  static let glibLibraries = ["/libgio-2.0.so", "/libsecret-1.so", "/libgcrypt.so"]

  /// Those of `glibLibraries` this process has loaded.
  static func loadedGLibLibraries() throws -> [String] {
    // Read to its end: /proc gives the file no size to read by.
    let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/maps"))
    let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
    return glibLibraries.filter { maps.contains($0) }
  }

  /// The account's item, written by `secret-tool` as the store writes it: this process's
  /// own save would load libsecret to create it.
  static func seed(_ stored: StoredAccount, in session: PrivateSession) throws {
    let seeded = try session.run(
      "secret-tool", SecretServiceWireWriteTests.storeArguments(stored),
      stdin: try SecretServiceWireWriteTests.secret(stored))
    try #require(seeded.status == 0, "\(seeded.stderr)")
  }

  @Test func aRefreshsSaveLoadsNeitherGIONorLibsecret() async throws {
    try await inOwnProcess(.ordinary)
  }

  /// A locked keyring, and no prompt allowed: the write goes to libsecret, which says the
  /// keyring is locked, as it did before there was a write without it.
  @Test func aSaveToALockedKeyringIsLibsecretsToRefuse() async throws {
    try await inOwnProcess(.lockedKeyring)
  }

  /// The keyring a test saves to: named, since an exit test takes only values.
  enum Keyring: String, Codable, Sendable {
    case ordinary, lockedKeyring
  }

  /// Seeds an account's item on a private bus, then saves the account as a refresh does in
  /// a process of its own.
  func inOwnProcess(_ keyring: Keyring) async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      [environment = session.environment as [String: String], keyring] in
      OwnProcess.run(on: environment) { session in try Self.saveRefreshed(in: session, keyring) }
    }
    OwnProcess.report(result)
  }

  static func saveRefreshed(in session: PrivateSession, _ keyring: Keyring) throws {
    let stored = SecretServiceTokenStoreTests.sample(group: "wire")
    try seed(stored, in: session)
    let store = SecretServiceTokenStore(group: "wire")
    let refreshed = SecretServiceWireWriteTests.refreshed(stored, expiring: true)
    switch keyring {
    case .ordinary:
      try store.save(refreshed.account, tokens: refreshed.tokens)
      #expect(try store.loadAll(.all) == [refreshed])
      #expect(try loadedGLibLibraries() == [])
    case .lockedKeyring:
      try session.lockLoginKeyring()
      let error = #expect(throws: TokenKitError.self) {
        try store.save(refreshed.account, tokens: refreshed.tokens)
      }
      #expect(error?.code == .keyringLocked, "\(String(describing: error))")
      #expect(try loadedGLibLibraries().contains("/libsecret-1.so"))
    }
  }
}
