import Foundation
import NativeAppSupport
import Synchronization
import TestSupport
import Testing
import TokenCtlCLI
import TokenKit
import TokenStoreTesting

/// `tokenctl graph`, in process, against the fake Graph service over real HTTP: a
/// registry whose graph type has its API base and token endpoint on 127.0.0.1, and an
/// in-memory store holding the signed-in account.
@Suite struct GraphCommandTests {
  /// The waits the commands asked for, instead of waiting.
  final class Sleeps: Sendable {
    private let waits = Mutex<[Double]>([])
    func record(_ seconds: Double) { waits.withLock { $0.append(seconds) } }
    var recorded: [Double] { waits.withLock { $0 } }
  }

  /// One fake service, one group, one transport that records what it sent.
  struct World {
    let fake: FakeGraph
    let store: InMemoryTokenStore
    let context: CLIContext
    let output: CapturedOutput
    let transport: ScriptedTransport
    let sleeps: Sleeps

    /// Starts a fake with `arguments`, and stores `accounts` (name, access token).
    init(_ arguments: [String] = [], accounts: [(String, String)] = [("ada@contoso.test", "valid-1")]) async throws {
      fake = try await FakeGraph.start(["--access-token", "valid-1"] + arguments)
      let backing = InMemoryTokenStore.Backing()
      store = InMemoryTokenStore(group: "default", backing: backing)
      for (name, access) in accounts {
        let account = Account(
          type: "graph", id: "oid-\(name)", name: name, group: "default", createdAt: Date(), updatedAt: Date(),
          clientID: "client")
        try store.save(
          account,
          tokens: TokenSet(accessToken: access, refreshToken: "refresh-1", expiresAt: Date().addingTimeInterval(3600)))
      }
      var registry = AccountTypeRegistry()
      try registry.register(
        EndpointDescriptor(
          id: "graph", displayName: "Fake Graph",
          endpoints: .fixed(Endpoints(authorization: nil, token: try #require(URL(string: "\(fake.baseURL)/token")))),
          clientID: "client", apiBase: URL(string: "\(fake.baseURL)/v1.0")),
        source: "test")
      let curl = CurlHTTPTransport(connectTimeout: .seconds(5), totalTimeout: .seconds(5))
      let transport = ScriptedTransport { (request: HTTPRequest) async throws(TransportError) -> HTTPResponse in
        try await curl.send(request)
      }
      let output = CapturedOutput()
      let sleeps = Sleeps()
      let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-graph-home-\(UUID())")
      context = CLIContext(
        registry: registry, makeStore: { InMemoryTokenStore(group: $0, backing: backing) }, clock: SystemClock(),
        environment: ["HOME": scratch.path], output: output, transport: transport,
        readLine: {
          Issue.record("the command must not read the terminal")
          return nil
        },
        sleep: { sleeps.record($0) })
      self.output = output
      self.transport = transport
      self.sleeps = sleeps
    }

    func run(_ arguments: [String]) async -> Int32 {
      await TokenCtl.main(arguments: ["graph"] + arguments, context: context)
    }

    func graphRequests(_ path: String) throws -> [FakeGraph.Request] {
      try fake.requests().filter { $0.path == path }
    }
  }

  @Test func searchPrintsATable() async throws {
    let world = try await World()
    let status = await world.run(["users", "search", "Ada"])
    #expect(status == 0, "\(world.output.stderr)")
    let lines = world.output.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first?.split(separator: " ", omittingEmptySubsequences: true) == ["NAME", "UPN", "MAIL", "PHONES"])
    #expect(lines.count == 3)
    #expect(lines[1].hasPrefix("Ada Lovelace"))
    #expect(lines[1].hasSuffix("+1 555 0100, +1 555 0199"))
    #expect(lines[2].hasPrefix("Adam Smith"))
    let request = try #require(try world.graphRequests("/v1.0/users").first)
    #expect(request.query == ["$filter": "startswith(givenName,'Ada')", "$top": "25"])
  }

