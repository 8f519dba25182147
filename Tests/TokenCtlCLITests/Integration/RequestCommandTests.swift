import Foundation
import NativeAppSupport
import Synchronization
import TestSupport
import Testing
import TokenCtlCLI
import TokenKit
import TokenStoreTesting

/// `tokenctl request`: the URL it builds, the token it sends and where, what it does with
/// 401, 429 and error statuses, and what it prints. Against our stub server through the
/// real transport where the server's behaviour matters, and a scripted transport where
/// the point is what was (or was not) sent.
@Suite struct RequestCommandTests {
  /// Started once, by the first test that asks, without blocking a thread while it starts.
  static let stub = Task { try await StubServer.start() }

  let backing = InMemoryTokenStore.Backing()
  let output = CapturedOutput()

  /// An account of type `type` whose tokens are `tokens`.
  func seed(_ type: String, tokens: TokenSet) throws -> AccountKey {
    let account = Account(
      type: type, id: "sub-1", name: "ada", group: "default", createdAt: Date(), updatedAt: Date(),
      clientID: "client")
    try InMemoryTokenStore(group: "default", backing: backing).save(account, tokens: tokens)
    return account.key
  }

  func stored(_ key: AccountKey) throws -> TokenSet {
    try #require(try InMemoryTokenStore(group: "default", backing: backing).load(key)).tokens
  }

  func registry(_ descriptor: EndpointDescriptor) throws -> AccountTypeRegistry {
    var registry = AccountTypeRegistry()
    try registry.register(descriptor, source: "test")
    return registry
  }

  func run(
    _ arguments: String..., registry: AccountTypeRegistry, transport: any HTTPTransport,
    sleep: @escaping @Sendable (Double) async throws -> Void = { _ in }
  ) async -> Int32 {
    await run(arguments: arguments, registry: registry, transport: transport, sleep: sleep)
  }

  func run(
    arguments: [String], registry: AccountTypeRegistry, transport: any HTTPTransport,
    sleep: @escaping @Sendable (Double) async throws -> Void = { _ in }
  ) async -> Int32 {
    let backing = backing
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-request-\(UUID())")
    let context = CLIContext(
      registry: registry, makeStore: { InMemoryTokenStore(group: $0, backing: backing) }, clock: SystemClock(),
      environment: ["HOME": scratch.path], output: output, transport: transport, sleep: sleep)
    return await TokenCtl.main(arguments: ["request"] + arguments, context: context)
  }

  // MARK: Against the stub server

