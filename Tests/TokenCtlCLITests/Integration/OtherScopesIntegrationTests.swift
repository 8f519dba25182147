import Foundation
import NativeAppSupport
import SecretServiceStore
import Synchronization
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// `tokenctl token --scope` and `request --scope` (RFC 6749 §6: a refresh that asks for
/// other scopes), as a user meets them: the real tokenctl and agent, the real keyring, and
/// the real authorization server (django-oauth-toolkit), whose refresh tokens rotate and
/// whose resource `/api/SCOPE/` takes only a token carrying that scope.
@Suite(.serialized) struct OtherScopesIntegrationTests {
  let directory: TemporaryDirectory
  let group = TokenStoreConformance.freshGroup()
  let server: AuthServer

  init() async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    server = try await AuthServer.shared
    directory = try TemporaryDirectory()
    try server.writeType(
      id: "local", displayName: "Local test server", scopes: ["openid", "read", "write"], home: home)
  }

  var home: URL { directory.url.appendingPathComponent("home") }
  var store: SecretServiceTokenStore { SecretServiceTokenStore(group: group) }
  static let read = ScopeSet(["read"])!

  /// No agent unless a test starts one; the scripted user signs in when the browser opens.
  var environment: [String: String] {
    var environment = server.signInEnvironment(home: home, group: group, directory: directory)
    environment["TOKENCTL_AGENT_SOCKET"] = directory.path("no-agent.sock")
    environment["DISPLAY"] = ":0"
    return environment
  }

  /// Every standard error the test saw, to check that no token reached one.
  let errors = StandardErrors()

  final class StandardErrors: Sendable {
    private let texts = Mutex<[String]>([])
    func append(_ text: String) { texts.withLock { $0.append(text) } }
    var all: [String] { texts.withLock { $0 } }
  }

  func tokenctl(_ arguments: String..., environment: [String: String]? = nil) async throws -> ProcessResult {
    let result = try await TestProcess.run(
      TestProcess.tokenctl, arguments, environment: environment ?? self.environment)
    errors.append(result.stderr)
    return result
  }

  /// `tokenctl token` with a debug log of its HTTP exchanges (which names no token):
  /// the token, and whether the token endpoint was asked.
  func token(_ arguments: String...) async throws -> (status: Int32, token: String, askedServer: Bool, stderr: String) {
    var debugging = environment
    debugging["TOKENCTL_LOG"] = "debug"
    let result = try await TestProcess.run(TestProcess.tokenctl, ["token"] + arguments, environment: debugging)
    errors.append(result.stderr)
    return (
      result.status, result.stdout.trimmingCharacters(in: .newlines), result.stderr.contains("/o/token/"),
      result.stderr
    )
  }

  /// Signs the scripted user in with `openid read write`; the account as stored.
  func signIn() async throws -> StoredAccount {
    let login = try await tokenctl("login", "local", "--browser")
    try #require(login.status == 0, "\(login.stderr)")
    let listing = try #require(try store.list(AccountQuery(type: "local")).first)
    #expect(Set(listing.account.scopes) == ["openid", "read", "write"])
    return try #require(try store.load(listing.account.key))
  }

  /// The status `GET /api/SCOPE/` answers with `token`, and its body.
  func resource(_ scope: String, _ token: String) async throws -> (Int, String) {
    let url = try #require(URL(string: "\(server.baseURL)/api/\(scope)/"))
    let response = try await CurlHTTPTransport().send(
      HTTPRequest(method: "GET", url: url, headers: [HTTPHeader("Authorization", "Bearer \(token)")]))
    return (response.status, String(decoding: response.body, as: UTF8.self))
  }

  func scopedItems() async throws -> Int {
    let result = try await TestProcess.run(
      "/usr/bin/secret-tool", ["search", "--all", "xdg:schema", ScopedTokenSchema.name, "group", group],
      mergingStandardError: true)
    return result.stdout.components(separatedBy: "\n").filter { $0.hasPrefix("attribute.scopes = ") }.count
  }

  @Test func aTokenForReadOnlyFromASignInForReadAndWrite() async throws {
    let signedIn = try await signIn()
    let key = signedIn.account.key
    let name = signedIn.account.qualifiedName
    defer { _ = try? store.remove(key) }
    let firstRefresh = try #require(signedIn.tokens.refreshToken)

    let scoped = try await token(name, "--scope", "read")
    try #require(scoped.status == 0, "\(scoped.stderr)")
    #expect(scoped.askedServer)
    #expect(try await resource("read", scoped.token).0 == 200)
    #expect(try await resource("write", scoped.token).0 == 403)
    #expect(try await server.introspect(scoped.token) == (true, ["read"]))

    // The account's own token and scopes are as they were; its refresh token was rotated
    // by the exchange, and the new one is stored.
    let after = try #require(try store.load(key))
    #expect(after.tokens.accessToken == signedIn.tokens.accessToken)
    #expect(after.tokens.idToken == signedIn.tokens.idToken)
    #expect(after.account.scopes == signedIn.account.scopes)
    let secondRefresh = try #require(after.tokens.refreshToken)
    #expect(secondRefresh != firstRefresh)
    let own = try await token(name)
    #expect(own.status == 0 && !own.askedServer)
    #expect(own.token == signedIn.tokens.accessToken)
    #expect(try await resource("write", own.token).0 == 200)
    #expect(try store.loadToken(for: key, scopes: Self.read)?.accessToken == scoped.token)
    #expect(try store.loadToken(for: key, scopes: Self.read)?.refreshToken == nil)
    #expect(try store.list(.all).count == 1)
    await #expect(try scopedItems() == 1)

    // Within its validity: the same token, and the server is not asked.
    let again = try await token(name, "--scope", "read")
    #expect(again.status == 0 && !again.askedServer, "\(again.stderr)")
    #expect(again.token == scoped.token)

    // Beyond its life: a new one, got the same way, rotating the refresh token again.
    let longer = try await token(name, "--min-valid", "4000", "--scope", "read")
    #expect(longer.status == 0 && longer.askedServer, "\(longer.stderr)")
    #expect(longer.token != scoped.token)
    #expect(try await resource("read", longer.token).0 == 200)
    #expect(try await server.introspect(longer.token) == (true, ["read"]))
    #expect(try store.load(key)?.tokens.refreshToken != secondRefresh)
    #expect(try store.load(key)?.tokens.accessToken == signedIn.tokens.accessToken)

    // `request --scope` sends it: the resource for read takes it, the one for write not.
    let origin = try #require(URL(string: server.baseURL)).absoluteString
    let read = try await tokenctl(
      "request", name, "--scope", "read", "--allow-host", origin, "\(server.baseURL)/api/read/")
    #expect(read.status == 0, "\(read.stderr)")
    #expect(read.stdout.contains(#""scope": "read""#), "\(read.stdout)")
    let write = try await tokenctl(
      "request", name, "--scope", "read", "--allow-host", origin, "\(server.baseURL)/api/write/")
    #expect(write.status == 16, "\(write.stderr)")

    // A scope the server refuses: said so, with what to do; nothing stored changes.
    let before = try #require(try store.load(key))
    let admin = try await tokenctl("token", name, "--scope", "admin")
    #expect(admin.status == 17)
    #expect(admin.stdout.isEmpty)
    #expect(admin.stderr.contains("refused to issue a token for the scope 'admin'"), "\(admin.stderr)")
    #expect(admin.stderr.contains("invalid_scope"))
    #expect(admin.stderr.contains("Ask only for scopes the sign-in granted (openid read write)"))
    #expect(admin.stderr.contains("tokenctl login \(name) --scope openid --scope read --scope write --scope admin"))
    #expect(try store.load(key) == before)
    #expect(try store.loadToken(for: key, scopes: ScopeSet(["admin"])!) == nil)

    // The account refreshes with the rotated refresh token, and keeps the full grant.
    let refresh = try await tokenctl("refresh", name)
    #expect(refresh.status == 0, "\(refresh.stderr)")
    let refreshed = try #require(try store.load(key))
    #expect(refreshed.tokens.accessToken != signedIn.tokens.accessToken)
    #expect(try await resource("write", refreshed.tokens.accessToken).0 == 200)
    #expect(try await server.introspect(refreshed.tokens.accessToken).scopes == ["openid", "read", "write"])

    // Signing out takes the tokens for other scopes with the account.
    let revoke = try await tokenctl("revoke", name)
    #expect(revoke.status == 0, "\(revoke.stderr)")
    #expect(try store.loadToken(for: key, scopes: Self.read) == nil)
    await #expect(try scopedItems() == 0)

    let secrets = [signedIn.tokens.accessToken, firstRefresh, secondRefresh, scoped.token, longer.token]
    for stderr in errors.all {
      for secret in secrets { #expect(!stderr.contains(secret), "a token reached standard error") }
    }
  }

  /// The refresh token the exchange presented is spent: presented again, the server
  /// sees a theft and ends the grant, and the next exchange marks the account as a
  /// refresh does.
  @Test func theRefreshTokenAnExchangeSpentIsDead() async throws {
    let signedIn = try await signIn()
    let key = signedIn.account.key
    defer { _ = try? store.remove(key) }
    let spent = try #require(signedIn.tokens.refreshToken)
    let scoped = try await token(signedIn.account.qualifiedName, "--scope", "read")
    try #require(scoped.status == 0, "\(scoped.stderr)")

    let endpoint = try #require(URL(string: server.baseURL + "/o/token/"))
    let replay = TokenRequest(
      endpoint: endpoint, grant: .refreshToken(spent), client: ClientIdentity(id: server.nativeClientID))
    #expect(try await CurlHTTPTransport().send(replay.httpRequest).status == 400)

    let after = try await token(signedIn.account.qualifiedName, "--min-valid", "4000", "--scope", "read")
    #expect(after.status == 5, "\(after.stderr)")
    #expect(after.stderr.contains("invalid_grant") && after.stderr.contains("tokenctl login local"))
    let marked = try #require(try store.load(key))
    #expect(marked.account.needsSignIn)
    #expect(marked.tokens.accessToken == signedIn.tokens.accessToken)
  }

  @Test func theAgentAnswersForOtherScopes() async throws {
    let signedIn = try await signIn()
    let key = signedIn.account.key
    let name = signedIn.account.qualifiedName
    defer { _ = try? store.remove(key) }
    let socket = directory.path("agent/agent.sock")
    let agent = try await TestAgent.start(environment: environment, socket: socket, log: directory.path("agent.log"))
    let client = TestAgent.clientEnvironment(environment, socket: socket)

    let before = try await agent.requests()
    let scoped = try await tokenctl("token", name, "--scope", "read", environment: client)
    #expect(scoped.status == 0, "\(scoped.stderr)")
    let token = scoped.stdout.trimmingCharacters(in: .newlines)
    #expect(try await agent.requests() == before + 2, "the agent answered")
    #expect(try await resource("read", token).0 == 200)
    #expect(try await resource("write", token).0 == 403)
    #expect(try store.loadToken(for: key, scopes: Self.read)?.accessToken == token)
    #expect(try store.load(key)?.tokens.refreshToken != signedIn.tokens.refreshToken)

    // From its memory the second time; the account's own token is still its own.
    let again = try await tokenctl("token", name, "--scope", "read", environment: client)
    #expect(again.stdout == scoped.stdout)
    let own = try await tokenctl("token", name, environment: client)
    #expect(own.stdout == signedIn.tokens.accessToken + "\n")
    #expect(try await agent.requests() == before + 5)
    let admin = try await tokenctl("token", name, "--scope", "admin", environment: client)
    #expect(admin.status == 17, "\(admin.stderr)")
    #expect(admin.stderr.contains("invalid_scope"))
    #expect(try await agent.requests() == before + 7)

    #expect(await agent.stop() == 0)
    let log = agent.log
    for secret in [token, signedIn.tokens.accessToken, signedIn.tokens.refreshToken ?? "-"] {
      #expect(!log.contains(secret), "a token reached the agent's log")
    }
  }
}
