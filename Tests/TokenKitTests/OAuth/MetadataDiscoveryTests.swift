import Foundation
import TestSupport
import Testing
import TokenKit

/// A discovery document for `issuer`, with `changes` applied (nil removes a member).
func discoveryDocument(issuer: String, _ changes: [String: String?] = [:]) -> String {
  var members: [String: String] = [
    "issuer": issuer, "authorization_endpoint": "\(issuer)/authorize", "token_endpoint": "\(issuer)/token",
    "device_authorization_endpoint": "\(issuer)/device", "revocation_endpoint": "\(issuer)/revoke",
    "userinfo_endpoint": "\(issuer)/userinfo", "jwks_uri": "\(issuer)/jwks",
  ]
  for (name, value) in changes { members[name] = value }
  let encoded = members.sorted { $0.key < $1.key }.map { name, value in
    "\"\(name)\":\"\(value.replacingOccurrences(of: "/", with: "\\/"))\""
  }
  return "{" + encoded.joined(separator: ",") + #","code_challenge_methods_supported":["S256"]}"#
}

@Suite struct DiscoveryMetadataTests {
  static func metadata(
    _ body: String, expectedIssuer: String = "https://id.example"
  ) throws(AuthorizationServiceError) -> AuthorizationServerMetadata {
    try AuthorizationServerMetadata(json: Array(body.utf8), expectedIssuer: expectedIssuer)
  }

  static func problem(_ body: String, expectedIssuer: String = "https://id.example") -> String? {
    do {
      _ = try metadata(body, expectedIssuer: expectedIssuer)
      return nil
    } catch {
      guard case .malformedResponse(let message) = error else { return "not malformed: \(error)" }
      return message
    }
  }

  @Test func decodesADocument() throws {
    let body =
      discoveryDocument(issuer: "https://id.example").dropLast()
      + #","authorization_response_iss_parameter_supported":true,"grant_types_supported":["authorization_code","refresh_token"]}"#
    let metadata = try Self.metadata(String(body))
    #expect(metadata.issuer == "https://id.example")
    #expect(metadata.endpoints.issuer == "https://id.example")
    #expect(metadata.endpoints.token.absoluteString == "https://id.example/token")
    #expect(metadata.endpoints.authorization?.absoluteString == "https://id.example/authorize")
    #expect(metadata.endpoints.deviceAuthorization?.absoluteString == "https://id.example/device")
    #expect(metadata.endpoints.revocation?.absoluteString == "https://id.example/revoke")
    #expect(metadata.endpoints.userinfo?.absoluteString == "https://id.example/userinfo")
    #expect(metadata.endpoints.jwks?.absoluteString == "https://id.example/jwks")
    #expect(metadata.jwksURI == metadata.endpoints.jwks)
    #expect(metadata.codeChallengeMethods == ["S256"])
    #expect(metadata.authorizationResponseIssParameterSupported)
    #expect(metadata.grantTypes == ["authorization_code", "refresh_token"])
  }

  @Test func optionalEndpointsMayBeAbsent() throws {
    let metadata = try Self.metadata(
      discoveryDocument(
        issuer: "https://id.example",
        [
          "authorization_endpoint": nil, "device_authorization_endpoint": nil, "revocation_endpoint": nil,
          "userinfo_endpoint": nil, "jwks_uri": nil,
        ]))
    #expect(metadata.endpoints.authorization == nil)
    #expect(metadata.endpoints.revocation == nil)
    #expect(metadata.jwksURI == nil)
    #expect(!metadata.authorizationResponseIssParameterSupported)
  }

  @Test(arguments: ["true", "\"true\""])
  func readsTheIssParameterFlag(value: String) throws {
    let body =
      discoveryDocument(issuer: "https://id.example").dropLast()
      + #","authorization_response_iss_parameter_supported":\#(value)}"#
    #expect(try Self.metadata(String(body)).authorizationResponseIssParameterSupported)
  }

