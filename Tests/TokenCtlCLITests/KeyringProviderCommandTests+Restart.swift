import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

extension KeyringProviderCommandTests {
  /// An agent serves on across a restart of the provider under it (kwalletd5 or
  /// gnome-keyring-daemon, restarted as the user's session would), as it does across a
  /// gnome-keyring-daemon killed and started again (GrantJournalTests): after it, the
  /// agent reads the account, and writes what a token for other scopes brings, a new item
  /// and the rotated refresh token, in the new daemon.
  @Test(.enabled(if: matrix && !throughAgent && ProviderRestart.isAvailable), .timeLimit(.minutes(5)))
  func theAgentServesAcrossARestartOfTheProvider() async throws {
    let matrix = try await MatrixSignIn()
    let (server, directory, environment, store) = (matrix.server, matrix.directory, matrix.environment, matrix.store)
    defer { matrix.removeAccounts() }
    func tokenctl(_ arguments: [String], _ environment: [String: String]) async throws -> ProcessResult {
      try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
    }

    let login = try await tokenctl(["login", "matrix", "--browser"], environment)
    try #require(login.status == 0, "login: \(login.stderr)")
    let key = try #require(try store.list(AccountQuery(type: "matrix")).first).account.key
    let name = try #require(try store.list(AccountQuery(type: "matrix")).first).account.qualifiedName
    let agent = try await TestAgent.start(environment: environment, in: directory.url)
    // The agent writes once before the restart: its libsecret holds the old daemon's
    // service and session.
    let before = try await tokenctl(["token", "--scope", "read", name], agent.environment)
    #expect(before.status == 0, "agent token --scope read: \(before.stderr)")

    try await ProviderRestart.run()
    let served = try await agent.requests()
    let token = try await tokenctl(["token", name], agent.environment)
    let own = try #require(try store.load(key)).tokens
    #expect(token.status == 0 && token.stdout == own.accessToken + "\n", "agent token: \(token.stderr)")
    let scoped = try await tokenctl(["token", "--scope", "write", name], agent.environment)
    #expect(scoped.status == 0, "agent token --scope write: \(scoped.stderr)\n\(agent.log)")
    let scopedToken = scoped.stdout.trimmingCharacters(in: .newlines)
    #expect(try store.loadToken(for: key, scopes: try #require(ScopeSet(["write"])))?.accessToken == scopedToken)
    #expect(try await server.issued(scopedToken) == (true, ["write"]))
    // The exchange rotated the refresh token, which the agent stored in the new daemon.
    #expect(try store.load(key)?.tokens.refreshToken != own.refreshToken)
    #expect(try await agent.requests() >= served + 3, "\(agent.log)")
    await agent.stop()
  }
}
