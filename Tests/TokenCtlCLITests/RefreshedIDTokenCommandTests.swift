import Crypto
import Foundation
import TestSupport
import Testing
import TokenCtlCLI
import TokenKit

/// `RefreshedIDTokenTests` from the command line: a refresh whose ID token names another user prints
/// the new access token, warns on standard error, and keeps the ID token it had.
@Suite struct RefreshedIDTokenCommandTests {
  static let now = CommandSandbox.now
  static let issuer = "https://id.corp.example"
  static let key = P256.Signing.PrivateKey()

  let sandbox = CommandSandbox()

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
    try sandbox.writeConfig(
      """
      id = "corp"
      client_id = "tokenctl"
      [endpoints]
      authorization = "http://127.0.0.1:9/authorize"
      token = "http://127.0.0.1:9/token"
      jwks = "http://127.0.0.1:9/jwks"
      issuer = "\(Self.issuer)"
      """, to: "types/corp.toml")
  }

  @Test func aRefreshedIDTokenForAnotherUserIsDroppedWithAWarning() async throws {
    let first = Self.idToken(subject: "ada", issuedAt: Self.now.addingTimeInterval(-3600))
    let store = sandbox.store
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
    let result = try await sandbox.run(["token", "corp:ada"], transport: transport)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "AT-2\n")
    #expect(
      result.stderr.hasPrefix("tokenctl: warning: the ID token that came with the refresh of corp:ada was dropped"))
    #expect(result.stderr.contains("different user (sub)"))
    #expect(!result.stderr.contains(wrong) && !result.stderr.contains("RT-2"))
    let stored = try #require(try store.load(account.key))
    #expect(stored.tokens.refreshToken == "RT-2")
    #expect(stored.tokens.idToken == first)
  }
}
