import Foundation
import NativeAppSupport
import Testing
import TokenCtlCLI
import TokenKit
import TokenStoreTesting

/// What a misbehaving token endpoint does to `tokenctl token` on an expired account: a
/// clear message, a documented exit status, and stored tokens left alone unless the
/// server definitively rejected them. The faults come from our stub server over real
/// HTTP through the real transport.
@Suite struct ServerFaultTests {
  static let stub = Result { try StubServer.start() }

  struct Fault: Sendable, CustomStringConvertible {
    var kind: String
    var status: Int32
    var phrase: String
    var description: String { kind }
  }

  static let faults: [Fault] = [
    Fault(kind: "500", status: 11, phrase: "HTTP 500"),
    Fault(kind: "503-retry-after", status: 11, phrase: "Try again in 2 s"),
    Fault(kind: "html", status: 11, phrase: "HTML page"),
    Fault(kind: "502-html", status: 11, phrase: "HTTP 502"),
    Fault(kind: "empty", status: 11, phrase: "is empty"),
    Fault(kind: "wrong-shape", status: 11, phrase: "no access_token"),
    Fault(kind: "invalid-json", status: 11, phrase: "not a JSON object"),
    Fault(kind: "oversized", status: 10, phrase: "larger than"),
    Fault(kind: "oversized-chunked", status: 10, phrase: "larger than"),
    Fault(kind: "hang", status: 10, phrase: "within"),
    Fault(kind: "reset", status: 10, phrase: "127.0.0.1"),
    Fault(kind: "invalid_client", status: 11, phrase: "does not accept this client"),
    Fault(kind: "error-200", status: 11, phrase: "bad_verification_code"),
    Fault(kind: "invalid_grant", status: 5, phrase: "tokenctl login faulty"),
  ]

  @Test(arguments: faults)
  func anExpiredTokenOnAFaultyServer(fault: Fault) async throws {
    let stub = try Self.stub.get()
    let backing = InMemoryTokenStore.Backing()
    let store = InMemoryTokenStore(group: "default", backing: backing)
    let account = Account(
      type: "faulty", id: "sub-1", name: "ada", group: "default", createdAt: Date(), updatedAt: Date(),
      clientID: "client")
    let tokens = TokenSet(
      accessToken: "old-access-\(UUID())", refreshToken: "old-refresh-\(UUID())",
      expiresAt: Date().addingTimeInterval(-60))
    try store.save(account, tokens: tokens)
    var registry = AccountTypeRegistry()
    try registry.register(
      EndpointDescriptor(
        id: "faulty", displayName: "Faulty",
        endpoints: .fixed(
          Endpoints(authorization: nil, token: try #require(URL(string: "\(stub.baseURL)/fault/\(fault.kind)/token")))),
        clientID: "client"),
      source: "test")
    let output = CapturedOutput()
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-fault-\(UUID())")
    let context = CLIContext(
      registry: registry, makeStore: { InMemoryTokenStore(group: $0, backing: backing) }, clock: SystemClock(),
      environment: ["HOME": scratch.path], output: output,
      transport: CurlHTTPTransport(connectTimeout: .seconds(2), totalTimeout: .seconds(2)))
    let status = await TokenCtl.main(arguments: ["token", "faulty:ada"], context: context)

    #expect(status == fault.status, "\(output.stderr)")
    #expect(output.stderr.contains(fault.phrase), "\(output.stderr)")
    #expect(output.stdout.isEmpty)
    #expect(!output.stderr.contains(tokens.refreshToken!) && !output.stderr.contains(tokens.accessToken))
    let after = try #require(try store.load(account.key))
    #expect(after.tokens == tokens, "the tokens are never changed by a failure")
    #expect(after.account.needsSignIn == (fault.kind == "invalid_grant"))
  }
}
