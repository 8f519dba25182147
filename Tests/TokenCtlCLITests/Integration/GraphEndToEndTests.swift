import Foundation
import NativeAppSupport
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenCtlCLI

/// `tokenctl graph` end to end: the account is signed in through the real browser flow
/// at the real authorization server (django-oauth-toolkit), and the fake Graph service
/// accepts its tokens only because that server's RFC 7662 introspection says they are
/// active, as a resource server that does not issue tokens does. Nothing is seeded in
/// the store, so the tokens Graph sees are the ones sign-in and refresh obtained.
@Suite(.serialized) struct GraphEndToEndTests {
  let backing = InMemoryTokenStore.Backing()
  let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-graph-e2e-\(UUID().uuidString)")
  let server: AuthServer
  let fake: FakeGraph

  init() async throws {
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    server = try await AuthServer.shared
    let introspection = try #require(try Self.endpoints(server)["introspection"])
    fake = try await FakeGraph.start([
      "--introspect", introspection, "--introspect-client", "\(server.serviceClientID):\(server.serviceClientSecret)",
    ])
  }

  /// server.json's endpoints, read here because `AuthServer` keeps only what sign-in
  /// needs and the fake needs the introspection endpoint.
  static func endpoints(_ server: AuthServer) throws -> [String: String] {
    let data = try Data(contentsOf: URL(fileURLWithPath: server.serverJSON))
    let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    return json?["endpoints"] as? [String: String] ?? [:]
  }

  /// A Microsoft Graph type whose identity provider is our authorization server and whose
  /// API is the fake: what a national cloud or a test tenant would be.
  func registry() throws -> AccountTypeRegistry {
    var registry = AccountTypeRegistry()
    try registry.register(
      EndpointDescriptor(
        id: "graph-local", displayName: "Graph on the test server",
        endpoints: .discovered(issuer: try #require(URL(string: server.issuer))),
        defaultScopes: ["openid", "profile", "email"], clientID: server.nativeClientID,
        redirect: .loopback(host: "127.0.0.1", path: "/callback"), apiBase: URL(string: "\(fake.baseURL)/v1.0")),
      source: "test")
    return registry
  }

  struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  /// Runs tokenctl in process, with the scripted browser signing in as ada.
  func tokenctl(_ arguments: [String]) async throws -> Run {
    let environment = server.browserEnvironment(scratch: scratch)
    let output = CapturedOutput()
    let backing = backing
    let context = CLIContext(
      registry: try registry(), makeStore: { InMemoryTokenStore(group: $0, backing: backing) },
      clock: SystemClock(), environment: environment, output: output,
      readLine: {
        Issue.record("the command must not read the terminal")
        return nil
      })
    let status = await TokenCtl.main(arguments: arguments, context: context)
    return Run(status: status, stdout: output.stdout, stderr: output.stderr)
  }

  var store: InMemoryTokenStore { InMemoryTokenStore(group: "default", backing: backing) }

  func stored() throws -> StoredAccount {
    let listing = try #require(try store.list(AccountQuery(type: "graph-local")).first)
    return try #require(try store.load(listing.account.key))
  }

  /// What the fake answered since `start` requests ago, as "PATH STATUS"; introspection
  /// calls show as "(introspect) STATUS".
  func fakeLog(from start: Int) throws -> [String] {
    Array(try fake.requests().map { "\($0.path) \($0.status)" }.dropFirst(start))
  }

  /// The table's rows as (name, UPN): the columns are separated by two or more spaces.
  func rows(_ table: String) -> [[String]] {
    table.split(separator: "\n").map { line in
      line.split(separator: "  ", omittingEmptySubsequences: true).map {
        $0.trimmingCharacters(in: .whitespaces)
      }
    }
  }

  func signIn() async throws {
    let login = try await tokenctl(["login", "graph-local", "--browser"])
    #expect(login.status == 0, "\(login.stderr)")
    #expect(login.stdout.contains("Signed in to graph-local as ada"))
    #expect(try fake.requests().isEmpty, "signing in does not talk to Graph")
  }

  @Test func searchShowAndMeWithASignedInAccountThenAnExpiredTokenIsRefreshedFirst() async throws {
    try await signIn()
    let signedIn = try stored()
    #expect(signedIn.account.issuer == server.issuer)
    #expect(signedIn.tokens.refreshToken != nil)

    let search = try await tokenctl(["graph", "users", "search", "Ad", "--account", "graph-local:ada"])
    #expect(search.status == 0, "\(search.stderr)")
    let table = rows(search.stdout)
    #expect(table.first == ["NAME", "UPN", "MAIL", "PHONES"])
    #expect(
      table.dropFirst().map { Array($0.prefix(2)) } == [
        ["Ada Lovelace", "ada@contoso.test"], ["Adam Smith", "adam@contoso.test"],
        ["Adele Vance", "adele@contoso.test"], ["Adrian Ford", "adrian@contoso.test"],
        ["Adelaide Byron", "adelaide@contoso.test"],
      ])
    #expect(table.dropFirst().first?.last == "+1 555 0100, +1 555 0199")
    // The token is not the fake's own: the first Graph request makes it ask the server.
    #expect(try fakeLog(from: 0) == ["(introspect) 200", "/v1.0/users 200"])
    #expect(try fake.requests().last?.query == ["$filter": "startswith(givenName,'Ad')", "$top": "25"])

    let show = try await tokenctl(["graph", "users", "show", "ada@contoso.test", "--account", "graph-local:ada"])
    #expect(show.status == 0, "\(show.stderr)")
    #expect(
      show.stdout == """
        Name:                Ada Lovelace
        Given name:          Ada
        Surname:             Lovelace
        User principal name: ada@contoso.test
        Mail:                ada@contoso.test
        Business phones:     +1 555 0100
        Mobile phone:        +1 555 0199
        Job title:           Analyst
        Office:              London
        Id:                  u-ada

        """)

