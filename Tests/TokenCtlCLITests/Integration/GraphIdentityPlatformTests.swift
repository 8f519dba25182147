import Foundation
import TestSupport
import Testing
import TokenStoreTesting

/// The built-in `graph` type against Microsoft's identity platform and Graph as Microsoft
/// documents them (our stand-in, `Tests/Support/microsoft-identity-platform.py`, each
/// behaviour cited there), as a new user meets them: the real tokenctl, the
/// real keyring, config.toml naming only `tenant`, `authority_host` and `graph_host`, and
/// HTTPS through a throw-away CA that `SSL_CERT_FILE` makes trusted.
@Suite(.serialized, .timeLimit(.minutes(3))) struct GraphIdentityPlatformTests {
  let platform: MicrosoftIdentityPlatform
  let directory: TemporaryDirectory
  let group = TokenStoreConformance.freshGroup()

  static let ada = "graph:ada@contoso.test"

  init() async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    platform = try await MicrosoftIdentityPlatform.start()
    directory = try TemporaryDirectory()
    try configure()
  }

  var home: URL { directory.url.appendingPathComponent("home") }

  /// Writes config.toml: the stand-in's `[types.graph]`, and `more` after it.
  func configure(tenant: String = "common", clientID: String? = nil, extra: String = "") throws {
    let folder = home.appendingPathComponent("config/tokenctl")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let file = folder.appendingPathComponent("config.toml")
    try platform.graphSettings(tenant: tenant, clientID: clientID, extra: extra).write(
      to: file, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
  }

  func environment(user: String? = nil, session: String? = nil) -> [String: String] {
    var environment = GitCredentialTests.environment(home: home, group: group)
    environment["TOKENCTL_AGENT_SOCKET"] = directory.path("no-agent.sock")
    environment["TOKENCTL_LOG"] = nil
    environment["TOKENCTL_CONFIG"] = nil
    return platform.environment(environment, user: user, session: session, log: directory.path("browser.log"))
  }

  func tokenctl(_ arguments: String..., user: String? = nil) async throws -> ProcessResult {
    try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment(user: user))
  }

  func tokenctl(_ arguments: [String], environment: [String: String]) async throws -> ProcessResult {
    try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
  }

  @discardableResult
  func signIn(_ user: String? = nil) async throws -> ProcessResult {
    let login = try await tokenctl("login", "graph", "--browser", user: user)
    try #require(login.status == 0, "\(login.stderr)")
    return login
  }

  /// The last refresh of the account's own grant the stand-in answered (no `scope`).
  func refreshes() throws -> [[String: Any]] {
    try platform.tokenRequests("refresh_token").filter { MicrosoftIdentityPlatform.field($0, "scope") == nil }
  }

  /// The command a hint prints between backticks.
  static func hintedCommand(_ stderr: String) throws -> [String] {
    let hint = try #require(stderr.split(separator: "\n").first { $0.hasPrefix("hint:") }, "no hint in \(stderr)")
    let parts = hint.split(separator: "`")
    try #require(parts.count >= 2, "no command in \(hint)")
    return parts[1].split(separator: " ").map(String.init)
  }

  // MARK: Tenants and guests

  @Test func eachTenantKindSignsInAndAGuestIsToldApartFromTheMember() async throws {
    try #require(try await signIn().stdout.contains("as ada@contoso.test "))
    try configure(tenant: "organizations")
    #expect(try await signIn("bob@contoso.test").stdout.contains("as bob@contoso.test "))
    // A personal account is no organisation's (AADSTS500208): refused, nothing stored.
    let personal = try await tokenctl("login", "graph", "--browser", user: "dan@outlook.test")
    #expect(personal.status != 0)
    try configure(tenant: "consumers")
    #expect(try await signIn("dan@outlook.test").stdout.contains("as dan@outlook.test/personal "))
    let fabrikam = platform.tenantID("fabrikam")
    try configure(tenant: fabrikam)
    let guest = try await signIn("ada@contoso.test")
    #expect(guest.stdout.contains("as ada@contoso.test/\(fabrikam) "), "\(guest.stdout)")

    let list = try await tokenctl("list")
    let names = list.stdout.split(separator: "\n").dropFirst().compactMap { $0.split(separator: " ").dropFirst().first }
    #expect(
      Set(names.map(String.init))
        == ["ada@contoso.test", "ada@contoso.test/\(fabrikam)", "bob@contoso.test", "dan@outlook.test/personal"],
      "\(list.stdout)")
    // Each is reached by its own name, and Graph sees the member and the guest objects.
    let member = try await tokenctl("graph", "me", "--account", Self.ada)
    #expect(member.stdout.contains("ada00000-c0a7"), "\(member.stdout)\(member.stderr)")
    let guestMe = try await tokenctl("graph", "me", "--account", "graph:ada@contoso.test/\(fabrikam)")
    #expect(guestMe.stdout.contains("ada00000-fab4"), "\(guestMe.stdout)\(guestMe.stderr)")
  }

  /// The account keeps refreshing at the tenant it signed in at.
  @Test func anAccountKeepsItsTenantWhenConfigNamesAnotherAndNoOtherCloudGetsItsTokens() async throws {
    try await signIn()
    let contoso = platform.tenantID("contoso")
    try configure(tenant: platform.tenantID("fabrikam"))
    let refresh = try await tokenctl("refresh", Self.ada)
    #expect(refresh.status == 0, "\(refresh.stderr)")
    #expect(!refresh.stderr.contains("dropped"), "\(refresh.stderr)")
    let last = try #require(try refreshes().last)
    #expect(last["path"] as? String == "/\(contoso)/oauth2/v2.0/token")
    let me = try await tokenctl("graph", "me", "--account", Self.ada)
    #expect(me.stdout.contains("ada00000-c0a7"), "member object, not the guest: \(me.stdout)\(me.stderr)")

    // Another authority host (another cloud): refused before anything is sent.
    let before = try platform.tokenRequests().count
    try configure(extra: "")
    try
      "[types.graph]\nclient_id = \"\(platform.publicClientID)\"\nauthority_host = \"127.0.0.2:\(platform.host.split(separator: ":").last!)\"\ngraph_host = \"\(platform.host)\"\n"
      .write(to: home.appendingPathComponent("config/tokenctl/config.toml"), atomically: true, encoding: .utf8)
    let moved = try await tokenctl("refresh", Self.ada)
    #expect(moved.status == 14, "\(moved.stderr)")
    #expect(moved.stderr.contains("nothing was sent"))
    #expect(try platform.tokenRequests().count == before)
  }

  // MARK: Errors

  /// A refused per-call scope concerns that scope only.
  @Test func aScopeNobodyConsentedIsRefusedAndTheAccountStaysAsItWas() async throws {
    try await signIn()
    let refused = try await tokenctl("token", "--scope", "Mail.Read", Self.ada)
    #expect(refused.status == 17, "\(refused.stderr)")
    #expect(refused.stderr.contains("'Mail.Read'"))
    #expect(refused.stderr.contains("administrator"))
    #expect(refused.stderr.contains("--scope offline_access"), "the sign-in hint keeps the refresh token")
    #expect(try await tokenctl("token", Self.ada).status == 0)
    #expect(try await !tokenctl("list").stdout.contains("needs sign-in"))
    // Once an administrator consented, the same call gets its token.
    try await platform.control([
      "set": ["consented": ["contoso": ["User.Read", "User.ReadBasic.All", "Mail.Read"]]]
    ])
    let granted = try await tokenctl("token", "--scope", "Mail.Read", Self.ada)
    #expect(granted.status == 0, "\(granted.stderr)")
  }

  /// Microsoft's "come back in person" errors mean a new sign-in, whose hint runs as
  /// printed and names the user (`--login-hint`).
  @Test(arguments: ["interaction_required", "consent_required", "login_required"])
  func interactionErrorsAskForANewSignInThatNamesTheUser(kind: String) async throws {
    try await signIn()
    try await platform.control(["next_token_errors": ["refresh_token": [["kind": kind]]]])
    let refresh = try await tokenctl("refresh", Self.ada)
    #expect(refresh.status == 5, "\(refresh.stderr)")
    let command = try Self.hintedCommand(refresh.stderr)
    // The account, which records how it signed in (the tenant's issuer, the client), and
    // the test's group.
    #expect(Array(command.prefix(4)) == ["tokenctl", "login", "graph:ada@contoso.test", "--group"])
    #expect(try await tokenctl("token", Self.ada).status == 5)
    // The hint, run as printed.
    let again = try await tokenctl(Array(command.dropFirst()), environment: environment())
    #expect(again.status == 0, "\(again.stderr)")
    #expect(
      try platform.authorizations().last.flatMap { ($0["query"] as? [String: Any])?["login_hint"] as? String }
        == "ada@contoso.test")
    #expect(try await tokenctl("token", Self.ada).status == 0)
  }

  /// `Retry-After` is honoured within a few seconds, and a longer wait reported.
  @Test func aBusyServerIsAskedAgainOrTheWaitIsReported() async throws {
    try await signIn()
    try await platform.control([
      "next_token_errors": ["refresh_token": [["kind": "temporarily_unavailable", "retry_after": 1]]]
    ])
    let before = try refreshes().count
    let retried = try await tokenctl("refresh", Self.ada)
    #expect(retried.status == 0, "\(retried.stderr)")
    #expect(try refreshes().count == before + 2)

    try await platform.control([
      "next_token_errors": ["refresh_token": [["kind": "throttled", "retry_after": 30, "repeat": 3]]]
    ])
    let busy = try await tokenctl("refresh", Self.ada)
    #expect(busy.status == 11, "\(busy.stderr)")
    #expect(busy.stderr.contains("Try again in 30 s."), "\(busy.stderr)")
    #expect(try await tokenctl("token", Self.ada).status == 0, "the stored tokens are unchanged")
  }

  /// The description's first line, cleanly; the server's reference on its own line.
  @Test func anAADSTSErrorReadsCleanlyWithItsReferenceApart() async throws {
    try await signIn()
    try await platform.control(["next_token_errors": ["refresh_token": [["kind": "expired"]]]])
    let refresh = try await tokenctl("refresh", Self.ada)
    #expect(refresh.status == 5)
    #expect(!refresh.stderr.contains(#"\u{d}"#) && !refresh.stderr.contains(#"\u{a}"#), "\(refresh.stderr)")
    let lines = refresh.stderr.split(separator: "\n")
    #expect(lines.first?.contains("AADSTS70008: The provided authorization code or refresh token has expired") == true)
    #expect(lines.contains { $0.hasPrefix("The server's reference: Trace ID: ") && $0.contains("Correlation ID: ") })
  }

  // MARK: doctor, devices, permissions, clients

  /// `doctor --online` reaches the hosts of a type with fixed endpoints.
  @Test func doctorOnlineChecksTheAuthorityAndGraphHosts() async throws {
    try await signIn()
    let doctor = try await tokenctl("doctor", "--online")
    #expect(doctor.stdout.contains("Server \(platform.host)"), "\(doctor.stdout)")
    let dead = "127.0.0.1:1"
    try
      "[types.graph]\nclient_id = \"\(platform.publicClientID)\"\nauthority_host = \"\(dead)\"\ngraph_host = \"\(dead)\"\n"
      .write(to: home.appendingPathComponent("config/tokenctl/config.toml"), atomically: true, encoding: .utf8)
    let down = try await tokenctl("doctor", "--online")
    #expect(down.status != 0)
    #expect(down.stdout.contains("Server \(dead)"), "\(down.stdout)")
  }

  /// The device sign-in says the code once; declining is refused as such.
  @Test func aDeviceSignInShowsItsCodeOnceAndWorks() async throws {
    let stderr = directory.path("device.err")
    let login = try TestProcess(
      TestProcess.tokenctl, ["login", "graph", "--device"], environment: environment(), stderr: stderr)
    var code: String?
    var uri: String?
    for _ in 0..<200 where code == nil {
      try await Task.sleep(for: .milliseconds(50))
      let text = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
      if let line = text.split(separator: "\n").first(where: { $0.contains("and enter the code") }) {
        code = line.split(separator: " ").dropFirst(4).first.map(String.init)
        uri = text.split(separator: "\n").first { $0.hasPrefix("To sign in, open ") }?.split(separator: " ").last
          .map(String.init)
      }
    }
    let userCode = try #require(code)
    let browser = try await TestProcess.run(
      AuthServer.path("Tests/Support/microsoft-browser.py"), ["--device", try #require(uri), userCode],
      environment: environment())
    #expect(browser.status == 0, "\(browser.stderr)")
    let status = await login.exitStatus()
    let text = try String(contentsOfFile: stderr, encoding: .utf8)
    #expect(status == 0, "\(text)")
    #expect(text.components(separatedBy: userCode).count == 2, "the code once: \(text)")
  }

  /// AADSTS7000218 says what to change in the registration.
  @Test func aRegistrationWithoutPublicClientFlowsIsNamed() async throws {
    try configure(clientID: platform.client("public_no_device").id)
    let login = try await tokenctl("login", "graph", "--device")
    #expect(login.status == 11, "\(login.stderr)")
    #expect(login.stderr.contains("Allow public client flows"), "\(login.stderr)")
    #expect(!login.stderr.contains("client id and secret"))
  }

  /// revoke-sessions asks for its own permission, and refuses a guest.
  @Test func revokeSessionsAsksForItsPermissionAndRefusesAGuest() async throws {
    try await signIn()
    let refused = try await tokenctl("graph", "revoke-sessions", "--yes", "--account", Self.ada)
    #expect(refused.status == 17, "\(refused.stderr)")
    #expect(refused.stderr.contains("User.RevokeSessions.All"))
    #expect(try await tokenctl("token", Self.ada).status == 0)

    try await platform.control([
      "set": ["consented": ["contoso": ["User.Read", "User.ReadBasic.All", "User.RevokeSessions.All"]]]
    ])
    let revoked = try await tokenctl("graph", "revoke-sessions", "--yes", "--account", Self.ada)
    #expect(revoked.status == 0, "\(revoked.stderr)")
    #expect(try await tokenctl("refresh", Self.ada).status == 5)

    let fabrikam = platform.tenantID("fabrikam")
    try configure(tenant: fabrikam)
    try await platform.control([
      "set": ["consented": ["fabrikam": ["User.Read", "User.ReadBasic.All", "User.RevokeSessions.All"]]]
    ])
    try await signIn("ada@contoso.test")
    let guest = try await tokenctl(
      "graph", "revoke-sessions", "--yes", "--account", "graph:ada@contoso.test/\(fabrikam)")
    #expect(guest.status != 0)
    #expect(guest.stderr.contains("guest"), "\(guest.stderr)")
    #expect(!guest.stdout.contains("Signed"))
  }

  /// A service account needs a tenant, and asks for `.default`.
  @Test func aServiceAccountNeedsATenantAndGetsAnAppOnlyToken() async throws {
    let confidential = platform.client("confidential")
    let secret = "client_secret = \"\(try #require(confidential.secret))\""
    try configure(clientID: confidential.id, extra: secret)
    let common = try await tokenctl("login", "graph", "--client-credentials")
    #expect(common.status == 14, "\(common.stderr)")
    #expect(try platform.tokenRequests("client_credentials").isEmpty)
    try configure(tenant: "contoso.test", clientID: confidential.id, extra: secret)
    let login = try await tokenctl("login", "graph", "--client-credentials")
    let requests = try platform.tokenRequests("client_credentials")
    #expect(login.status == 0, "\(login.stderr) \(requests)")
    let request = try #require(try platform.tokenRequests("client_credentials").last)
    #expect(MicrosoftIdentityPlatform.field(request, "scope") == "https://\(platform.host)/.default")
  }

  /// A claims challenge one refresh cures is cured; one it does not is said plainly.
  @Test func claimsChallenges() async throws {
    try await signIn()
    try await platform.control(["next_graph_errors": [["kind": "claims_challenge", "any_client": true]]])
    let cured = try await tokenctl("graph", "me", "--account", Self.ada)
    #expect(cured.status == 0, "\(cured.stderr)")
    try await platform.control(["next_graph_errors": [["kind": "claims_challenge", "any_client": true, "repeat": 2]]])
    let uncured = try await tokenctl("graph", "me", "--account", Self.ada)
    #expect(uncured.status != 0)
    #expect(uncured.stderr.contains("claims challenge"), "\(uncured.stderr)")
    #expect(!uncured.stderr.contains("hint: Run `tokenctl login"), "a new sign-in would not help")
  }

  // MARK: Expiry and the agent

  /// Refresh after expiry; and an agent that found the account in the keyring at start
  /// refreshes it ahead once a client asks for its token.
  @Test func anExpiredTokenIsRefreshedAndTheAgentRefreshesAhead() async throws {
    try await platform.control(["set": ["access_token_lifetime": 6]])
    try await signIn()
    try await Task.sleep(for: .seconds(6.5))
    let search = try await tokenctl("graph", "users", "search", "Ad", "--account", Self.ada)
    #expect(search.status == 0, "\(search.stderr)")
    #expect(search.stdout.contains("Adele"), "\(search.stdout)")
    #expect(try refreshes().count == 1)

    // The agent's socket lives in a folder only its user may enter.
    let run = directory.url.appendingPathComponent("run")
    try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: run.path)
    let agent = try await TestAgent.start(
      environment: environment(), socket: run.appendingPathComponent("agent.sock").path,
      log: directory.path("agent.log"))
    defer { kill(agent.process.pid, SIGTERM) }
    let client = TestAgent.clientEnvironment(environment(), socket: agent.socket)
    let first = try await tokenctl(["token", Self.ada], environment: client)
    #expect(first.status == 0, "\(first.stderr)")
    let asked = try refreshes().count
    // Nobody asks for 8 s, more than a token's whole life: the agent refreshes ahead.
    try await Task.sleep(for: .seconds(8))
    #expect(try refreshes().count > asked, "no refresh ahead: \(agent.log)")
    let later = try await tokenctl(["token", Self.ada], environment: client)
    #expect(later.status == 0)
  }
}
