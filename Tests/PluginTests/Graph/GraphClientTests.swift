import MicrosoftGraphAccount
import Synchronization
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `GraphClient` over a scripted transport: the address comes from the type's API base,
/// and next-page links are followed only within that service.
@Suite struct GraphClientTests {
  static let base = "https://graph.example.test/v1.0"

  /// The waits a client asked for, instead of waiting.
  final class Sleeps: Sendable {
    private let waits = Mutex<[Double]>([])
    func record(_ seconds: Double) { waits.withLock { $0.append(seconds) } }
    var recorded: [Double] { waits.withLock { $0 } }
  }

  func client(_ transport: ScriptedTransport, sleeps: Sleeps = Sleeps()) throws -> GraphClient {
    var descriptor = MicrosoftGraphPlugin.descriptor
    descriptor.apiBase = URL(string: Self.base)
    descriptor.clientID = "client"
    var registry = AccountTypeRegistry()
    try registry.register(descriptor, source: "test")
    let store = InMemoryTokenStore(group: "default")
    let account = Account(
      type: "graph", id: "oid-1", name: "ada@contoso.test", group: "default", createdAt: Date(), updatedAt: Date(),
      clientID: "client")
    try store.save(
      account, tokens: TokenSet(accessToken: "access-1", refreshToken: "refresh-1", expiresAt: Date() + 3600))
    let manager = AccountManager(
      registry: registry, store: store, transport: transport, clock: SystemClock(), locks: MemoryAccountLocks(),
      discoveryCache: nil)
    let authorized = AuthorizedClient(manager: manager, account: account.key) { sleeps.record($0) }
    return try GraphClient(client: authorized)
  }

  static func page(_ names: [String], next: String?) -> HTTPResponse {
    var object: [String: JSONValue] = [
      "value": .array(names.map { .object(["id": .string("id-\($0)"), "displayName": .string($0)]) })
    ]
    if let next { object["@odata.nextLink"] = .string(next) }
    return ScriptedTransport.json(object: object)
  }

  @Test func thePluginsDescriptorNamesGraph() {
    #expect(MicrosoftGraphPlugin.descriptor.apiBase?.absoluteString == "https://graph.microsoft.com/v1.0")
    #expect(MicrosoftGraphPlugin.descriptor.servedHosts.contains("graph.microsoft.com"))
  }

  @Test func followsNextLinksUntilTheLimit() async throws {
    let transport = ScriptedTransport(responses: [
      Self.page(["a", "b"], next: "\(Self.base)/users?$skiptoken=2"),
      Self.page(["c", "d"], next: "\(Self.base)/users?$skiptoken=4"),
      Self.page(["e", "f"], next: "\(Self.base)/users?$skiptoken=6"),
    ])
    let result = try await client(transport).searchUsers(GraphUserFilter(prefix: "x"), limit: 5)
    #expect(result.users.map(\.displayName) == ["a", "b", "c", "d", "e"])
    #expect(result.hasMore)
    #expect(transport.requestCount == 3)
    #expect(transport.requests[0].url.absoluteString.hasPrefix("\(Self.base)/users?$filter="))
    #expect(transport.requests[0].url.absoluteString.hasSuffix("&$top=5"))
  }

  @Test(arguments: [
    "https://evil.example/v1.0/users?$skiptoken=2",
    "http://graph.example.test/v1.0/users?$skiptoken=2",
    "https://graph.example.test:8443/v1.0/users?$skiptoken=2",
    "https://graph.example.test/beta/users?$skiptoken=2",
    "https://graph.example.test.evil.example/v1.0/users",
  ])
  func doesNotFollowALinkOutOfTheService(link: String) async throws {
    let transport = ScriptedTransport(responses: [Self.page(["a"], next: link)])
    let result = try await client(transport).searchUsers(GraphUserFilter(prefix: "x"), limit: 10)
    #expect(result.users.count == 1)
    #expect(result.refusedNextLink?.absoluteString == link)
    #expect(transport.requestCount == 1)
  }

  @Test func waitsAsRetryAfterAsks() async throws {
    let sleeps = Sleeps()
    let transport = ScriptedTransport(responses: [
      ScriptedTransport.json(429, #"{"error":{"code":"TooManyRequests"}}"#, headers: [HTTPHeader("Retry-After", "7")]),
      Self.page(["a"], next: nil),
    ])
    let result = try await client(transport, sleeps: sleeps).searchUsers(GraphUserFilter(prefix: "x"), limit: 10)
    #expect(result.users.count == 1)
    #expect(sleeps.recorded == [7])
  }

  @Test func reportsGraphsError() async throws {
    let transport = ScriptedTransport(responses: [
      ScriptedTransport.json(
        404, #"{"error":{"code":"Request_ResourceNotFound","message":"Resource 'nobody' does not exist."}}"#)
    ])
    let error = await #expect(throws: TokenKitError.self) { try await client(transport).user("nobody@x#EXT#") }
    #expect(error?.code == .serverError)
    #expect(error?.message.contains("Request_ResourceNotFound") == true)
    #expect(transport.requests.first?.url.absoluteString == "\(Self.base)/users/nobody%40x%23EXT%23")
  }
}