  @Test(arguments: ["https://evil.example", "https://id.example/", "https://ID.example", "http://id.example"])
  func refusesADocumentForAnotherIssuer(issuer: String) {
    #expect(throws: AuthorizationServiceError.issuerMismatch(named: issuer, asked: "https://id.example")) {
      try Self.metadata(discoveryDocument(issuer: issuer))
    }
  }

  /// The same server spelt another way is told from another server: what
  /// differs is said, and it is not blamed on the server.
  @Test func anIssuerSpeltAnotherWayIsToldFromAnotherServer() {
    let action = "discover the endpoints of https://id.example/"
    let slash = TokenKitError(.issuerMismatch(named: "https://id.example", asked: "https://id.example/"), while: action)
    #expect(slash.code == .notConfigured)
    #expect(slash.message.contains("(the server's has no trailing slash)"), "\(slash.message)")
    #expect(slash.remedy == .nameIssuer("https://id.example"))
    let other = TokenKitError(
      .issuerMismatch(named: "https://evil.example", asked: "https://id.example"), while: action)
    #expect(other.code == .serverError && other.remedy == nil)
  }

  @Test func refusesADocumentWithoutIssuerOrTokenEndpoint() {
    #expect(
      Self.problem(discoveryDocument(issuer: "https://id.example", ["issuer": nil]))?.contains("no issuer") == true)
    #expect(
      Self.problem(discoveryDocument(issuer: "https://id.example", ["token_endpoint": nil]))?.contains(
        "no token_endpoint") == true)
    #expect(Self.problem("[]")?.contains("not a JSON object") == true)
    #expect(Self.problem("")?.contains("empty") == true)
  }

  @Test(arguments: [
    ("token_endpoint", "http://id.example/token"),
    ("authorization_endpoint", "http://id.example/authorize"),
    ("jwks_uri", "http://id.example/jwks"),
    ("revocation_endpoint", "http://10.0.0.1/revoke"),
    ("device_authorization_endpoint", "http://localhost.evil.example/device"),
  ])
  func refusesPlainHTTPEndpoints(name: String, url: String) {
    let message = Self.problem(discoveryDocument(issuer: "https://id.example", [name: url]))
    #expect(message?.contains("unsafe") == true)
    #expect(message?.contains(name) == true)
  }

  @Test(arguments: ["ftp://id.example/token", "javascript:alert(1)", "not a url"])
  func refusesNonHTTPEndpoints(url: String) {
    #expect(Self.problem(discoveryDocument(issuer: "https://id.example", ["token_endpoint": url])) != nil)
  }

  @Test(arguments: ["http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080"])
  func allowsPlainHTTPOnLoopback(issuer: String) throws {
    let metadata = try Self.metadata(discoveryDocument(issuer: issuer), expectedIssuer: issuer)
    #expect(metadata.endpoints.token.absoluteString == "\(issuer)/token")
  }

  @Test(arguments: [
    (
      "https://id.example",
      [
        "https://id.example/.well-known/openid-configuration",
        "https://id.example/.well-known/oauth-authorization-server",
      ]
    ),
    (
      "https://id.example/",
      [
        "https://id.example/.well-known/openid-configuration",
        "https://id.example/.well-known/oauth-authorization-server",
      ]
    ),
    (
      "https://id.example/realms/corp",
      [
        "https://id.example/realms/corp/.well-known/openid-configuration",
        "https://id.example/.well-known/oauth-authorization-server/realms/corp",
      ]
    ),
    (
      "https://id.example/tenant/v2.0/",
      [
        "https://id.example/tenant/v2.0/.well-known/openid-configuration",
        "https://id.example/.well-known/oauth-authorization-server/tenant/v2.0",
      ]
    ),
    (
      "http://127.0.0.1:8080/t",
      [
        "http://127.0.0.1:8080/t/.well-known/openid-configuration",
        "http://127.0.0.1:8080/.well-known/oauth-authorization-server/t",
      ]
    ),
    (
      "http://[::1]:8080/t",
      [
        "http://[::1]:8080/t/.well-known/openid-configuration",
        "http://[::1]:8080/.well-known/oauth-authorization-server/t",
      ]
    ),
  ])
  func discoveryURLs(issuer: String, expected: [String]) throws {
    let urls = AuthorizationServerMetadata.discoveryURLs(for: try #require(URL(string: issuer)))
    #expect(urls.map(\.absoluteString) == expected)
  }
}

@Suite struct DiscoveryWithCacheTests {
  typealias T = ScriptedTransport
  static let issuer = URL(string: "https://id.example/realms/corp")!
  static var issuerText: String { issuer.absoluteString }
  static let oidcPath = "/realms/corp/.well-known/openid-configuration"
  static let rfc8414Path = "/.well-known/oauth-authorization-server/realms/corp"

  static func document(token: String = "token") -> [UInt8] {
    Array(discoveryDocument(issuer: issuerText, ["token_endpoint": "\(issuerText)/\(token)"]).utf8)
  }

  @Test func aFreshCacheIsUsedWithoutARequest() async throws {
    let clock = TestClock()
    let cache = MemoryDiscoveryCache()
    cache.store(
      issuer: Self.issuerText, document: Self.document(token: "cached"), fetchedAt: clock.now.addingTimeInterval(-3600))
    let transport = ScriptedTransport(responses: [])
    let discovery = MetadataDiscovery(transport: transport, cache: cache, clock: clock)
    let metadata = try await discovery.metadata(for: Self.issuer)
    #expect(metadata.endpoints.token.absoluteString == "\(Self.issuerText)/cached")
    #expect(transport.requestCount == 0)
  }

