import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// The real binary, the real keyring, many processes: one refresh for all of them.
@Suite(.serialized) struct RefreshRaceTests {
  /// A private config and cache, and a group of this test's own, in the shared test keyring.
  struct Setup {
    let group = TokenStoreConformance.freshGroup()
    let home = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-race-\(UUID().uuidString)")
    var environment: [String: String] {
      var environment = ProcessInfo.processInfo.environment
      environment["TOKENCTL_GROUP"] = group
      environment["XDG_CONFIG_HOME"] = home.appendingPathComponent("config").path
      environment["XDG_CACHE_HOME"] = home.appendingPathComponent("cache").path
      // Unset, as on these machines: the locks fall back to the private cache directory.
      environment["XDG_RUNTIME_DIR"] = nil
      return environment
    }

    func configure(_ toml: String) throws {
      let directory = home.appendingPathComponent("config/tokenctl")
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      try toml.write(to: directory.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
    }
  }

  @Test func thirtyTwoProcessesOnAnExpiredTokenMakeOneRefresh() async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    let stub = try await StubServer.start()
    let setup = Setup()
    try setup.configure(
      """
      [types.oidc]
      issuer = "\(stub.baseURL)"
      client_id = "race"
      """)
    let issued = try await stub.admin("/_admin/issue", method: "POST")
    let refreshToken = try #require(issued["refresh_token"] as? String)
    let store = SecretServiceTokenStore(group: setup.group)
    let account = Account(
      type: "oidc", id: "stub-user", name: "race", group: setup.group, createdAt: Date(), updatedAt: Date(),
      issuer: stub.baseURL, clientID: "race")
    try store.save(
      account,
      tokens: TokenSet(
        accessToken: "expired-access-token", refreshToken: refreshToken, expiresAt: Date().addingTimeInterval(-60)))
    defer { _ = try? store.remove(account.key) }
    _ = try await stub.admin("/_admin/reset", method: "POST")
    // The reset forgot the family; issue a new one and store it.
    let family = try await stub.admin("/_admin/issue", method: "POST")
    try store.save(
      account,
      tokens: TokenSet(
        accessToken: "expired-access-token", refreshToken: try #require(family["refresh_token"] as? String),
        expiresAt: Date().addingTimeInterval(-60)))
    let before = try await stub.admin("/_admin/stats")

    let outputs = (0..<32).map { setup.home.appendingPathComponent("out-\($0)").path }
    let errors = (0..<32).map { setup.home.appendingPathComponent("err-\($0)").path }
    let processes = try (0..<32).map {
      try TestProcess(
        TestProcess.tokenctl, ["token", "oidc:race"], environment: setup.environment, stdout: outputs[$0],
        stderr: errors[$0])
    }
    let statuses = processes.map { $0.wait() }
    let printed = try outputs.map { try String(contentsOfFile: $0, encoding: .utf8) }
    let stored = try #require(try store.load(account.key))
    let after = try await stub.admin("/_admin/stats")

    let failures = try zip(statuses, errors).filter { $0.0 != 0 }.map {
      try String(contentsOfFile: $0.1, encoding: .utf8)
    }
    #expect(failures.isEmpty, "\(failures)")
    #expect(Set(printed) == [stored.tokens.accessToken + "\n"], "all 32 print the one new token")
    #expect(stored.tokens.accessToken != "expired-access-token")
    let grants = { (stats: [String: Any]) in (stats["grant_types"] as? [String: Int])?["refresh_token"] ?? 0 }
    #expect(grants(after) - grants(before) == 1, "exactly one request to the token endpoint")
    #expect((after["reuse_detected"] as? Int ?? 0) == 0)
  }
}
