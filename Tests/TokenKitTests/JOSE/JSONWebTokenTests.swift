import Testing
import TokenKit

extension JOSETests {
  @Suite struct JSONWebTokenTests {
    typealias F = JOSEFixtures

    static func encode(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }

    @Test func parsesACompactJWS() throws {
      let compact = F.token(kid: "rsa-1")
      let token = try JSONWebToken(compact: compact)
      #expect(token.header.algorithm == "RS256")
      #expect(token.algorithm == .rs256)
      #expect(token.header.keyID == "rsa-1")
      #expect(token.header.type == "JWT")
      #expect(token.claims["sub"] == "user-42")
      let parts = compact.split(separator: ".")
      #expect(token.signingInput == Array("\(parts[0]).\(parts[1])".utf8))
      #expect(token.payload == Base64URL.decode(parts[1]))
      #expect(token.signature == Base64URL.decode(parts[2]))
      #expect(token.signature.count == 256)
    }

    @Test(arguments: [
      ("one part", "abc", "three"),
      ("two parts", "abc.def", "three"),
      ("four parts", "a.b.c.d", "three"),
      ("five parts", "a.b.c.d.e", "encrypted"),
      ("bad base64url", "eyJ+.e30.AA", "base64url"),
      ("array header", "\(encode("[]")).\(encode("{}")).AA", "header that is not a JSON object"),
      ("string payload", "\(encode(#"{"alg":"RS256"}"#)).\(encode("\"x\"")).AA", "payload that is not a JSON object"),
      ("not JSON", "\(encode(#"{"alg":"RS256"}"#)).\(encode("{")).AA", "payload that is not a JSON object"),
      ("no alg", "\(encode(#"{"typ":"JWT"}"#)).\(encode("{}")).AA", "no signature algorithm"),
      ("alg none", "\(encode(#"{"alg":"none"}"#)).\(encode("{}")).", "not signed"),
      ("alg None", "\(encode(#"{"alg":"None"}"#)).\(encode("{}")).", "not signed"),
      ("crit", "\(encode(#"{"alg":"RS256","crit":["exp"],"exp":1}"#)).\(encode("{}")).AA", "crit"),
      ("numeric kid", "\(encode(#"{"alg":"RS256","kid":7}"#)).\(encode("{}")).AA", "key id"),
    ])
    func refusesMalformedTokens(_ name: String, compact: String, reason: String) {
      let error = #expect(throws: TokenKitError.self, "\(name)") { try JSONWebToken(compact: compact) }
      #expect(error?.code == .invalidIDToken)
      #expect(error?.message.contains(reason) == true, "\(name): \(error?.message ?? "")")
    }

    @Test func refusesATokenSignedWithNoneEvenWithAValidLookingSignature() {
      let compact = F.token(alg: "none", key: .unsigned)
      #expect(compact.hasSuffix("."))
      #expect(throws: TokenKitError.self) { try JSONWebToken(compact: compact) }
    }

    @Test func refusesOversizeTokens() throws {
      let padding = String(repeating: "x", count: JSONWebToken.maximumLength)
      let compact = F.token(F.claims(["padding": .string(padding)]))
      let error = #expect(throws: TokenKitError.self) { try JSONWebToken(compact: compact) }
      #expect(error?.message.contains("64 KiB") == true)
      // Just under the limit is fine.
      let fitting = F.token(F.claims(["padding": .string(String(padding.prefix(40_000)))]))
      _ = try JSONWebToken(compact: fitting)
    }

    @Test func describesItselfWithoutClaims() throws {
      let token = try JSONWebToken(compact: F.token())
      #expect(token.description == "JSONWebToken(alg: RS256, kid: rsa-1)")
      #expect(!"\(token)".contains("user-42"))
    }
  }
}
