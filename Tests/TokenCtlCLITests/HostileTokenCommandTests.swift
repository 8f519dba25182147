import Foundation
import TestSupport
import Testing
import TokenCtlCLI
import TokenKit

/// A hostile issuer's token endpoint answers a refresh with an access token carrying a
/// terminal title sequence, a colour and a header line. `tokenctl token` prints nothing of
/// it, says what was refused with the exit status of a misbehaving server, keeps the stored
/// tokens, and revokes what the server issued.
@Suite struct HostileTokenCommandTests {
  static let now = CommandSandbox.now
  static let issuer = "https://a.example/"
  static let hostile = "\u{1B}]0;owned\u{07}\u{1B}[31mAT\r\nX-Injected: yes"

  let sandbox = CommandSandbox()
  let transport = ScriptedTransport { request throws(TransportError) in
    switch request.url.path() {
    case "/.well-known/openid-configuration":
      return HTTPResponse(status: 200, body: Array(RecordedIssuerCommandTests.discovery(Self.issuer).utf8))
    case "/token": return ScriptedTransport.tokens(access: Self.hostile, refresh: "RT-NEW")
    case "/revoke": return HTTPResponse(status: 200)
    default: return HTTPResponse(status: 404)
    }
  }

  @Test(arguments: [["token", "oidc:ada"], ["token", "--json", "oidc:ada"], ["refresh", "oidc:ada"]])
  func aTokenWithControlCharactersNeverReachesTheTerminal(arguments: [String]) async throws {
    try sandbox.writeConfig("[types.oidc]\nissuer = \"\(Self.issuer)\"\nclient_id = \"tokenctl\"\n")
    let account = Account(
      type: "oidc", id: "a|ada", name: "ada", group: "default", createdAt: Self.now, updatedAt: Self.now,
      issuer: Self.issuer, clientID: "tokenctl")
    let tokens = TokenSet(accessToken: "OLD", refreshToken: "RT-OLD", expiresAt: Self.now.addingTimeInterval(-10))
    try sandbox.store.save(account, tokens: tokens)

    let result = try await sandbox.run(arguments, transport: transport)
    #expect(result.status == 11, "\(result.stderr)")
    // `--json` writes the error as JSON on standard output, the others on standard error.
    let said = arguments.contains("--json") ? result.stdout : result.stderr
    #expect(arguments.contains("--json") || result.stdout.isEmpty)
    for output in [result.stdout, result.stderr] {
      #expect(!output.contains("\u{1B}") && !output.contains("X-Injected") && !output.contains("owned"), "\(output)")
    }
    #expect(said.contains("access_token") && said.contains("revoked"), "\(said)")
    #expect(try sandbox.store.load(account.key)?.tokens == tokens)
    let revoked = transport.requests.filter { $0.url.path() == "/revoke" }.map { $0[field: "token"] }
    #expect(revoked == ["RT-NEW", Self.hostile])
  }
}
