import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// LemonLDAP::NG 2.16 (Debian 12's packages), an enterprise single sign-on system, set up by
/// `Tests/Support/lemonldap-ng-server.sh` as its documentation tells an administrator, and
/// used as a user would: the built-in `oidc` type configured in config.toml
/// (tokenctl-providers(7)), signing in as dwho through `Tests/Support/lemonldap-ng-browser.py`.
///
/// LemonLDAP::NG follows OpenID Connect Core §11 to the letter: `offline_access` brings a
/// refresh token only with `prompt=consent`, and compares redirect URIs exactly, port
/// included (the test sets `redirect_port`). Its access tokens here live 60 s.
///
/// `make test-lemonldap` runs it, once directly and once through the agent
/// (`Tests/Support/with-agent.sh`); elsewhere it is skipped.
@Suite(
  .serialized, .enabled(if: LemonLDAPGate.enabled, "needs LemonLDAP::NG: run `make test-lemonldap`"),
  .timeLimit(.minutes(10)))
struct LemonLDAPProviderTests {

  /// The server all tests share, started once per test process.
  struct Server: Sendable {
    let issuer: String
    let redirectPort: Int
    let accessTokenSeconds: Int
    let publicClient: String
    let confidentialClient: String
    let confidentialSecret: String
    let serverJSON: String
    let stateDir: String

    static var shared: Server { get async throws { try await onOwnThread { started }.get() } }
    private static let started = start()

    private static func start() -> Result<Server, TestFailure> {
      let state = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-lemonldap-\(getpid())")
      do {
        let result = try TestProcess.run(
          AuthServer.path("Tests/Support/lemonldap-ng-server.sh"),
          ["start", state.path, "--watch-pid", String(getpid())])
        guard result.status == 0 else {
          return .failure(TestFailure("lemonldap-ng-server.sh start failed: \(result.stderr)"))
        }
        let data = try Data(contentsOf: state.appendingPathComponent("server.json"))
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        return .success(
          Server(
            issuer: json["issuer"] as? String ?? "", redirectPort: json["redirect_port"] as? Int ?? 0,
            accessTokenSeconds: json["access_token_seconds"] as? Int ?? 0,
            publicClient: json["public_client"] as? String ?? "",
            confidentialClient: json["confidential_client"] as? String ?? "",
            confidentialSecret: json["confidential_secret"] as? String ?? "",
            serverJSON: state.appendingPathComponent("server.json").path, stateDir: state.path))
      } catch {
        return .failure(TestFailure("lemonldap-ng-server.sh: \(error)"))
      }
    }

    /// The issuer's host and port, as git names it.
    var host: String { URL(string: issuer).map { "\($0.host() ?? ""):\($0.port ?? 80)" } ?? "" }

    /// Ends every portal session, as an administrator does with lemonldap-ng-sessions.
    func endPortalSessions() async throws {
      let result = try await TestProcess.run(
        AuthServer.path("Tests/Support/lemonldap-ng-server.sh"), ["end-sessions", stateDir])
      try #require(result.status == 0, "\(result.stderr)")
    }
  }

