import Crypto
import Foundation
import TestSupport
import Testing
import TokenKit

/// An ID token that comes with a refresh is checked as
/// OpenID Connect Core §12.2 asks before it is stored; a bad one is dropped, and the new
/// access and refresh tokens, which the server has already rotated, are kept.
@Suite struct RefreshedIDTokenTests {
  typealias F = OAuthFixtures
  typealias T = ScriptedTransport
  typealias H = AccountHarness

  /// The ID token of the original sign-in, issued an hour before `F.now`.
  static let first = IDTokenSigner.sign(IDTokenSigner.claims(nonce: "n-1", now: F.now.addingTimeInterval(-3600)))

  /// A harness whose token endpoint answers a refresh with `idToken`.
  static func harness(answering idToken: String?) throws -> AccountHarness {
    let harness = try H { request throws(TransportError) in
      switch request.url {
      case F.tokenURL: return T.tokens(access: "AT-2", refresh: "RT-2", idToken: idToken)
      case F.jwksURL: return T.json(200, IDTokenSigner.jwks)
      default: return HTTPResponse(status: 404)
      }
    }
    let account = Account(
      type: "corp", id: "user-42", name: "ada@example.org", group: harness.store.group, createdAt: F.now,
      updatedAt: F.now, issuer: F.issuer, clientID: F.clientID)
    try harness.store.save(
      account,
      tokens: TokenSet(
        accessToken: "AT-1", refreshToken: "RT-1", idToken: first, expiresAt: F.now.addingTimeInterval(-10)))
    return harness
  }

  static func refreshed(_ changes: [String: JSONValue?]) -> String {
    var claims = IDTokenSigner.claims(nonce: nil, now: F.now)
    for (name, value) in changes { claims[name] = value }
    return IDTokenSigner.sign(claims)
  }

  /// An ID token signed by a key the issuer does not publish.
  static var forged: String {
    let stranger = P256.Signing.PrivateKey()
    let good = refreshed([:])
    let input = good.split(separator: ".").prefix(2).joined(separator: ".")
    return input + "." + Base64URL.encode(try! stranger.signature(for: Array(input.utf8)).rawRepresentation)
  }

  static let bad: [(String, String)] = [
    ("another user", refreshed(["sub": .string("user-666")])),
    ("another issuer", refreshed(["iss": .string("https://evil.example")])),
    ("another audience", refreshed(["aud": .string("someone-else")])),
    ("issued before the first", refreshed(["iat": .number(F.now.timeIntervalSince1970 - 7200)])),
    ("a forged signature", forged),
    ("not a JWT", "not-a-jwt"),
  ]

  @Test(arguments: bad)
  func aBadIDTokenIsDroppedAndTheNewTokensAreKept(what: String, idToken: String) async throws {
    let harness = try Self.harness(answering: idToken)
    let recorder = EventRecorder(harness.events)
    let result = try await harness.refresher.freshTokens(for: H.key)
    let stored = try #require(try harness.stored())
    // The rotated grant is stored: losing it would end the account.
    #expect(stored.tokens.accessToken == "AT-2")
    #expect(stored.tokens.refreshToken == "RT-2")
    // The unchecked statement of identity is not.
    #expect(stored.tokens.idToken == Self.first)
    #expect(result.tokens == stored.tokens)
    let events = await recorder.drain()
    let failure = try #require(events.first { $0.kind == .failed }, "no failed event for \(what)")
    #expect(failure.message?.contains("ID token") == true)
    #expect(failure.message?.contains("kept") == true)
    #expect(failure.message?.contains(idToken) == false)
    #expect(events.contains { $0.kind == .refreshed })
  }

  @Test func aGoodIDTokenReplacesTheFirst() async throws {
    let good = Self.refreshed([:])
    let harness = try Self.harness(answering: good)
    let recorder = EventRecorder(harness.events)
    _ = try await harness.refresher.freshTokens(for: H.key)
    #expect(try harness.stored()?.tokens.idToken == good)
    #expect(await recorder.drain().map(\.kind) == [.refreshed])
  }

  @Test func noIDTokenKeepsTheFirst() async throws {
    let harness = try Self.harness(answering: nil)
    _ = try await harness.refresher.freshTokens(for: H.key)
    #expect(try harness.stored()?.tokens.idToken == Self.first)
    #expect(try harness.stored()?.tokens.refreshToken == "RT-2")
  }
}