  @Test func aStaleCacheIsFetchedAgainAndReplaced() async throws {
    let clock = TestClock()
    let cache = MemoryDiscoveryCache()
    cache.store(
      issuer: Self.issuerText, document: Self.document(token: "old"),
      fetchedAt: clock.now.addingTimeInterval(-25 * 3600))
    let transport = ScriptedTransport(responses: [HTTPResponse(status: 200, body: Self.document(token: "new"))])
    let discovery = MetadataDiscovery(transport: transport, cache: cache, clock: clock)
    let metadata = try await discovery.metadata(for: Self.issuer)
    #expect(metadata.endpoints.token.absoluteString == "\(Self.issuerText)/new")
    #expect(transport.requestCount == 1)
    let request = try #require(transport.requests.first)
    #expect(request.method == "GET")
    #expect(request.url.path() == Self.oidcPath)
    #expect(request.header("Accept") == "application/json")
    let stored = try #require(cache.load(issuer: Self.issuerText))
    #expect(stored.fetchedAt == clock.now)
    #expect(stored.document == Self.document(token: "new"))
    // Now fresh: the next lookup stays off the network.
    _ = try await discovery.metadata(for: Self.issuer)
    #expect(transport.requestCount == 1)
  }

  @Test func maximumAgeIsConfigurable() async throws {
    let clock = TestClock()
    let cache = MemoryDiscoveryCache()
    cache.store(
      issuer: Self.issuerText, document: Self.document(token: "old"), fetchedAt: clock.now.addingTimeInterval(-120))
    let transport = ScriptedTransport(responses: [HTTPResponse(status: 200, body: Self.document(token: "new"))])
    let discovery = MetadataDiscovery(transport: transport, cache: cache, clock: clock, maximumAge: 60)
    #expect(try await discovery.metadata(for: Self.issuer).endpoints.token.lastPathComponent == "new")
  }

  @Test func aStaleCacheOutlivesANetworkFailure() async throws {
    let clock = TestClock()
    let cache = MemoryDiscoveryCache()
    cache.store(
      issuer: Self.issuerText, document: Self.document(token: "old"),
      fetchedAt: clock.now.addingTimeInterval(-30 * 86400))
    let transport = ScriptedTransport(script: [.failure(TransportError(.dnsFailure, "id.example does not resolve"))])
    let discovery = MetadataDiscovery(transport: transport, cache: cache, clock: clock)
    let metadata = try await discovery.metadata(for: Self.issuer)
    #expect(metadata.endpoints.token.lastPathComponent == "old")
    #expect(transport.requestCount == 1)
    #expect(cache.stores == 1)
  }