  /// A type whose API is a stub tenant, so that resolution must keep a base path. Tests
  /// run in parallel: each has its tenant, whose request counts are its own.
  func stubType(_ stub: StubServer, tenant: String = "t1") throws -> EndpointDescriptor {
    EndpointDescriptor(
      id: "stub", displayName: "Stub",
      endpoints: .fixed(
        Endpoints(authorization: nil, token: try #require(URL(string: "\(stub.baseURL)/tenants/\(tenant)/token")))),
      clientID: "client", apiBase: URL(string: "\(stub.baseURL)/tenants/\(tenant)/"))
  }

  func issued(_ stub: StubServer) async throws -> (access: String, refresh: String) {
    let family = try await stub.admin("/_admin/issue", method: "POST")
    return (try #require(family["access_token"] as? String), try #require(family["refresh_token"] as? String))
  }

  /// ada of the stub's type, with a family the stub issued, valid for an hour.
  func seedIssued(_ stub: StubServer) async throws -> (access: String, refresh: String) {
    let family = try await issued(stub)
    _ = try seed(
      "stub",
      tokens: TokenSet(
        accessToken: family.access, refreshToken: family.refresh, expiresAt: Date().addingTimeInterval(3600)))
    return family
  }

  func requests(_ stub: StubServer, to path: String) async throws -> Int {
    try #require(try await stub.admin("/_admin/stats")["requests"] as? [String: Int])[path] ?? 0
  }

  @Test func aRejectedTokenIsRefreshedOnceAndTheRequestRetried() async throws {
    let stub = try await Self.stub.value
    let family = try await issued(stub)
    // A token the server does not know, which the store still thinks valid for an hour.
    let before = TokenSet(
      accessToken: "revoked-access-\(UUID())", refreshToken: family.refresh, expiresAt: Date().addingTimeInterval(3600))
    let key = try seed("stub", tokens: before)
    let userinfoBefore = try await requests(stub, to: "/tenants/retry/userinfo")

    let status = await run(
      "stub:ada", "userinfo", registry: try registry(try stubType(stub, tenant: "retry")),
      transport: CurlHTTPTransport())

    #expect(status == 0, "\(output.stderr)")
    #expect(output.stdout.contains("\"sub\": \"stub-user\"") || output.stdout.contains("\"sub\":\"stub-user\""))
    #expect(try await requests(stub, to: "/tenants/retry/userinfo") == userinfoBefore + 2, "a 401, then the retry")
    let after = try stored(key)
    #expect(after.accessToken != before.accessToken && after.refreshToken != family.refresh, "rotated and stored")
    #expect(try await stub.admin("/_admin/check?refresh_token=\(family.refresh)")["status"] as? String == "used")
    #expect(!output.stderr.contains(family.refresh) && !output.stderr.contains(after.accessToken))
    #expect(!output.stdout.contains(after.accessToken))
  }

  @Test func anHTTPErrorPrintsTheBodyAndExits16() async throws {
    let stub = try await Self.stub.value
    let family = try await seedIssued(stub)

    let status = await run(
      "stub:ada", "/no/such/thing?id=private", registry: try registry(try stubType(stub)),
      transport: CurlHTTPTransport())

    #expect(status == 16)
    #expect(output.stdout.contains("stub:"), "the body: \(output.stdout)")
    #expect(output.stderr == "tokenctl: HTTP 404 from 127.0.0.1\n")
    #expect(!output.stderr.contains(family.access))
  }

  @Test func includeAndJSONShowStatusAndHeaders() async throws {
    let stub = try await Self.stub.value
    let family = try await seedIssued(stub)
    let registry = try registry(try stubType(stub))

    #expect(await run("stub:ada", "/userinfo", "--include", registry: registry, transport: CurlHTTPTransport()) == 0)
    let included = output.stdout
    #expect(included.hasPrefix("HTTP 200\n"), "\(included)")
    let parts = included.components(separatedBy: "\n\n")
    #expect(parts.count == 2)
    #expect(parts[0].split(separator: "\n").dropFirst().allSatisfy { $0.contains(": ") })
    #expect(parts[0].lowercased().contains("content-type: application/json"))
    #expect(parts[1].contains("stub-user"))

    let json = CapturedOutput()
    let backing = backing
    let context = CLIContext(
      registry: registry, makeStore: { InMemoryTokenStore(group: $0, backing: backing) }, clock: SystemClock(),
      environment: ["HOME": "/nonexistent"], output: json)
    #expect(await TokenCtl.main(arguments: ["request", "stub:ada", "/userinfo", "--json"], context: context) == 0)
    let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    #expect(document["format"] as? Int == 1)
    #expect(document["status"] as? Int == 200)
    let headers = try #require(document["headers"] as? [String: String])
    #expect(headers["content-type"]?.hasPrefix("application/json") == true)
    let body = try #require(document["body"] as? [String: Any])
    #expect(body["sub"] as? String == "stub-user")
    #expect(!json.stdout.contains(family.access))
  }

  @Test func aNetworkFailureNamesTheHostOnly() async throws {
    // Port 9 (discard) on loopback: nothing listens there on a test machine.
    let type = EndpointDescriptor(
      id: "dead", displayName: "Dead",
      endpoints: .fixed(Endpoints(authorization: nil, token: try #require(URL(string: "http://127.0.0.1:9/token")))),
      clientID: "client", apiBase: URL(string: "http://127.0.0.1:9/api"))
    _ = try seed("dead", tokens: TokenSet(accessToken: "SECRET-A", expiresAt: Date().addingTimeInterval(3600)))

    let status = await run(
      "dead:ada", "/private/path?key=hidden", registry: try registry(type),
      transport: CurlHTTPTransport(connectTimeout: .seconds(2), totalTimeout: .seconds(2)))

    #expect(status == 10, "\(output.stderr)")
    #expect(output.stderr.contains("127.0.0.1"))
    #expect(!output.stderr.contains("private") && !output.stderr.contains("hidden"))
    #expect(!output.stderr.contains("SECRET"))
  }

  // MARK: Against a scripted transport

  static let api = EndpointDescriptor(
    id: "api", displayName: "API",
    endpoints: .fixed(Endpoints(authorization: nil, token: URL(string: "https://login.example.test/token")!)),
    clientID: "client", apiBase: URL(string: "https://api.example.test/v1.0"))

  func seedAPI() throws -> TokenSet {
    let tokens = TokenSet(
      accessToken: "SECRET-ACCESS-\(UUID())", refreshToken: "SECRET-REFRESH-\(UUID())",
      expiresAt: Date().addingTimeInterval(3600))
    _ = try seed("api", tokens: tokens)
    return tokens
  }

  @Test(arguments: [
    ("/me", "https://api.example.test/v1.0/me"),
    ("me", "https://api.example.test/v1.0/me"),
    ("/me/messages?$top=5", "https://api.example.test/v1.0/me/messages?$top=5"),
    ("https://api.example.test/beta/me", "https://api.example.test/beta/me"),
  ])
  func relativeURLsKeepTheBasePath(url: String, expected: String) async throws {
    let tokens = try seedAPI()
    let transport = ScriptedTransport(responses: [ScriptedTransport.json(200, "{\"id\": 1}")])

    #expect(await run("api:ada", url, registry: try registry(Self.api), transport: transport) == 0)

    let sent = try #require(transport.requests.first)
    #expect(sent.url.absoluteString == expected)
    #expect(sent.method == "GET" && sent.request.body == nil)
    #expect(sent.header("Authorization") == "Bearer \(tokens.accessToken)")
    #expect(output.stdout == "{\"id\": 1}")
  }

  @Test func aTypeWithoutAPIBaseNeedsAnAbsoluteURL() async throws {
    var type = Self.api
    type.apiBase = nil
    _ = try seedAPI()
    let transport = ScriptedTransport(responses: [])

    #expect(await run("api:ada", "/me", registry: try registry(type), transport: transport) == 14)
    #expect(output.stderr.contains("no API base"), "\(output.stderr)")
    #expect(transport.requestCount == 0)
  }

  @Test func aForeignHostGetsNoTokenUnlessAllowed() async throws {
    let tokens = try seedAPI()
    let refused = ScriptedTransport(responses: [])

    #expect(
      await run("api:ada", "https://evil.example/steal", registry: try registry(Self.api), transport: refused) == 14)
    #expect(refused.requestCount == 0, "nothing is sent, not even without the token")
    #expect(
      output.stderr.contains("does not serve evil.example") && output.stderr.contains("--allow-host evil.example"))
    #expect(!output.stderr.contains(tokens.accessToken))

    let allowed = ScriptedTransport(responses: [ScriptedTransport.text(200, "ok")])
    let status = await run(
      "api:ada", "https://Evil.Example/steal", "--allow-host", "EVIL.example", registry: try registry(Self.api),
      transport: allowed)
    #expect(status == 0)
    #expect(allowed.requests.map { $0.header("Authorization") } == ["Bearer \(tokens.accessToken)"])
  }

  @Test(arguments: [
    // Another port of the served host, with and without --allow-host naming the host.
    ("https://api.example.test:8443/v1.0/me", [String]()),
    ("https://api.example.test:8443/v1.0/me", ["--allow-host", "api.example.test"]),
    // An allowed host on another port, and plain http to an allowed loopback port's neighbour.
    ("https://evil.example:444/", ["--allow-host", "evil.example"]),
    ("http://127.0.0.1:9998/", ["--allow-host", "http://127.0.0.1:9999"]),
    ("http://127.0.0.1:9999/", ["--allow-host", "127.0.0.1:9999"]),
  ])
  func anotherPortOrSchemeOfAnAllowedHostGetsNoToken(url: String, options: [String]) async throws {
    let tokens = try seedAPI()
    let refused = ScriptedTransport(responses: [])
    let status = await run(
      arguments: ["api:ada", url] + options, registry: try registry(Self.api), transport: refused)
    #expect(status == 14, "\(output.stderr)")
    #expect(refused.requestCount == 0)
    #expect(output.stderr.contains("does not serve"), "\(output.stderr)")
    #expect(!output.stderr.contains(tokens.accessToken))
  }

  @Test(arguments: [
    ("https://api.example.test:8443/v1.0/me", "api.example.test:8443"),
    ("http://127.0.0.1:9999/x", "http://127.0.0.1:9999"),
    ("https://[::1]:8443/x", "[::1]:8443"),
  ])
  func theExactOriginCanBeAllowed(url: String, allowed: String) async throws {
    let tokens = try seedAPI()
    let transport = ScriptedTransport(responses: [ScriptedTransport.text(200, "ok")])
    let status = await run(
      arguments: ["api:ada", url, "--allow-host", allowed], registry: try registry(Self.api), transport: transport)
    #expect(status == 0, "\(output.stderr)")
    #expect(transport.requests.map { $0.header("Authorization") } == ["Bearer \(tokens.accessToken)"])
  }

  @Test func tooManyRequestsWaitsForRetryAfter() async throws {
    _ = try seedAPI()
    let transport = ScriptedTransport(responses: [
      HTTPResponse(status: 429, headers: [HTTPHeader("Retry-After", "7")], body: Array("slow down".utf8)),
      ScriptedTransport.json(200, "[1, 2]"),
    ])
    let waits = Mutex<[Double]>([])

    let status = await run(
      "api:ada", "/items", registry: try registry(Self.api), transport: transport,
      sleep: { seconds in waits.withLock { $0.append(seconds) } })

    #expect(status == 0)
    #expect(waits.withLock { $0 } == [7])
    #expect(transport.requestCount == 2)
    #expect(output.stdout == "[1, 2]")
  }

  @Test func dataMakesAPostWithAGuessedContentType() async throws {
    _ = try seedAPI()
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-body-\(UUID()).json")
    try Data("  {\"subject\": \"hi\"}".utf8).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let transport = ScriptedTransport(responses: Array(repeating: ScriptedTransport.text(201, ""), count: 4))
    let registry = try registry(Self.api)

    #expect(await run("api:ada", "/a", "-d", "a=1&b=2", registry: registry, transport: transport) == 0)
    #expect(await run("api:ada", "/b", "-d", "@\(file.path)", registry: registry, transport: transport) == 0)
    #expect(await run("api:ada", "/c", "-X", "patch", "-d", "[]", registry: registry, transport: transport) == 0)
    #expect(
      await run(
        "api:ada", "/d", "-d", "x", "-H", "Content-Type: text/plain", "-H", "If-Match:  \"7\"", registry: registry,
        transport: transport) == 0)

    let sent = transport.requests
    #expect(sent.map(\.method) == ["POST", "POST", "PATCH", "POST"])
    #expect(sent.map(\.bodyText) == ["a=1&b=2", "  {\"subject\": \"hi\"}", "[]", "x"])
    #expect(
      sent.map { $0.header("Content-Type") } == [
        "application/x-www-form-urlencoded", "application/json", "application/json", "text/plain",
      ])
    #expect(sent[3].header("If-Match") == "\"7\"")
  }

  @Test(arguments: [
    ["-H", "Authorization: Bearer mine"],
    ["-H", "authorization:x"],
    ["-H", "X-Evil: a\r\nAuthorization: Bearer mine"],
    ["-H", "X-Evil: a\nHost: evil.example"],
    ["-H", "no colon"],
    ["-H", "Bad Name: x"],
    ["-X", "GET /x"],
  ])
  func badHeadersAndMethodsAreRefusedBeforeAnythingIsSent(arguments: [String]) async throws {
    let tokens = try seedAPI()
    let transport = ScriptedTransport(responses: [])
    let backing = backing
    let context = CLIContext(
      registry: try registry(Self.api), makeStore: { InMemoryTokenStore(group: $0, backing: backing) },
      clock: SystemClock(), environment: ["HOME": "/nonexistent"], output: output, transport: transport)

    let status = await TokenCtl.main(arguments: ["request", "api:ada", "/me"] + arguments, context: context)

    #expect(status == 64, "\(output.stderr)")
    #expect(transport.requestCount == 0)
    #expect(!output.stderr.contains(tokens.accessToken))
  }

  @Test func authorizationHeaderRefusalSaysWhy() async throws {
    _ = try seedAPI()
    let status = await run(
      "api:ada", "/me", "-H", "Authorization: Bearer x", registry: try registry(Self.api),
      transport: ScriptedTransport(responses: []))
    #expect(status == 64)
    #expect(output.stderr.contains("sends the account's token as the Authorization header"), "\(output.stderr)")
  }

  @Test func jsonWrapsNonJSONBodiesAsTextAndJoinsRepeatedHeaders() async throws {
    let tokens = try seedAPI()
    let transport = ScriptedTransport(responses: [
      HTTPResponse(
        status: 503,
        headers: [
          HTTPHeader("Content-Type", "text/plain"), HTTPHeader("Set-Cookie", "a=1"), HTTPHeader("set-cookie", "b=2"),
        ],
        body: Array("{\"not\": \"parsed\"}".utf8))
    ])

    let status = await run("api:ada", "/me", "--json", registry: try registry(Self.api), transport: transport)

    #expect(status == 16)
    let document = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
    #expect(document["status"] as? Int == 503)
    #expect(document["body"] as? String == "{\"not\": \"parsed\"}")
    #expect((document["headers"] as? [String: String])?["set-cookie"] == "a=1, b=2")
    #expect(output.stderr == "tokenctl: HTTP 503 from api.example.test\n")
    #expect(!output.stdout.contains(tokens.accessToken) && !output.stderr.contains(tokens.accessToken))
  }
}