  let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
    "tokenctl-lemonldap-test-\(UUID().uuidString)")
  let group = TokenStoreConformance.freshGroup()
  var store: SecretServiceTokenStore { SecretServiceTokenStore(group: group) }

  init() throws {
    try FileManager.default.createDirectory(
      at: scratch.appendingPathComponent("config/tokenctl"), withIntermediateDirectories: true)
  }

  /// The configuration a user of this server writes (tokenctl-providers(7)): its issuer,
  /// the public client and the port its redirect URI names.
  func writePublicClientConfiguration(_ server: Server, extra: String = "") throws {
    try write(
      """
      [types.oidc]
      issuer = "\(server.issuer)"
      client_id = "\(server.publicClient)"
      redirect_port = \(server.redirectPort)
      \(extra)
      """)
  }

  func write(_ config: String) throws {
    let file = scratch.appendingPathComponent("config/tokenctl/config.toml")
    try config.write(to: file, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
  }

  func environment(_ server: Server) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["BROWSER"] = AuthServer.path("Tests/Support/lemonldap-ng-browser.py")
    environment["LEMONLDAP_BROWSER_SERVER_JSON"] = server.serverJSON
    environment["LEMONLDAP_BROWSER_LOG"] = scratch.appendingPathComponent("browser.log").path
    environment["XDG_CACHE_HOME"] = scratch.appendingPathComponent("cache").path
    environment["XDG_CONFIG_HOME"] = scratch.appendingPathComponent("config").path
    environment["HOME"] = scratch.path
    environment["TOKENCTL_CONFIG"] = nil
    environment["TOKENCTL_GROUP"] = group
    environment["TOKENCTL_ACCOUNT"] = nil
    environment["DISPLAY"] = ":0"
    environment["GIT_CONFIG_NOSYSTEM"] = "1"
    environment["GIT_CONFIG_GLOBAL"] = "/dev/null"
    environment["GIT_TERMINAL_PROMPT"] = "0"
    return environment
  }

  func tokenctl(_ server: Server, _ arguments: String...) async throws -> ProcessResult {
    try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment(server))
  }

  var browserLog: String {
    (try? String(contentsOf: scratch.appendingPathComponent("browser.log"), encoding: .utf8)) ?? ""
  }

  func cleanUp() {
    for listing in (try? store.list(.all)) ?? [] { _ = try? store.remove(listing.account.key) }
    try? FileManager.default.removeItem(at: scratch)
  }

  /// Signs in dwho with the public client; returns the stored account.
  func signIn(_ server: Server, type: String = "oidc") async throws -> StoredAccount {
    let login = try await tokenctl(server, "login", type, "--browser", "--timeout", "60")
    try #require(login.status == 0, "login: \(login.stderr)\nbrowser: \(browserLog)")
    let listing = try #require(try store.list(AccountQuery(type: type)).first)
    return try #require(try store.load(listing.account.key))
  }

  // MARK: Sign-in

  /// The issuer ignores `offline_access` without `prompt=consent` (OpenID Connect Core §11):
  /// the built-in type asks for consent, so the account can refresh.
  @Test func signInWithPKCEGetsARefreshToken() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    try writePublicClientConfiguration(server)
    let account = try await signIn(server)
    #expect(account.account.name == "dwho")
    #expect(account.tokens.refreshToken != nil, "no refresh token; browser: \(browserLog)")
    #expect(browserLog.contains("consent page shown"))
    let expiresIn = try #require(account.tokens.expiresAt).timeIntervalSinceNow
    #expect(expiresIn <= Double(server.accessTokenSeconds) && expiresIn > 0)

    let token = try await tokenctl(server, "token", "oidc:dwho")
    #expect(token.status == 0, "\(token.stderr)")
    #expect(token.stdout == account.tokens.accessToken + "\n")
  }

  /// A `prompt` the user sets in `[types.oidc]` is what the issuer gets, instead of the
  /// type's `consent`: with `none`, the portal shows no consent page and answers
  /// `consent_required`, and the sign-in fails with the provider's reason. (LemonLDAP::NG
  /// 2.16 still shows its login form to a browser without a session, where OpenID Connect
  /// Core §3.1.2.1 says `login_required`; the scripted user signs in there.)
  @Test func aPromptSetInTheConfigurationWins() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    try writePublicClientConfiguration(server, extra: "authorization_parameters = { prompt = \"none\" }")
    // rtyler, whom no other test signs in: a consent given before would let `none` pass.
    var environment = environment(server)
    environment["LEMONLDAP_BROWSER_USER"] = "rtyler"
    let login = try await TestProcess.run(
      TestProcess.tokenctl, ["login", "oidc", "--browser", "--timeout", "60"], environment: environment)
    #expect(login.status != 0)
    #expect(login.stderr.contains("consent_required"), "\(login.stderr)")
    #expect(browserLog.contains("no consent page"), "\(browserLog)")
    #expect(try store.list(AccountQuery(type: "oidc")).isEmpty)
  }

  // MARK: Refresh

  @Test func refreshAfterExpiry() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    try writePublicClientConfiguration(server)
    let account = try await signIn(server)
    let expiresAt = try #require(account.tokens.expiresAt)
    try await Task.sleep(for: .seconds(max(0, expiresAt.timeIntervalSinceNow) + 2))

    let token = try await tokenctl(server, "token", "oidc:dwho")
    #expect(token.status == 0, "\(token.stderr)")
    let refreshed = try #require(try store.load(account.account.key))
    #expect(refreshed.tokens.accessToken != account.tokens.accessToken)
    #expect(token.stdout == refreshed.tokens.accessToken + "\n")
    #expect((refreshed.tokens.expiresAt ?? .distantPast) > Date())
  }

  /// An offline refresh token is not tied to the portal session (its 20 h timeout, or an
  /// administrator ending it): refreshing after the session ended still works.
  @Test func refreshAfterThePortalSessionEnds() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    try writePublicClientConfiguration(server)
    let account = try await signIn(server)
    try await server.endPortalSessions()

    let refresh = try await tokenctl(server, "refresh", "oidc:dwho")
    #expect(refresh.status == 0, "\(refresh.stderr)")
    let refreshed = try #require(try store.load(account.account.key))
    #expect(refreshed.tokens.accessToken != account.tokens.accessToken)
    #expect(refreshed.tokens.refreshToken != nil)
  }

  /// No client id configured: tokenctl registers a client at the issuer (RFC 7591, on in
  /// this portal) and signs in with it at once. The portal runs two workers, and only the
  /// one that registered the client knows it until the other reloads its configuration
  /// (every ten minutes by default): the browser may meet the other's error page, which
  /// tokenctl never hears of. The wait says so as it begins, with the command for later;
  /// the sign-in either succeeds or times out with the registration kept.
  @Test func signInWithAClientRegisteredMomentsAgo() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    try write("[types.oidc]\nissuer = \"\(server.issuer)\"\n")
    let login = try await tokenctl(server, "login", "oidc", "--browser", "--timeout", "20")
    #expect(login.stderr.contains("Registered tokenctl at"), "\(login.stderr)")
    #expect(
      login.stderr.contains("registered its client seconds ago")
        && login.stderr.contains("`tokenctl login oidc --browser --timeout 20`"), "\(login.stderr)")
    if login.status == 0 {
      #expect(try store.list(AccountQuery(type: "oidc")).first?.account.name == "dwho")
    } else {
      #expect(login.status == 13, "a timeout, nothing else: \(login.stderr)\nbrowser: \(browserLog)")
    }
    let unregister = try await tokenctl(server, "unregister", server.issuer)
    #expect(unregister.status == 0, "\(unregister.stderr)")
  }

  // MARK: The agent

  /// In the pass through the agent (`make test-lemonldap` runs one), `token` is answered by
  /// the agent, which holds the account afterwards.
  @Test(.enabled(if: LemonLDAPGate.throughAgent, "only in the pass through the agent"))
  func theAgentAnswers() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    try writePublicClientConfiguration(server)
    let account = try await signIn(server)
    let token = try await tokenctl(server, "token", "oidc:dwho")
    #expect(token.status == 0, "\(token.stderr)")
    #expect(token.stdout == account.tokens.accessToken + "\n")
    let status = try await tokenctl(server, "agent", "status")
    #expect(status.status == 0, "\(status.stderr)")
    #expect(status.stdout.contains("oidc:dwho"), "\(status.stdout)")
  }

  // MARK: git

  /// git's helper answers for the issuer's host with a type file that names it
  /// (tokenctl-types(5)): the built-in `oidc` type serves no git host. The type file sets
  /// `prompt = "consent"` itself, as tokenctl-providers(7) says for such an issuer.
  @Test func gitsHelperGetsTheToken() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    let types = scratch.appendingPathComponent("config/tokenctl/types")
    try FileManager.default.createDirectory(at: types, withIntermediateDirectories: true)
    try """
    id = "sso"
    display_name = "LemonLDAP::NG"
    issuer = "\(server.issuer)"
    client_id = "\(server.publicClient)"
    scopes = ["openid", "profile", "email", "offline_access"]

    [redirect]
    port = \(server.redirectPort)

    [authorization_parameters]
    prompt = "consent"

    [credentials]
    hosts = ["\(server.host)"]
    username = "oauth2"
    """.write(to: types.appendingPathComponent("sso.toml"), atomically: true, encoding: .utf8)
    let account = try await signIn(server, type: "sso")
    #expect(account.tokens.refreshToken != nil)

    let helper = URL(fileURLWithPath: TestProcess.tokenctl).deletingLastPathComponent()
      .appendingPathComponent("git-credential-tokenctl").path
    let get = try await TestProcess.run(
      helper, ["get"], environment: environment(server), stdin: "protocol=http\nhost=\(server.host)\n\n")
    #expect(get.status == 0, "\(get.stderr)")
    #expect(get.stdout.contains("username=oauth2\n"))
    // The helper may have refreshed first (it wants more time left than these 60 s
    // tokens have): what it gave git is what the keyring holds now.
    let current = try #require(try store.load(account.account.key)).tokens.accessToken
    let gavePassword = get.stdout.contains("password=\(current)\n")
    #expect(gavePassword, "the helper did not give git the account's current access token")
    let leaked = get.stderr.contains(current) || get.stderr.contains(account.tokens.accessToken)
    #expect(!leaked, "the helper wrote a token to standard error")
  }

  /// A `[credentials.accounts]` rule naming dwho for a host the `oidc` type does not serve
  /// (it serves its issuer's host only) never applies: `get` says so, and so does `doctor`.
  @Test func aGitRuleThatCannotApplyIsSaid() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    try writePublicClientConfiguration(
      server, extra: "\n[credentials.accounts]\n\"https://git.example.org\" = \"oidc:dwho\"")
    _ = try await signIn(server)
    let helper = URL(fileURLWithPath: TestProcess.tokenctl).deletingLastPathComponent()
      .appendingPathComponent("git-credential-tokenctl").path
    let get = try await TestProcess.run(
      helper, ["get"], environment: environment(server), stdin: "protocol=https\nhost=git.example.org\n\n")
    #expect(!get.stdout.contains("password="))
    #expect(get.stderr.contains("names oidc:dwho, whose type does not serve git.example.org"), "\(get.stderr)")
    let doctor = try await tokenctl(server, "doctor")
    #expect(doctor.stdout.contains("warn  git rule for https://git.example.org: "), "\(doctor.stdout)")
  }

  // MARK: What this provider does not offer, and what it answers

  /// Its tokens live 60 s: `--min-valid 120` can never be met, and `token` says so, with
  /// what it can get, while still handing out a token.
  @Test func aMarginTheTokensCannotMeetIsSaid() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    try writePublicClientConfiguration(server)
    _ = try await signIn(server)
    let token = try await tokenctl(server, "token", "oidc:dwho", "--min-valid", "120")
    #expect(token.status == 0, "\(token.stderr)")
    #expect(!token.stdout.isEmpty)
    let said = "tokens live \(server.accessTokenSeconds) s at the server; --min-valid 120 cannot be met"
    #expect(token.stderr.contains(said), "\(token.stderr)")
  }

  /// The issuer publishes no device authorization endpoint: the refusal names the
  /// issuer, not the type (another issuer of the same type may offer it), and the hint
  /// runs the browser sign-in.
  @Test func theDeviceGrantIsRefusedAsThisIssuers() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    try writePublicClientConfiguration(server)
    let login = try await tokenctl(server, "login", "oidc", "--device", "--timeout", "20")
    #expect(login.status != 0)
    #expect(login.stderr.contains("does not offer the device authorization grant"), "\(login.stderr)")
    #expect(login.stderr.contains(server.host.split(separator: ":")[0]), "names the issuer: \(login.stderr)")
    #expect(login.stderr.contains("`tokenctl login oidc --browser"), "\(login.stderr)")
  }

  /// Without `redirect_port`, the portal refuses the redirect (it compares the port) and
  /// shows its error page; the browser never comes back. The wait says, before it starts,
  /// what such a page means and the setting that fixes it.
  @Test func aRefusedRedirectIsExplainedAsTheWaitBegins() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    try write(
      """
      [types.oidc]
      issuer = "\(server.issuer)"
      client_id = "\(server.publicClient)"
      """)
    let login = try await tokenctl(server, "login", "oidc", "--browser", "--timeout", "8")
    #expect(login.status != 0)
    #expect(login.stderr.contains("If the browser shows an error page instead"), "\(login.stderr)")
    #expect(login.stderr.contains("redirect_port in the [types.oidc] table"), "\(login.stderr)")
    #expect(try store.list(AccountQuery(type: "oidc")).isEmpty)
  }

  /// The issuer ignores `scope` on refresh and names none in its answer (RFC 6749 §5.1
  /// lets it): the scopes reported for a token asked for with `--scope` are those the
  /// token carries, or are marked unconfirmed, never claimed as granted.
  @Test func scopesTheServerDidNotConfirmAreNotReportedAsGranted() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    try writePublicClientConfiguration(server)
    _ = try await signIn(server)
    let token = try await tokenctl(server, "token", "oidc:dwho", "--scope", "openid phone", "--json")
    #expect(token.status == 0, "\(token.stderr)")
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(token.stdout.utf8)) as? [String: Any], "\(token.stdout)")
    let scopes = document["scopes"] as? [String] ?? []
    let confirmed = document["scopes_confirmed"] as? Bool
    #expect(!scopes.contains("phone") || confirmed == false, "\(token.stdout)")
  }

  /// A type file that names no scopes, for the confidential client: the issuer wants a
  /// scope named, and the error says that none was asked for and how to name one, not that
  /// "the scope asked for" was refused.
  @Test func clientCredentialsWithoutAScopeSayNoneWasAskedFor() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    let types = scratch.appendingPathComponent("config/tokenctl/types")
    try FileManager.default.createDirectory(at: types, withIntermediateDirectories: true)
    try """
    id = "service"
    display_name = "LemonLDAP::NG service client"
    issuer = "\(server.issuer)"
    client_id = "\(server.confidentialClient)"
    """.write(to: types.appendingPathComponent("service.toml"), atomically: true, encoding: .utf8)
    try write("[types.service]\nclient_secret = \"\(server.confidentialSecret)\"\n")
    let login = try await tokenctl(server, "login", "service", "--client-credentials")
    #expect(login.status == 17, "\(login.stderr)")
    #expect(login.stderr.contains("wants a scope named, and none was asked for"), "\(login.stderr)")
    #expect(login.stderr.contains("add --scope and that scope to `tokenctl login service"), "\(login.stderr)")
    #expect(!login.stdout.contains(server.confidentialSecret) && !login.stderr.contains(server.confidentialSecret))
  }

  // MARK: Client credentials

  @Test func clientCredentialsWithTheConfidentialClient() async throws {
    defer { cleanUp() }
    let server = try await Server.shared
    try write(
      """
      [types.oidc]
      issuer = "\(server.issuer)"
      client_id = "\(server.confidentialClient)"
      client_secret = "\(server.confidentialSecret)"
      scopes = ["openid"]
      """)
    let login = try await tokenctl(server, "login", "oidc", "--client-credentials")
    #expect(login.status == 0, "\(login.stderr)")
    #expect(!login.stdout.contains(server.confidentialSecret) && !login.stderr.contains(server.confidentialSecret))
    let listing = try #require(try store.list(AccountQuery(type: "oidc")).first)
    #expect(listing.account.isServiceAccount)
    let token = try await tokenctl(server, "token", "oidc:\(server.confidentialClient)")
    #expect(token.status == 0, "\(token.stderr)")
    #expect(!token.stdout.isEmpty)
  }
}

/// Whether `make test-lemonldap` runs the suite, and whether through the agent.
enum LemonLDAPGate {
  static let enabled = ProcessInfo.processInfo.environment["TOKENCTL_TEST_LEMONLDAP"] == "1"
  static let throughAgent = ProcessInfo.processInfo.environment["TOKENCTL_TEST_AGENT"] == "1"
}
