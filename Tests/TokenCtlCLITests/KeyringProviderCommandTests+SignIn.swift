import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// The provider matrix's sign-in: on each provider, with its defaults and its
/// dialogs answered, what a user does after `login` against the real authorization server
/// (django-oauth-toolkit, the scripted user signing in): `refresh`, a token for other
/// scopes (an item of its own), git's credential helper, the same three through an agent,
/// and `revoke`. `make test-providers` runs it (TOKENCTL_TEST_MATRIX=1); `make test`'s
/// KeePassXC run leaves it out, to stay short.
extension KeyringProviderCommandTests {
  static let matrix = ProcessInfo.processInfo.environment["TOKENCTL_TEST_MATRIX"] == "1"

  /// It starts an agent of its own: under Tests/Support/with-agent.sh it would only repeat.
  @Test(.enabled(if: matrix && !throughAgent), .timeLimit(.minutes(5)))
  func signInRefreshOtherScopesGitAndTheAgent() async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    let matrix = try await MatrixSignIn()
    let (server, directory, environment, store) = (matrix.server, matrix.directory, matrix.environment, matrix.store)
    defer { matrix.removeAccounts() }
    var errors: [String] = []
    func tokenctl(_ arguments: [String], _ environment: [String: String]) async throws -> ProcessResult {
      let result = try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
      errors.append(result.stderr)
      return result
    }
    func git(_ environment: [String: String]) async throws -> ProcessResult {
      let result = try await TestProcess.run(
        "git", ["credential", "fill"], environment: GitCredentialTests.withHelper(environment),
        stdin: "protocol=http\nhost=127.0.0.1\n\n")
      errors.append(result.stderr)
      return result
    }

    let login = try await tokenctl(["login", "matrix", "--browser"], environment)
    try #require(login.status == 0, "login: \(login.stderr)")
    let signedIn = try #require(try store.list(AccountQuery(type: "matrix")).first)
    let key = signedIn.account.key
    let name = signedIn.account.qualifiedName
    let first = try #require(try store.load(key)).tokens

    let refresh = try await tokenctl(["refresh", name], environment)
    #expect(refresh.status == 0, "refresh: \(refresh.stderr)")
    let refreshed = try #require(try store.load(key)).tokens
    #expect(refreshed.accessToken != first.accessToken)
    #expect(refreshed.refreshToken != first.refreshToken)
    #expect(try await server.issued(refreshed.accessToken).issued)

    let scoped = try await tokenctl(["token", "--scope", "read", name], environment)
    #expect(scoped.status == 0, "token --scope: \(scoped.stderr)")
    let scopedToken = scoped.stdout.trimmingCharacters(in: .newlines)
    #expect(try await server.issued(scopedToken) == (true, ["read"]))
    #expect(try store.loadToken(for: key, scopes: try #require(ScopeSet(["read"])))?.accessToken == scopedToken)
    // Its own token is the one refreshed; the exchange rotated the refresh token.
    let own = try #require(try store.load(key)).tokens
    #expect(own.accessToken == refreshed.accessToken)

    let fill = try await git(environment)
    #expect(fill.status == 0, "git credential fill: \(fill.stderr)")
    #expect(fill.stdout.contains("username=oauth2\n") && fill.stdout.contains("password=\(own.accessToken)\n"))

    // The same through an agent of the test's own, reading the provider in its process.
    let agent = try await TestAgent.start(environment: environment, in: directory.url)
    let served = try await agent.requests()
    let viaAgent = try await tokenctl(["token", name], agent.environment)
    #expect(viaAgent.status == 0 && viaAgent.stdout == own.accessToken + "\n", "agent token: \(viaAgent.stderr)")
    let scopedViaAgent = try await tokenctl(["token", "--scope", "read", name], agent.environment)
    #expect(
      scopedViaAgent.status == 0 && scopedViaAgent.stdout == scopedToken + "\n",
      "agent token --scope: \(scopedViaAgent.stderr)")
    let fillViaAgent = try await git(agent.environment)
    #expect(fillViaAgent.status == 0 && fillViaAgent.stdout.contains("password=\(own.accessToken)\n"))
    // Three answers and the status request that reads the counter.
    #expect(try await agent.requests() >= served + 4, "\(agent.log)")

    let revoke = try await tokenctl(["revoke", name], agent.environment)
    #expect(revoke.status == 0, "revoke: \(revoke.stderr)")
    await agent.stop()
    #expect(try await server.issued(own.accessToken).issued == false)
    #expect(try store.load(key) == nil)
    for text in errors {
      for token in [first.accessToken, own.accessToken, scopedToken] + [own.refreshToken].compactMap({ $0 }) {
        #expect(!text.contains(token), "a token on standard error")
      }
    }
  }

  /// A sign-in at the shared server as the provider matrix's tests make one: the user
  /// type `matrix` (the server's issuer and native client, a loopback redirect, and git's
  /// host 127.0.0.1) in a home of its own, a fresh group in the provider's keyring, and a
  /// tokenctl that asks no agent and signs in through the scripted browser. DISPLAY stays
  /// the provider's own (Xvfb): its dialogs are shown and answered there.
  struct MatrixSignIn {
    let server: AuthServer
    let directory: TemporaryDirectory
    let environment: [String: String]
    let store: SecretServiceTokenStore

    init() async throws {
      server = try await AuthServer.shared
      directory = try TemporaryDirectory()
      let home = directory.url.appendingPathComponent("home")
      let group = TokenStoreConformance.freshGroup()
      try server.writeType(
        id: "matrix", displayName: "The provider matrix's server", scopes: ["openid", "read", "write"], home: home,
        gitHosts: ["127.0.0.1"])
      var environment = server.signInEnvironment(home: home, group: group, directory: directory)
      environment["TOKENCTL_AGENT_SOCKET"] = directory.path("no-agent.sock")
      self.environment = environment
      store = SecretServiceTokenStore(group: group, prompting: KeyringPrompting { _ in })
    }

    /// Removes every account of the group: what the test signed in.
    func removeAccounts() {
      for listing in (try? store.list(.all)) ?? [] { _ = try? store.remove(listing.account.key) }
    }
  }
}
