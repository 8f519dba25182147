import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// No client is handed a token that a refresh in flight is about to replace,
/// against django-oauth-toolkit as it ships: rotating a refresh token deletes
/// the access token issued beside it, so a token handed out while the agent refreshes
/// ahead would be dead a moment later. With 4-second tokens the agent refreshes every few
/// seconds; clients of both paths ask all the while and use each token at once (the
/// server's introspection), and none may find it dead.
@Suite(.serialized, .timeLimit(.minutes(3))) struct FreshnessTests {
  let server: AuthServer
  let directory: TemporaryDirectory
  let group = TokenStoreConformance.freshGroup()

  init() async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    server = try await AuthServer.asShipped
    directory = try TemporaryDirectory()
    try server.writeType(
      id: "shipped", displayName: "django-oauth-toolkit as it ships", scopes: ["openid", "read"], home: home)
  }

  var home: URL { directory.url.appendingPathComponent("home") }

  var environment: [String: String] {
    var environment = server.signInEnvironment(home: home, group: group, directory: directory)
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

  /// The rule itself, without timing: while another process holds the account's refresh
  /// lock (a refresh in flight), neither path hands out the stored token, valid as it is;
  /// both wait, and answer with the token that refresh stores.
  @Test func aValidTokenWhoseRefreshIsInFlightIsNotHandedOutOnEitherPath() async throws {
    let setup = try await AgentIntegrationTests.Setup()
    defer { setup.cleanUp() }
    let ada = try await setup.seed(name: "ada", access: "inflight-old-\(UUID().uuidString)", expiresIn: 3600)
    let agent = try await setup.startAgent()
    #expect(
      try await TestProcess.run(TestProcess.tokenctl, ["token", "ada"], environment: setup.viaAgent()).status == 0)

    // A refresh in flight: the lock, taken as every tokenctl process takes it.
    let path = setup.lockPath(ada.account.key)
    // The folders private, as tokenctl makes them and insists they are.
    var folder = setup.home.path
    for component in ["cache", "tokenctl", "run", "locks"] {
      folder += "/" + component
      try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
      try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder)
    }
    #expect(folder == (path as NSString).deletingLastPathComponent)
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    try #require(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0, "the lock is held already")
    var released = false
    defer { if !released { close(fd) } }
    let outputs = [directory.path("agent.out"), directory.path("direct.out")]
    let clients = try [setup.viaAgent(), setup.direct()].enumerated().map { index, environment in
      try TestProcess(
        TestProcess.tokenctl, ["token", "ada"], environment: environment, stdout: outputs[index],
        stderr: directory.path("client-\(index).err"))
    }
    try await Task.sleep(for: .milliseconds(700))
    for (index, client) in clients.enumerated() {
      let printed = (try? String(contentsOfFile: outputs[index], encoding: .utf8)) ?? ""
      let errors = (try? String(contentsOfFile: directory.path("client-\(index).err"), encoding: .utf8)) ?? ""
      #expect(await client.exitStatus(within: 0) == nil, "a client did not wait for the refresh: \(printed) \(errors)")
    }
    // The refresh stores its new token, and lets go.
    var renewed = ada.tokens
    renewed.accessToken = "inflight-new-\(UUID().uuidString)"
    try setup.store().save(ada.account, tokens: renewed)
    close(fd)
    released = true
    for (index, client) in clients.enumerated() {
      #expect(await client.exitStatus(within: 30) == 0)
      #expect(try String(contentsOfFile: outputs[index], encoding: .utf8) == renewed.accessToken + "\n")
    }
    await AgentIntegrationTests.finish(agent, secrets: [ada.tokens.accessToken, renewed.accessToken])
  }

  /// A 1,000-second token that has lived 700 s: valid 300 s more, far beyond its margin
  /// (60 s), but due for the agent's refresh ahead (at 75 %) in 50 s.
  static func seedDueForRefreshAhead(_ setup: AgentIntegrationTests.Setup) async throws -> StoredAccount {
    var ada = try await setup.seed(name: "ada", access: "due-ahead-\(UUID().uuidString)", expiresIn: 300)
    ada.tokens.issuedAt = Date().addingTimeInterval(-700)
    try setup.store().save(ada.account, tokens: ada.tokens)
    return ada
  }

  /// The agent refreshes every account it hands out ahead of expiry (at 75 % of its
  /// lifetime), and that refresh may revoke the token it replaces. So a token due for its
  /// refresh ahead within its margin is not handed out: the agent refreshes first. Here a
  /// 1,000-second token has lived 700 s: valid 300 s more, far beyond its margin (60 s),
  /// but due for the refresh ahead in 50 s.
  @Test func aTokenDueForItsRefreshAheadWithinItsMarginIsRefreshedFirst() async throws {
    let setup = try await AgentIntegrationTests.Setup()
    defer { setup.cleanUp() }
    let ada = try await Self.seedDueForRefreshAhead(setup)
    let agent = try await setup.startAgent()
    let run = try await TestProcess.run(TestProcess.tokenctl, ["token", "ada"], environment: setup.viaAgent())
    #expect(run.status == 0, "\(run.stderr)")
    let handedOut = run.stdout.trimmingCharacters(in: .newlines)
    #expect(handedOut != ada.tokens.accessToken, "the agent handed out the token it is about to replace")
    let stored = try #require(try setup.store().load(ada.account.key))
    #expect(stored.tokens.accessToken == handedOut)
    await AgentIntegrationTests.finish(agent, secrets: [ada.tokens.accessToken, handedOut])
  }

  /// The same through git's helper and the agent: git is not handed the token the agent
  /// is about to replace either.
  @Test func gitIsNotHandedATokenDueForItsRefreshAheadWithinItsMargin() async throws {
    let setup = try await AgentIntegrationTests.Setup()
    defer { setup.cleanUp() }
    let ada = try await Self.seedDueForRefreshAhead(setup)
    let agent = try await setup.startAgent()
    let fill = try await TestProcess.run(
      "/usr/bin/git", ["credential", "fill"], environment: GitCredentialTests.withHelper(setup.viaAgent()),
      stdin: "protocol=http\nhost=127.0.0.1\n\n")
    #expect(fill.status == 0, "\(fill.stderr)")
    #expect(!fill.stdout.contains(ada.tokens.accessToken), "git got the token the agent is about to replace")
    let stored = try #require(try setup.store().load(ada.account.key))
    #expect(fill.stdout.contains("password=\(stored.tokens.accessToken)\n"), "\(fill.stdout)")
    await AgentIntegrationTests.finish(agent, secrets: [ada.tokens.accessToken, stored.tokens.accessToken])
  }

  /// A soak against the real server, for `make hardening`: timing decides whether a token
  /// handed out just before a refresh starts is used before it ends, so on a loaded machine
  /// it measures the machine as much as tokenctl.
  @Test(.enabled(if: ProcessInfo.processInfo.environment["TOKENCTL_SOAK"] == "1"))
  func noDeadTokenIsHandedOutWhileTheAgentRefreshesAhead() async throws {
    let login = try await TestProcess.run(
      TestProcess.tokenctl, ["login", "shipped", "--browser"],
      environment: environment.merging(["TOKENCTL_AGENT": "0"]) { $1 })
    try #require(login.status == 0, "\(login.stderr)")
    let store = SecretServiceTokenStore(group: group)
    let account = try #require(try store.list(AccountQuery(type: "shipped")).first?.account)
    defer { _ = try? store.remove(account.key) }

    let agent = try await TestAgent.start(environment: environment, in: directory.url)
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
    HardeningSummary.record(
      "freshness", "dead tokens handed out over 12 s of refreshes (direct, direct, agent)",
      "\(results.map(\.dead))", "\(refreshes) refreshes")
    #expect(results.map(\.dead) == [0, 0, 0], "dead tokens handed out (direct, direct, agent); \(refreshes) refreshes")
    #expect(refreshes >= 2, "only \(refreshes) refreshes while clients asked")
  }
}