  struct Search: Sendable, CustomStringConvertible {
    var prefix: String
    var by: String
    var filter: String
    var found: String
    var description: String { prefix }
  }

  @Test(arguments: [
    Search(prefix: "O'Brien", by: "surname", filter: "startswith(surname,'O''Brien')", found: "Conan O'Brien"),
    Search(prefix: "zoë", by: "givenName", filter: "startswith(givenName,'zoë')", found: "Zoë Åberg"),
    Search(prefix: "Tom & J", by: "displayName", filter: "startswith(displayName,'Tom & J')", found: "Tom & Jerry"),
  ])
  func searchEscapesTheFilter(_ search: Search) async throws {
    let world = try await World()
    let status = await world.run(["users", "search", search.prefix, "--by", search.by])
    #expect(status == 0, "\(world.output.stderr)")
    #expect(world.output.stdout.contains(search.found))
    #expect(try world.graphRequests("/v1.0/users").first?.query["$filter"] == search.filter)
  }

  @Test func searchFollowsThreePages() async throws {
    let world = try await World(["--page-size", "2"])
    let status = await world.run(["users", "search", "Ad", "--top", "10"])
    #expect(status == 0, "\(world.output.stderr)")
    for name in ["Ada Lovelace", "Adam Smith", "Adele Vance", "Adrian Ford", "Adelaide Byron"] {
      #expect(world.output.stdout.contains(name))
    }
    let pages = try world.graphRequests("/v1.0/users")
    #expect(pages.map { $0.query["$skiptoken"] } == [nil, "2", "4"])
    #expect(!world.output.stderr.contains("More users match"))
  }

  @Test func searchStopsAtTop() async throws {
    let world = try await World(["--page-size", "2"])
    let status = await world.run(["users", "search", "Ad", "--top", "3"])
    #expect(status == 0, "\(world.output.stderr)")
    #expect(world.output.stdout.split(separator: "\n").count == 4)
    #expect(try world.graphRequests("/v1.0/users").count == 2)
    #expect(world.output.stderr.contains("More users match"))
  }

  @Test func searchDoesNotFollowANextLinkToAnotherHost() async throws {
    let world = try await World([
      "--page-size", "2", "--foreign-next-link", "https://evil.example/v1.0/users?$skiptoken=2",
    ])
    let status = await world.run(["users", "search", "Ad"])
    #expect(status == 0, "\(world.output.stderr)")
    #expect(world.output.stdout.contains("Adam Smith"))
    #expect(world.output.stderr.contains("evil.example"))
    #expect(!world.transport.requests.contains { $0.url.host() == "evil.example" })
  }

  @Test func searchWaitsAsRetryAfterAsks() async throws {
    let world = try await World(["--throttle", "1"])
    let status = await world.run(["users", "search", "Ada"])
    #expect(status == 0, "\(world.output.stderr)")
    #expect(world.sleeps.recorded == [2])
    #expect(try world.graphRequests("/v1.0/users").map(\.status) == [429, 200])
    #expect(world.output.stdout.contains("Ada Lovelace"))
  }

  @Test func aRejectedTokenIsRefreshedOnceAndTheRequestRetried() async throws {
    let world = try await World(accounts: [("ada@contoso.test", "revoked-at-the-server")])
    let status = await world.run(["users", "search", "Ada"])
    #expect(status == 0, "\(world.output.stderr)")
    #expect(
      try world.fake.requests().map { "\($0.path) \($0.status)" } == [
        "/v1.0/users 401", "/token 200", "/v1.0/users 200",
      ])
    let stored = try #require(try world.store.load(AccountKey(type: "graph", id: "oid-ada@contoso.test")))
    #expect(stored.tokens.accessToken == "fresh-1")
  }

  @Test func anEmptyResultSaysSo() async throws {
    let world = try await World()
    let status = await world.run(["users", "search", "Nobody"])
    #expect(status == 0)
    #expect(world.output.stdout.isEmpty)
    #expect(world.output.stderr == "No users match 'Nobody'.\n")
  }