    let me = try await tokenctl(["graph", "me", "--account", "graph-local:ada"])
    #expect(me.status == 0, "\(me.stderr)")
    #expect(me.stdout == show.stdout, "the fake's signed-in user is Ada")
    // The same token again: the introspection answer is remembered, and the store's
    // token was not touched.
    #expect(try fakeLog(from: 2) == ["/v1.0/users/ada%40contoso.test 200", "/v1.0/me 200"])
    #expect(try stored().tokens == signedIn.tokens)

    // Expired in the store: tokenctl refreshes at the real server before calling Graph,
    // so Graph sees only the new token (introspected active), never a 401.
    var expired = signedIn
    expired.tokens.expiresAt = Date().addingTimeInterval(-60)
    try store.save(expired.account, tokens: expired.tokens)
    let again = try await tokenctl(["graph", "users", "search", "Ada", "--account", "graph-local:ada"])
    #expect(again.status == 0, "\(again.stderr)")
    #expect(rows(again.stdout).dropFirst().map { $0.first } == ["Ada Lovelace", "Adam Smith"])
    let refreshed = try stored()
    #expect(refreshed.tokens.accessToken != signedIn.tokens.accessToken)
    #expect(refreshed.tokens.refreshToken != signedIn.tokens.refreshToken, "the server rotates refresh tokens")
    #expect(refreshed.tokens.expiresAt.map { $0 > Date() } == true)
    #expect(try fakeLog(from: 4) == ["(introspect) 200", "/v1.0/users 200"])
    #expect(try introspections() == [true, true])
  }

  @Test func aTokenTheServerDoesNotKnowIsRefusedThenRefreshedAndTheSearchRetried() async throws {
    try await signIn()
    // Unexpired but unknown to the server (as after a revocation tokenctl did not see):
    // only Graph's 401 can tell tokenctl to refresh.
    var forged = try stored()
    forged.tokens.accessToken = "not-issued-by-the-server"
    try store.save(forged.account, tokens: forged.tokens)
    let search = try await tokenctl(["graph", "users", "search", "Adele", "--account", "graph-local:ada"])
    #expect(search.status == 0, "\(search.stderr)")
    #expect(rows(search.stdout).dropFirst().map { $0.first } == ["Adele Vance"])
    #expect(
      try fakeLog(from: 0) == ["(introspect) 200", "/v1.0/users 401", "(introspect) 200", "/v1.0/users 200"])
    #expect(try introspections() == [false, true])
    #expect(try stored().tokens.accessToken != forged.tokens.accessToken)
  }

  /// The `active` answers of the introspection calls the fake made, in order.
  func introspections() throws -> [Bool] {
    let text = try String(contentsOf: fake.directory.appendingPathComponent("requests.log"), encoding: .utf8)
    return try text.split(separator: "\n").compactMap { line in
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      return object?["path"] as? String == "(introspect)" ? object?["active"] as? Bool : nil
    }
  }
}