  @Test func aNetworkFailureWithoutACacheIsThrown() async throws {
    let transport = ScriptedTransport(script: [.failure(TransportError(.timedOut, "timed out"))])
    let discovery = MetadataDiscovery(transport: transport, cache: MemoryDiscoveryCache(), clock: TestClock())
    await #expect(throws: AuthorizationServiceError.transport(TransportError(.timedOut, "timed out"))) {
      try await discovery.metadata(for: Self.issuer)
    }
  }

  @Test func notFoundAtTheOpenIDLocationFallsBackToRFC8414() async throws {
    let cache = MemoryDiscoveryCache()
    let transport = ScriptedTransport { request throws(TransportError) in
      request.url.path() == Self.rfc8414Path
        ? HTTPResponse(status: 200, body: Self.document(token: "oauth"))
        : T.text(404, "Not Found", contentType: "text/html")
    }
    let discovery = MetadataDiscovery(transport: transport, cache: cache, clock: TestClock())
    let metadata = try await discovery.metadata(for: Self.issuer)
    #expect(metadata.endpoints.token.lastPathComponent == "oauth")
    #expect(transport.requests.map { $0.url.path() } == [Self.oidcPath, Self.rfc8414Path])
    #expect(cache.load(issuer: Self.issuerText)?.document == Self.document(token: "oauth"))
  }

  @Test func notFoundEverywhereIsThrown() async throws {
    let transport = ScriptedTransport { _ throws(TransportError) in HTTPResponse(status: 404) }
    let discovery = MetadataDiscovery(transport: transport, cache: nil, clock: TestClock())
    await #expect(throws: AuthorizationServiceError.httpStatus(404, retryAfter: nil, mediaType: nil)) {
      try await discovery.metadata(for: Self.issuer)
    }
    #expect(transport.requestCount == 2)
  }

  @Test func anotherFailureAtTheOpenIDLocationDoesNotFallBack() async throws {
    let transport = ScriptedTransport(responses: [
      HTTPResponse(status: 500), HTTPResponse(status: 200, body: Self.document()),
    ])
    let discovery = MetadataDiscovery(transport: transport, cache: nil, clock: TestClock())
    await #expect(throws: AuthorizationServiceError.httpStatus(500, retryAfter: nil, mediaType: nil)) {
      try await discovery.metadata(for: Self.issuer)
    }
    #expect(transport.requestCount == 1)
  }

  @Test func aDocumentForAnotherIssuerIsRefusedAndNotCached() async throws {
    let cache = MemoryDiscoveryCache()
    let transport = ScriptedTransport(responses: [
      HTTPResponse(status: 200, body: Array(discoveryDocument(issuer: "https://evil.example").utf8))
    ])
    let discovery = MetadataDiscovery(transport: transport, cache: cache, clock: TestClock())
    let error = await #expect(throws: AuthorizationServiceError.self) { try await discovery.metadata(for: Self.issuer) }
    #expect(error == .issuerMismatch(named: "https://evil.example", asked: Self.issuer.absoluteString))
    #expect(cache.stores == 0)
  }

  @Test func aCachedDocumentForAnotherIssuerIsNotTrusted() async throws {
    let clock = TestClock()
    let cache = MemoryDiscoveryCache()
    cache.store(
      issuer: Self.issuerText, document: Array(discoveryDocument(issuer: "https://evil.example").utf8),
      fetchedAt: clock.now)
    let transport = ScriptedTransport(responses: [HTTPResponse(status: 200, body: Self.document(token: "real"))])
    let discovery = MetadataDiscovery(transport: transport, cache: cache, clock: clock)
    #expect(try await discovery.metadata(for: Self.issuer).endpoints.token.lastPathComponent == "real")
    #expect(transport.requestCount == 1)
  }

  @Test func withoutACacheEveryLookupFetches() async throws {
    let transport = ScriptedTransport { _ throws(TransportError) in HTTPResponse(status: 200, body: Self.document()) }
    let discovery = MetadataDiscovery(transport: transport, cache: nil, clock: TestClock())
    _ = try await discovery.metadata(for: Self.issuer)
    _ = try await discovery.metadata(for: Self.issuer)
    #expect(transport.requestCount == 2)
  }

  @Test func serviceConfigurationResolvesADiscoveredType() async throws {
    let transport = ScriptedTransport { _ throws(TransportError) in
      HTTPResponse(
        status: 200,
        body: Array(
          (discoveryDocument(issuer: Self.issuerText).dropLast()
            + #","authorization_response_iss_parameter_supported":true}"#).utf8))
    }
    let descriptor = EndpointDescriptor(
      id: "kc", displayName: "Keycloak", endpoints: .discovered(issuer: Self.issuer), clientID: "app")
    let configuration = try await ServiceConfiguration.resolve(
      descriptor, discovery: MetadataDiscovery(transport: transport, cache: nil, clock: TestClock()))
    #expect(configuration.issuer == Self.issuerText)
    #expect(configuration.issuerInAuthorizationResponse)
    #expect(configuration.endpoints.token.absoluteString == "\(Self.issuerText)/token")
    #expect(configuration.client.id == "app")
  }

  @Test func serviceConfigurationReportsAFailedDiscovery() async throws {
    let transport = ScriptedTransport(script: [.failure(TransportError(.connectionFailed, "refused"))])
    let descriptor = EndpointDescriptor(
      id: "kc", displayName: "Keycloak", endpoints: .discovered(issuer: Self.issuer), clientID: "app")
    let error = await #expect(throws: TokenKitError.self) {
      try await ServiceConfiguration.resolve(
        descriptor, discovery: MetadataDiscovery(transport: transport, cache: nil, clock: TestClock()))
    }
    #expect(error?.code == .networkFailure)
    #expect(error?.message.contains("discover the endpoints of \(Self.issuerText)") == true)
  }

  @Test(arguments: [
    "http://id.example", "https://id.example?x=1", "https://id.example#f", "ftp://id.example",
    // Names in someone else's DNS zone that merely start like a loopback address.
    "http://127.attacker.example", "http://127.0.0.1.attacker.example", "http://localhost.attacker.example",
    "http://[::ffff:127.0.0.1]",
  ])
  func serviceConfigurationRefusesAnUnsafeUserIssuer(issuer: String) async throws {
    let transport = ScriptedTransport(responses: [])
    let descriptor = EndpointDescriptor(
      id: "oidc", displayName: "OIDC", endpoints: .discoveredFromUserIssuer, clientID: "app")
    let error = await #expect(throws: TokenKitError.self) {
      try await ServiceConfiguration.resolve(
        descriptor, issuer: issuer, discovery: MetadataDiscovery(transport: transport, cache: nil, clock: TestClock()))
    }
    #expect(error?.code == .notConfigured)
    #expect(transport.requestCount == 0)
  }
}
