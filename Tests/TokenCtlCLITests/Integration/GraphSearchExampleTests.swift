import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit

/// The Graph example (`Examples/GraphSearch`), the program itself, used as its README says:
/// it signs in at the real authorization server through the scripted browser, searches
/// the fake Graph, and leaves the account in the keyring group, where `tokenctl` finds
/// it. Only the endpoints differ from Microsoft's, through the example's own `--issuer`
/// and `--graph-api`: the type, its scopes and its `http://localhost` redirect are the
/// `graph` type's.
@Suite(.serialized) struct GraphSearchExampleTests {
  /// The example built beside `tokenctl` (`swift build --build-tests` builds every target).
  static var example: String {
    URL(fileURLWithPath: TestProcess.tokenctl).deletingLastPathComponent()
      .appendingPathComponent("graph-search-example").path
  }

  /// What the fake Graph answers for "Ad", in its order: name, a tab, mail (Adele has none).
  static let adUsers = """
    Ada Lovelace\tada@contoso.test
    Adam Smith\tadam@contoso.test
    Adele Vance\t
    Adrian Ford\tadrian@contoso.test
    Adelaide Byron\tadelaide@contoso.test

    """

  @Test func printsItsUsage() async throws {
    let result = try await TestProcess.run(Self.example, ["--help"], environment: [:])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout.contains(
        "USAGE: graph-search-example <prefix> [--client-id <id>] [--group <group>] [--issuer <url>] [--graph-api <url>]"
      ))
  }

  @Test func withoutAnAccountOrAClientIDItSaysWhatItNeeds() async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    let setup = RefreshRaceTests.Setup()
    var environment = setup.environment
    environment["GRAPH_CLIENT_ID"] = nil
    let result = try await TestProcess.run(Self.example, ["Ad"], environment: environment)
    #expect(result.status != 0)
    #expect(result.stderr.contains("no Microsoft Graph account yet") && result.stderr.contains("GRAPH_CLIENT_ID"))
  }

  @Test func signsInSearchesAndSharesTheAccountWithTokenctl() async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    let server = try await AuthServer.shared
    let introspection = try #require(try GraphEndToEndTests.endpoints(server)["introspection"])
    let fake = try await FakeGraph.start([
      "--introspect", introspection, "--introspect-client", "\(server.serviceClientID):\(server.serviceClientSecret)",
    ])
    let setup = RefreshRaceTests.Setup()
    try FileManager.default.createDirectory(at: setup.home, withIntermediateDirectories: true)
    var environment = server.browserEnvironment(scratch: setup.home)
    environment["TOKENCTL_GROUP"] = setup.group
    environment["GRAPH_CLIENT_ID"] = try Self.graphClientID(server)
    let store = SecretServiceTokenStore(group: setup.group)
    defer { for listing in (try? store.list(.all)) ?? [] { _ = try? store.remove(listing.account.key) } }
    let arguments = ["--issuer", server.issuer, "--graph-api", "\(fake.baseURL)/v1.0", "Ad"]
    let browserLog = setup.home.appendingPathComponent("browser.log")

    // No account in the group: the example signs in through the browser, then searches.
    let first = try await TestProcess.run(Self.example, arguments, environment: environment)
    #expect(first.status == 0, "\(first.stderr)")
    #expect(first.stdout == Self.adUsers)
    #expect(first.stderr.hasPrefix("Sign in at \(server.baseURL)"))
    let signedIn = try #require(try store.list(AccountQuery(type: "graph")).first?.account)
    #expect(signedIn.name == "ada" && signedIn.issuer == server.issuer)
    #expect(signedIn.clientID == environment["GRAPH_CLIENT_ID"])
    #expect(signedIn.scopes.contains("User.ReadBasic.All"))

    // tokenctl sees the same account in the same group, and hands out its token.
    let list = try await TestProcess.run(TestProcess.tokenctl, ["list", "--json"], environment: environment)
    #expect(list.status == 0, "\(list.stderr)")
    let document = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any]
    let accounts = document?["accounts"] as? [[String: Any]] ?? []
    #expect(
      accounts.map { "\($0["type"] ?? ""):\($0["name"] ?? ""):\($0["group"] ?? "")" } == ["graph:ada:\(setup.group)"])
    // But it hands out no token of it: the example signed in at another issuer than the one
    // tokenctl's own graph type names, and whoever takes the token from tokenctl would send
    // it there. The same refusal as `refresh` (tokenctl-config(5)), and nothing is sent.
    let token = try await TestProcess.run(TestProcess.tokenctl, ["token", "graph:ada"], environment: environment)
    #expect(token.status == 14, "\(token.stderr)")
    #expect(token.stdout.isEmpty)
    #expect(token.stderr.contains(server.issuer), "\(token.stderr)")

    // The account exists now: no browser, the stored token.
    let browsed = try String(contentsOf: browserLog, encoding: .utf8)
    let second = try await TestProcess.run(Self.example, arguments, environment: environment)
    #expect(second.status == 0, "\(second.stderr)")
    #expect(second.stdout == Self.adUsers)
    #expect(second.stderr.isEmpty)
    #expect(try String(contentsOf: browserLog, encoding: .utf8) == browsed, "no browser was opened")

    // Expired: the example refreshes at the server before it calls Graph, under the lock
    // tokenctl takes, and stores the rotated refresh token where tokenctl reads it.
    var expired = try #require(try store.load(signedIn.key))
    expired.tokens.expiresAt = Date().addingTimeInterval(-60)
    try store.save(expired.account, tokens: expired.tokens)
    let third = try await TestProcess.run(Self.example, arguments, environment: environment)
    #expect(third.status == 0, "\(third.stderr)")
    #expect(third.stdout == Self.adUsers)
    let refreshed = try #require(try store.load(signedIn.key))
    #expect(refreshed.tokens.refreshToken != expired.tokens.refreshToken, "the server rotates refresh tokens")
    #expect(refreshed.tokens.expiresAt.map { $0 > Date() } == true)
    #expect(try fake.requests().map(\.status).allSatisfy { $0 == 200 }, "Graph never saw a stale token")
  }

  /// The client id of the server's `graph` client, which registers `http://localhost`.
  static func graphClientID(_ server: AuthServer) throws -> String {
    let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: server.serverJSON)))
    let clients = (json as? [String: Any])?["clients"] as? [String: [String: Any]]
    return try #require(clients?["graph"]?["client_id"] as? String)
  }
}
