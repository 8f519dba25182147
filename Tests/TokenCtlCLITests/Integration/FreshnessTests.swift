import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// No client is handed a token that a refresh in flight is about to replace (issue 23,
/// item 8), against django-oauth-toolkit as it ships: rotating a refresh token deletes
/// the access token issued beside it, so a token handed out while the agent refreshes
/// ahead would be dead a moment later. With 4-second tokens the agent refreshes every few
/// seconds; clients of both paths ask all the while and use each token at once (the
/// server's introspection), and none may find it dead.
@Suite(.serialized, .timeLimit(.minutes(3))) struct FreshnessTests {
  let server: AuthServer
  let directory: TemporaryDirectory
  let group = TokenStoreConformance.freshGroup()

  init() throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    server = try AuthServer.require(AuthServer.asShipped)
    directory = try TemporaryDirectory()
    let types = home.appendingPathComponent("config/tokenctl/types")
    try FileManager.default.createDirectory(at: types, withIntermediateDirectories: true)
    try """
    id = "shipped"
    display_name = "django-oauth-toolkit as it ships"
    issuer = "\(server.issuer)"
    client_id = "\(server.nativeClientID)"
    scopes = ["openid", "read"]

    [redirect]
    host = "127.0.0.1"
    path = "/callback"
    """.write(to: types.appendingPathComponent("shipped.toml"), atomically: true, encoding: .utf8)
  }

  var home: URL { directory.url.appendingPathComponent("home") }

  var environment: [String: String] {
    var environment = GitCredentialTests.environment(home: home, group: group)
    environment["TOKENCTL_LOG"] = nil
    environment["TOKENCTL_CONFIG"] = nil
    environment["BROWSER"] = AuthServer.path("Tests/Support/scripted-browser")
    environment["SCRIPTED_BROWSER_SERVER_JSON"] = server.serverJSON
    environment["SCRIPTED_BROWSER_LOG"] = directory.path("browser.log")
    environment["DISPLAY"] = ":0"
    return environment
  }

  /// Asks for a token with `environment` until `deadline`, using each at once; returns how
  /// many the server no longer knew, the failures, and the tokens seen.
  func ask(
    until deadline: Date, account: String, environment: [String: String]
  ) async throws -> (dead: Int, failed: [String], seen: Set<String>) {
    var dead = 0
    var failed: [String] = []
    var seen: Set<String> = []
    while Date() < deadline {
      let run = try await TestProcess.run(TestProcess.tokenctl, ["token", account], environment: environment)
      guard run.status == 0 else {
        failed.append(run.stderr)
        continue
      }
      let token = run.stdout.trimmingCharacters(in: .newlines)
      seen.insert(token)
      if try await !server.introspect(token).active { dead += 1 }
      try await Task.sleep(for: .milliseconds(40))
    }
    return (dead, failed, seen)
  }

  @Test func noDeadTokenIsHandedOutWhileTheAgentRefreshesAhead() async throws {
    let login = try await TestProcess.run(
      TestProcess.tokenctl, ["login", "shipped", "--browser"],
      environment: environment.merging(["TOKENCTL_AGENT": "0"]) { $1 })
    try #require(login.status == 0, "\(login.stderr)")
    let store = SecretServiceTokenStore(group: group)
    let account = try #require(try store.list(AccountQuery(type: "shipped")).first?.account)
    defer { _ = try? store.remove(account.key) }

    let run = directory.url.appendingPathComponent("run")
    try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: run.path)
    let agent = try await TestAgent.start(
      environment: environment, socket: run.appendingPathComponent("agent.sock").path,
      log: directory.path("agent.log"))
    let viaAgent = TestAgent.clientEnvironment(environment, socket: agent.socket)
    var direct = environment
    direct["TOKENCTL_AGENT"] = "0"
    let name = account.qualifiedName
    // Asking once through the agent is what makes it keep the account fresh.
    #expect(try await TestProcess.run(TestProcess.tokenctl, ["token", name], environment: viaAgent).status == 0)

    // Three lifetimes of a token: a few refreshes, each with clients asking around it.
    let deadline = Date().addingTimeInterval(12)
    async let first = ask(until: deadline, account: name, environment: direct)
    async let second = ask(until: deadline, account: name, environment: direct)
    async let third = ask(until: deadline, account: name, environment: viaAgent)
    let results = try await [first, second, third]
    // Every refresh, the agent's ahead of time or a client's, issues a new token.
    let refreshes = Set(results.flatMap(\.seen)).count - 1
    _ = await agent.stop()

    #expect(results.flatMap(\.failed).isEmpty, "\(results.flatMap(\.failed))")
    #expect(results.map(\.dead) == [0, 0, 0], "dead tokens handed out (direct, direct, agent); \(refreshes) refreshes")
    #expect(refreshes >= 2, "only \(refreshes) refreshes while clients asked")
  }
}
