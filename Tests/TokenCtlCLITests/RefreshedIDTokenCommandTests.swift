import Crypto
import Foundation
import Testing
import TokenCtlCLI
import TokenKit
import TokenStoreTesting

/// Finding 6 from the command line: a refresh whose ID token names another user prints
/// the new access token, warns on standard error, and keeps the ID token it had.
@Suite struct RefreshedIDTokenCommandTests {
  static let now = Date(timeIntervalSince1970: 1_800_000_000)
  static let issuer = "https://id.corp.example"
  static let key = P256.Signing.PrivateKey()

  let backing = InMemoryTokenStore.Backing()
  let home = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-idt-\(UUID().uuidString)")

  static func idToken(subject: String, issuedAt: Date) -> String {
    func part(_ object: [String: Any]) -> String {
      Base64URL.encode(try! JSONSerialization.data(withJSONObject: object, options: .sortedKeys))
    }
    let input =
      part(["alg": "ES256", "typ": "JWT", "kid": "k1"]) + "."
      + part([
        "iss": issuer, "sub": subject, "aud": "tokenctl", "iat": Int(issuedAt.timeIntervalSince1970),
        "exp": Int(issuedAt.timeIntervalSince1970) + 3600,
      ])
    return input + "." + Base64URL.encode(try! key.signature(for: Array(input.utf8)).rawRepresentation)
  }

  static var jwks: String {
    let point = key.publicKey.x963Representation.dropFirst()
    return
      #"{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","x":"\#(Base64URL.encode(point.prefix(32)))","y":"\#(Base64URL.encode(point.suffix(32)))"}]}"#
  }

  init() throws {
    let types = home.appendingPathComponent("config/tokenctl/types")
    try FileManager.default.createDirectory(at: types, withIntermediateDirectories: true)
    try """
    id = "corp"
    client_id = "tokenctl"
    [endpoints]
    authorization = "http://127.0.0.1:9/authorize"
    token = "http://127.0.0.1:9/token"
    jwks = "http://127.0.0.1:9/jwks"
    issuer = "\(Self.issuer)"
    """.write(to: types.appendingPathComponent("corp.toml"), atomically: true, encoding: .utf8)
  }

  @Test func aRefreshedIDTokenForAnotherUserIsDroppedWithAWarning() async throws {
    let first = Self.idToken(subject: "ada", issuedAt: Self.now.addingTimeInterval(-3600))
    let store = InMemoryTokenStore(group: "default", backing: backing)
    let account = Account(
      type: "corp", id: "ada", name: "ada", group: "default", createdAt: Self.now, updatedAt: Self.now,
      issuer: Self.issuer, clientID: "tokenctl")
    try store.save(
      account,
      tokens: TokenSet(
        accessToken: "AT-1", refreshToken: "RT-1", idToken: first, expiresAt: Self.now.addingTimeInterval(-1)))
    let wrong = Self.idToken(subject: "mallory", issuedAt: Self.now)
    let transport = ScriptedTransport { request throws(TransportError) in
      switch request.url.path() {
      case "/token": return ScriptedTransport.tokens(access: "AT-2", refresh: "RT-2", idToken: wrong)
      case "/jwks": return ScriptedTransport.json(200, Self.jwks)
      default: return HTTPResponse(status: 404)
      }
    }
    let output = CapturedOutput()
    let backing = backing
    let context = CLIContext(
      registry: try BuiltinPlugins.registry(), makeStore: { InMemoryTokenStore(group: $0, backing: backing) },
      clock: FixedClock(Self.now),
      environment: [
        "HOME": home.path, "XDG_CONFIG_HOME": home.appendingPathComponent("config").path,
        "XDG_CACHE_HOME": home.appendingPathComponent("cache").path,
        "XDG_RUNTIME_DIR": home.appendingPathComponent("run").path,
      ],
      output: output, transport: transport)
    let status = await TokenCtl.main(arguments: ["token", "corp:ada"], context: context)
    #expect(status == 0, "\(output.stderr)")
    #expect(output.stdout == "AT-2\n")
    #expect(
      output.stderr.hasPrefix("tokenctl: warning: the ID token that came with the refresh of corp:ada was dropped"))
    #expect(output.stderr.contains("different user (sub)"))
    #expect(!output.stderr.contains(wrong) && !output.stderr.contains("RT-2"))
    let stored = try #require(try store.load(account.key))
    #expect(stored.tokens.refreshToken == "RT-2")
    #expect(stored.tokens.idToken == first)
  }
}
