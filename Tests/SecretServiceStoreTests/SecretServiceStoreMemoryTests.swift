import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// The store in a long-lived process (the agent): reads and writes leave nothing behind.
///
/// libsecret's `_sync` calls make item proxies in a main context of their own that never
/// runs again, and a proxy freed later queues its signal clean-up there for good: the
/// agent grew by about 2 KiB per item on every read of the keyring. An exit test, so that
/// the process's memory is this test's alone.
@Suite(ExitTestGate.trait) struct SecretServiceStoreMemoryTests {
  @Test func repeatedReadsAndWritesDoNotGrowTheProcess() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      [environment = session.environment as [String: String]] in
      OwnProcess.run(on: environment) { _ in try SecretServiceStoreMemoryTests.readAndWriteRepeatedly() }
    }
    OwnProcess.report(result)
  }

  /// Resident memory, from /proc/self/statm.
  static func residentBytes() throws -> Int {
    let fields = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8).split(separator: " ")
    return try #require(Int(fields[1])) * Int(sysconf(Int32(_SC_PAGESIZE)))
  }

  static func readAndWriteRepeatedly() throws {
    let store = SecretServiceTokenStore(group: "memory")
    var accounts: [StoredAccount] = []
    for index in 0..<20 {
      var sample = SecretServiceTokenStoreTests.sample(group: "memory")
      sample.account.id = "id-\(index)"
      sample.account.name = "user\(index)@contoso.com"
      try store.save(sample.account, tokens: sample.tokens)
      accounts.append(sample)
    }
    func round() throws {
      #expect(try store.loadAll(.all).count == 20)
      #expect(try store.list(.all).count == 20)
      try store.save(accounts[0].account, tokens: accounts[0].tokens)
    }
    // Warm up: GLib's types, the Secret Service session, malloc's arenas.
    for _ in 0..<10 { try round() }
    let before = try residentBytes()
    for _ in 0..<80 { try round() }
    let growth = try residentBytes() - before
    // Leaks seen: proxies made in a `_sync` call, about 6 MiB here (2 KiB per item per read);
    // the D-Bus reply of libsecret's `get_secrets_for_dbus_paths`, about 2 MiB (28 KiB a round).
    #expect(growth < 1024 * 1024, "resident memory grew by \(growth / 1024) KiB over 80 rounds")
  }
}
