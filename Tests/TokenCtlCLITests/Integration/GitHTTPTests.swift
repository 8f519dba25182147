import Crypto
import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// Real git cloning from and pushing to a smart-HTTP server (`git http-backend` behind
/// `Tests/Support/git-http-server.py`) that accepts only access tokens the real
/// authorization server says are active. The accounts are signed in through the browser
/// flow, so every token git sends is one tokenctl obtained.
@Suite(.serialized) struct GitHTTPTests {
  let server: AuthServer
  let endpoints: [String: String]
  let group = TokenStoreConformance.freshGroup()
  let home = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-git-http-\(UUID().uuidString)")
  let gitBase: String
  let gitState: URL
  var store: SecretServiceTokenStore { SecretServiceTokenStore(group: group) }
  var host: String { String(gitBase.dropFirst("http://".count)) }
  var remote: String { "\(gitBase)/project.git" }

  init() async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    server = try await AuthServer.shared
    endpoints = try GraphEndToEndTests.endpoints(server)
    let repositories = home.appendingPathComponent("repositories")
    try FileManager.default.createDirectory(at: repositories, withIntermediateDirectories: true)
    (gitBase, gitState) = try await LoopbackService.start(
      "Tests/Support/git-http-server.py", info: "git-server.json",
      arguments: [
        "--root", repositories.path, "--introspect", try #require(endpoints["introspection"]),
        "--introspect-client", "\(server.serviceClientID):\(server.serviceClientSecret)",
      ])
    // A bare repository with one commit, made without any network.
    let seed = home.appendingPathComponent("seed").path
    for arguments in [
      ["init", "-q", "-b", "main", seed], ["-C", seed, "commit", "-q", "--allow-empty", "-m", "first"],
      ["clone", "-q", "--bare", seed, repositories.appendingPathComponent("project.git").path],
    ] {
      try await git(arguments, expecting: 0)
    }
    try GitCredentialTests.writeGitType(
      home: home, issuer: server.issuer, clientID: server.nativeClientID, host: host,
      scopes: ["openid", "profile", "email", "offline_access"])
    try configure("")
  }

  /// Writes config.toml: a hook that logs each event, then `extra`.
  func configure(_ extra: String) throws {
    try """
    hook = "echo \\"$TOKENCTL_EVENT $TOKENCTL_ACCOUNT\\" >> \(home.path)/events"
    \(extra)
    """.write(to: home.appendingPathComponent("config/tokenctl/config.toml"), atomically: true, encoding: .utf8)
  }

  var environment: [String: String] {
    var environment = GitCredentialTests.environment(home: home, group: group)
    environment["GIT_AUTHOR_NAME"] = "Ada"
    environment["GIT_AUTHOR_EMAIL"] = "ada@example.org"
    environment["GIT_COMMITTER_NAME"] = "Ada"
    environment["GIT_COMMITTER_EMAIL"] = "ada@example.org"
    environment["BROWSER"] = AuthServer.path("Tests/Support/scripted-browser.sh")
    environment["DISPLAY"] = ":0"
    environment["SCRIPTED_BROWSER_SERVER_JSON"] = server.serverJSON
    return environment
  }

  /// git with only our helper configured.
  @discardableResult
  func git(
    _ arguments: [String], extra: [String: String] = [:], expecting status: Int32? = nil
  ) async throws
    -> ProcessResult
  {
    let helper = GitCredentialTests.helper
    let result = try await TestProcess.run(
      "git", ["-c", "credential.helper=", "-c", "credential.helper=\(helper)"] + arguments,
      environment: environment.merging(extra) { $1 })
    if let status { try #require(result.status == status, "git \(arguments): \(result.stderr)") }
    return result
  }

  /// Signs in through the scripted browser as `user`; returns the account.
  @discardableResult
  func signIn(_ user: String) async throws -> Account {
    try await ToolHelperFixture.signIn(user: user, environment: environment, store: store)
  }

  /// Revokes a token at the authorization server (RFC 7009), as a user would on its page.
  func revokeAtServer(_ token: String) async throws {
    let result = try await TestProcess.run(
      "curl",
      [
        "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "--data-urlencode", "token@-",
        "--data-urlencode", "client_id=\(server.nativeClientID)", try #require(endpoints["revocation"]),
      ], environment: environment, stdin: token)
    try #require(result.stdout == "200", "revocation answered \(result.stdout)")
  }

  /// Marks the stored access token expired, as time would.
  func expire(_ account: Account) throws {
    var stored = try #require(try store.load(account.key))
    stored.tokens.expiresAt = Date().addingTimeInterval(-60)
    try store.save(stored.account, tokens: stored.tokens)
  }

  /// The git server's log: one object per request.
  func requests() throws -> [[String: Any]] {
    guard let text = try? String(contentsOf: gitState.appendingPathComponent("requests.log"), encoding: .utf8)
    else { return [] }
    return text.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
  }

  /// Requests that carried a credential the server refused.
  func refusedCredentials() throws -> Int {
    try requests().filter { ($0["credential"] as? String) != "none" && ($0["status"] as? Int) == 401 }.count
  }

  /// The users the server saw on authenticated requests.
  func usersSeen(since start: Int) throws -> Set<String> {
    Set(try requests().dropFirst(start).compactMap { $0["username"] as? String })
  }

  func events() -> [String] {
    ((try? String(contentsOfFile: home.appendingPathComponent("events").path, encoding: .utf8)) ?? "")
      .split(separator: "\n").map(String.init)
  }

  func cleanUp() {
    for listing in (try? store.list(.all)) ?? [] { _ = try? store.remove(listing.account.key) }
  }

  @Test func cloneAndPushWithAFreshToken() async throws {
    defer { cleanUp() }
    try await signIn("ada")
    let work = home.appendingPathComponent("work").path
    try await git(["clone", "-q", remote, work], expecting: 0)
    try await git(["-C", work, "commit", "-q", "--allow-empty", "-m", "second"], expecting: 0)
    try await git(["-C", work, "push", "-q", "origin", "main"], expecting: 0)
    let log = try await git([
      "--git-dir", home.appendingPathComponent("repositories/project.git").path, "log", "--oneline",
    ])
    #expect(log.stdout.contains("second"))
    #expect(try refusedCredentials() == 0)
    #expect(try usersSeen(since: 0) == ["ada"])
    #expect(
      try requests().contains { ($0["service"] as? String) == "git-receive-pack" && ($0["status"] as? Int) == 200 })
    #expect(!events().contains { $0.hasPrefix("refreshed") })
  }

  /// How the git server's log names a token.
  func fingerprint(_ token: String) -> String {
    String(SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined().prefix(16))
  }

  /// The tokens (by fingerprint) the server saw on requests it answered, since `start`.
  func tokensAccepted(since start: Int) throws -> Set<String> {
    Set(
      try requests().dropFirst(start).filter { ($0["status"] as? Int) == 200 }.compactMap {
        $0["token_sha256"] as? String
      })
  }

  @Test func anExpiredTokenIsRefreshedOnceAndTheCloneSucceedsFirstTime() async throws {
    defer { cleanUp() }
    let account = try await signIn("ada")
    let old = try #require(try store.load(account.key)).tokens
    try expire(account)
    try await git(["clone", "-q", remote, home.appendingPathComponent("clone").path], expecting: 0)
    #expect(events().filter { $0.hasPrefix("refreshed") }.count == 1, "\(events())")
    #expect(try refusedCredentials() == 0)
    let now = try #require(try store.load(account.key)).tokens
    #expect(now.accessToken != old.accessToken)
    #expect(now.expiresAt.map { $0 > Date().addingTimeInterval(60) } == true)
    // Git sent the refreshed token, and only that one.
    #expect(try tokensAccepted(since: 0) == [fingerprint(now.accessToken)])
  }

  @Test func aRevokedRefreshTokenFailsClearlyAndTheAccountNeedsSignIn() async throws {
    defer { cleanUp() }
    let account = try await signIn("ada")
    try await revokeAtServer(try #require(try store.load(account.key)?.tokens.refreshToken))
    try expire(account)
    let result = try await git(["clone", "-q", remote, home.appendingPathComponent("clone").path])
    #expect(result.status != 0)
    #expect(result.stderr.contains("tokenctl login gitlocal"), "\(result.stderr)")
    #expect(result.stderr.contains("terminal prompts disabled"))
    #expect(try refusedCredentials() == 0, "no stale token was sent")
    let list = try await TestProcess.run(TestProcess.tokenctl, ["list", "--json"], environment: environment)
    #expect(
      list.stdout.contains("\"needs_sign_in\" : true") || list.stdout.contains("\"needs_sign_in\":true"),
      "\(list.stdout)")
  }

  @Test func twoAccountsOnOneHostAreChosenByUsernameRuleAndEnvironment() async throws {
    defer { cleanUp() }
    try await signIn("ada")
    try await signIn("grace")
    // Neither chosen: git is told nothing, and the user is told how to choose.
    let ambiguous = try await git(["ls-remote", remote])
    #expect(ambiguous.status != 0)
    #expect(ambiguous.stderr.contains("gitlocal:ada") && ambiguous.stderr.contains("gitlocal:grace"))

    var start = try requests().count
    try await git(["ls-remote", "http://grace@\(host)/project.git"], expecting: 0)
    #expect(try usersSeen(since: start) == ["grace"])

    try configure("[git.accounts]\n\"\(remote)\" = \"gitlocal:grace\"\n")
    start = try requests().count
    try await git(["-c", "credential.useHttpPath=true", "ls-remote", remote], expecting: 0)
    #expect(try usersSeen(since: start) == ["grace"])

    start = try requests().count
    let chosen = try await git(["ls-remote", remote], extra: ["TOKENCTL_ACCOUNT": "gitlocal:ada"], expecting: 0)
    let seen = try usersSeen(since: start)
    let asked = try requests().dropFirst(start)
    #expect(seen == ["ada"], "requests: \(asked); git: \(chosen.stderr)")
  }

  @Test func withoutAnAccountAndNoPromptGitFailsWithTheLoginToRun() async throws {
    let result = try await git(["ls-remote", remote])
    #expect(result.status != 0)
    #expect(result.stderr.contains("no account for \(host): run 'tokenctl login gitlocal' to sign in"))
  }

  @Test func withATerminalGitOffersToSignInAndGoesOnWithTheNewAccount() async throws {
    defer { cleanUp() }
    let transcript = home.appendingPathComponent("terminal").path
    var environment = environment
    environment["GIT_TERMINAL_PROMPT"] = nil
    let result = try await TestProcess.run(
      AuthServer.path("Tests/Support/with-terminal.py"),
      [
        "--transcript", transcript, "--answer", "y", "--", "git", "-c", "credential.helper=",
        "-c", "credential.helper=\(GitCredentialTests.helper)", "ls-remote", remote,
      ], environment: environment)
    let terminal = try String(contentsOfFile: transcript, encoding: .utf8)
    #expect(result.status == 0, "\(result.stderr)\n\(terminal)")
    #expect(terminal.contains("no gitlocal account is signed in for \(host). Sign in now? [Y/n]"))
    #expect(terminal.contains("Signed in to gitlocal as ada"))
    #expect(result.stdout.contains("refs/heads/main"))
    #expect(try store.list(AccountQuery(type: "gitlocal")).map(\.account.name) == ["ada"])
  }

  @Test func aTokenTheServerRefusesIsErasedAndTheNextCommandRefreshes() async throws {
    defer { cleanUp() }
    let account = try await signIn("ada")
    // A token the server no longer knows (revoked or forgotten there) but valid by our
    // clock: git gets it, the server refuses it, and git erases it.
    var stored = try #require(try store.load(account.key))
    let refreshToken = stored.tokens.refreshToken
    stored.tokens.accessToken = "forgotten-by-the-server"
    try store.save(stored.account, tokens: stored.tokens)
    let refused = try await git(["ls-remote", remote])
    #expect(refused.status != 0)
    #expect(try refusedCredentials() == 1)
    let erased = try #require(try store.load(account.key)).tokens
    #expect(erased.refreshToken == refreshToken, "erase keeps the refresh token")
    #expect(erased.expiresAt.map { $0 < Date() } == true)
    let start = try requests().count
    try await git(["ls-remote", remote], expecting: 0)
    #expect(events().filter { $0.hasPrefix("refreshed") }.count == 1)
    let now = try #require(try store.load(account.key)).tokens
    #expect(try tokensAccepted(since: start) == [fingerprint(now.accessToken)])
  }
}
