import Foundation
import NativeAppSupport
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// Service accounts (`login --client-credentials`) once their first token expires, as a
/// new user meets them: the real tokenctl, git helper and agent, the real keyring, and the
/// real authorization server issuing 4-second tokens. The client credentials grant issues
/// no refresh token (RFC 6749 §4.4.3); every client must ask again with the client's
/// credentials, with no user action.
@Suite(.serialized) struct ServiceAccountTests {
  let directory: TemporaryDirectory
  let group = TokenStoreConformance.freshGroup()
  let server: AuthServer

  init() async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    server = try await AuthServer.shortLived
    directory = try TemporaryDirectory()
    try UserTypeFile(
      id: "svc", displayName: "Service on the test server", issuer: server.issuer, clientID: server.serviceClientID,
      scopes: ["read"], gitHosts: ["127.0.0.1"]
    ).write(configHome: home.appendingPathComponent("config"))
    let config = home.appendingPathComponent("config/tokenctl")
    // The secret belongs in config.toml, which only the user may read.
    let file = config.appendingPathComponent("config.toml")
    try "[types.svc]\nclient_secret = \"\(server.serviceClientSecret)\"\n".write(
      to: file, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
  }

  var home: URL { directory.url.appendingPathComponent("home") }
  var account: String { "svc:\(server.serviceClientID)" }
  var store: SecretServiceTokenStore { SecretServiceTokenStore(group: group) }

  var environment: [String: String] {
    var environment = GitCredentialTests.environment(home: home, group: group)
    environment["TOKENCTL_AGENT_SOCKET"] = directory.path("no-agent.sock")
    environment["TOKENCTL_LOG"] = nil
    environment["TOKENCTL_CONFIG"] = nil
    return environment
  }

  func tokenctl(_ arguments: String..., environment: [String: String]? = nil) async throws -> ProcessResult {
    try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment ?? self.environment)
  }

  func storedToken() throws -> String {
    try #require(try store.load(AccountKey(type: "svc", id: server.serviceClientID))).tokens.accessToken
  }

  /// Signs in, then waits until the first token has expired.
  func signInAndLetExpire() async throws -> String {
    let login = try await tokenctl("login", "svc", "--client-credentials")
    try #require(login.status == 0, "\(login.stderr)")
    let first = try storedToken()
    #expect(try store.load(AccountKey(type: "svc", id: server.serviceClientID))?.account.isServiceAccount == true)
    try await Task.sleep(for: .seconds(4.5))
    #expect(try await !server.introspect(first).active, "the first token should have expired")
    return first
  }

  @Test func tokenRefreshListAndRequestRenewAnExpiredServiceAccount() async throws {
    defer { _ = try? store.remove(AccountKey(type: "svc", id: server.serviceClientID)) }
    let first = try await signInAndLetExpire()

    let list = try await tokenctl("list")
    #expect(list.stdout.contains("expired, renews itself"), "\(list.stdout)")
    #expect(!list.stdout.contains("needs sign-in"))
    let json = try await tokenctl("list", "--json")
    let accounts =
      try #require(
        try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])["accounts"]
      as? [[String: Any]]
    #expect(accounts?.first?["refreshable"] as? Bool == true)
    #expect(accounts?.first?["service_account"] as? Bool == true)

    let token = try await tokenctl("token", account)
    #expect(token.status == 0, "\(token.stderr)")
    let second = token.stdout.trimmingCharacters(in: .newlines)
    #expect(second != first)
    #expect(try second == storedToken())
    #expect(try await server.issued(second) == (true, ["read"]))

    let refresh = try await tokenctl("refresh", account)
    #expect(refresh.status == 0, "\(refresh.stderr)")
    let third = try storedToken()
    #expect(third != second)
    #expect(try await server.issued(third).issued)

    let all = try await tokenctl("refresh", "--all")
    #expect(all.status == 0, "\(all.stderr)")
    #expect(try storedToken() != third)

    // `request` renews it too, for a resource that demands the client's scope.
    try await Task.sleep(for: .seconds(4.5))
    let origin = try #require(URL(string: server.baseURL)).absoluteString
    let request = try await tokenctl("request", account, "--allow-host", origin, "\(server.baseURL)/api/read/")
    #expect(request.status == 0, "\(request.stderr)")
    #expect(request.stdout.contains(#""scope": "read""#), "\(request.stdout)")
    #expect(try await server.issued(try storedToken()).issued)
  }

  @Test func theGitHelperAndTheAgentRenewAnExpiredServiceAccount() async throws {
    defer { _ = try? store.remove(AccountKey(type: "svc", id: server.serviceClientID)) }
    let first = try await signInAndLetExpire()

    let fill = try await TestProcess.run(
      "/usr/bin/git", ["credential", "fill"], environment: GitCredentialTests.withHelper(environment),
      stdin: "protocol=http\nhost=127.0.0.1\n\n")
    #expect(fill.status == 0, "\(fill.stderr)")
    let renewed = try storedToken()
    #expect(renewed != first)
    #expect(fill.stdout.contains("password=\(renewed)\n"))
    #expect(try await server.issued(renewed).issued)

    // The agent keeps it fresh ahead of expiry, as it does refreshable accounts.
    let socket = directory.path("agent/agent.sock")
    let agent = try await TestAgent.start(environment: environment, socket: socket, log: directory.path("agent.log"))
    let client = TestAgent.clientEnvironment(environment, socket: socket)
    let token = try await tokenctl("token", account, environment: client)
    #expect(token.status == 0, "\(token.stderr)")
    let held = token.stdout.trimmingCharacters(in: .newlines)
    // Ahead of expiry and with nobody asking, the agent gets the next one.
    try await Task.sleep(for: .seconds(6))
    let ahead = try storedToken()
    #expect(ahead != held)
    #expect(try await server.issued(ahead).issued)
    let later = try await tokenctl("token", account, environment: client)
    #expect(later.status == 0, "\(later.stderr)")
    #expect(try later.stdout.trimmingCharacters(in: .newlines) == storedToken())
    #expect(await agent.stop() == 0)
    #expect(try !agent.log.contains(storedToken()))
  }
}