  @Test func serverTextIsMadeSafeForTheTerminal() async throws {
    let world = try await World()
    let status = await world.run(["users", "search", "Mal"])
    #expect(status == 0)
    #expect(world.output.stdout.contains("Mallory \\u{1b}[31mRed"))
    #expect(!world.output.stdout.contains("\u{1B}"))
  }

  @Test func searchPrintsJSON() async throws {
    let world = try await World()
    let status = await world.run(["users", "search", "Adele", "--json"])
    #expect(status == 0)
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(world.output.stdout.utf8)) as? [String: Any])
    #expect(document["format"] as? Int == 1)
    let users = try #require(document["users"] as? [[String: Any]])
    #expect(users.map { $0["id"] as? String } == ["u-adele"])
    #expect(users.first?["businessPhones"] as? [String] == ["+1 555 0101", "+1 555 0102"])
  }

  @Test func showPrintsTheDetailView() async throws {
    let world = try await World()
    let status = await world.run(["users", "show", "adele@contoso.test"])
    #expect(status == 0, "\(world.output.stderr)")
    let lines = world.output.stdout.split(separator: "\n").map { $0.split(separator: ":", maxSplits: 1) }
    let detail = Dictionary(
      uniqueKeysWithValues: lines.map { (String($0[0]), $0[1].trimmingCharacters(in: .whitespaces)) })
    #expect(detail["Name"] == "Adele Vance")
    #expect(detail["Business phones"] == "+1 555 0101, +1 555 0102")
    #expect(detail["Id"] == "u-adele")
    #expect(detail["Mail"] == nil, "a property Graph sent as null is left out")
  }

  @Test func showOfAnUnknownUserFails() async throws {
    let world = try await World()
    let status = await world.run(["users", "show", "nobody@contoso.test"])
    #expect(status == 11)
    #expect(world.output.stderr.contains("Request_ResourceNotFound"))
  }

  @Test func meShowsTheSignedInUser() async throws {
    let world = try await World()
    #expect(await world.run(["me"]) == 0)
    #expect(world.output.stdout.contains("User principal name:"))
    #expect(world.output.stdout.contains("ada@contoso.test"))
    let before = world.output.stdout.count
    #expect(await world.run(["me", "--json"]) == 0)
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(world.output.stdout.dropFirst(before).utf8)) as? [String: Any])
    #expect((document["user"] as? [String: Any])?["jobTitle"] as? String == "Analyst")
  }

  @Test func revokeSessionsRefusesWithoutATerminal() async throws {
    let world = try await World()
    let status = await world.run(["revoke-sessions"])
    #expect(status == 64)
    #expect(world.output.stderr.contains("--yes"))
    #expect(try world.graphRequests("/v1.0/me/revokeSignInSessions").isEmpty)
  }

  @Test func revokeSessionsWithYes() async throws {
    let world = try await World()
    let status = await world.run(["revoke-sessions", "--yes"])
    #expect(status == 0, "\(world.output.stderr)")
    #expect(try world.graphRequests("/v1.0/me/revokeSignInSessions").map(\.method) == ["POST"])
    #expect(world.output.stdout.contains("tokenctl login graph"))
  }

  @Test func withoutAGraphAccountItSaysHowToSignIn() async throws {
    let world = try await World(accounts: [])
    let status = await world.run(["me"])
    #expect(status == 2)
    #expect(world.output.stderr.contains("tokenctl login graph"))
  }

  @Test func severalGraphAccountsNeedAChoice() async throws {
    let world = try await World(accounts: [("ada@contoso.test", "valid-1"), ("grace@contoso.test", "valid-1")])
    #expect(await world.run(["me"]) == 3)
    #expect(world.output.stderr.contains("graph:oid-grace@contoso.test"))
    #expect(world.output.stderr.contains("graph:oid-ada@contoso.test"))
    #expect(await world.run(["me", "--account", "graph:grace@contoso.test"]) == 0)
  }
}
