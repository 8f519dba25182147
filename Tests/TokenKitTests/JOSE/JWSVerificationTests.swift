import Testing
import TokenKit

extension JOSETests {
  @Suite struct JWSVerificationTests {
    typealias F = JOSEFixtures

    @Test(arguments: [
      ("RS256", "rsa-1", F.SigningKey.rsa), ("RS384", "rsa-1", .rsa), ("RS512", "rsa-1", .rsa),
      ("PS256", "rsa-1", .rsa), ("PS384", "rsa-1", .rsa), ("PS512", "rsa-1", .rsa),
      ("ES256", "ec-1", .p256), ("ES384", "ec-384", .p384),
    ])
    func acceptsGenuineSignatures(alg: String, kid: String, key: F.SigningKey) throws {
      let token = try JSONWebToken(compact: F.token(alg: alg, kid: kid, key: key))
      try F.publishedKeys.verify(token)
    }

    @Test func picksTheOnlyFittingKeyWhenTheTokenNamesNone() throws {
      try F.publishedKeys.verify(JSONWebToken(compact: F.token(alg: "RS256", kid: nil, key: .rsa)))
      try F.publishedKeys.verify(JSONWebToken(compact: F.token(alg: "ES256", kid: nil, key: .p256)))
    }

    @Test func refusesToGuessAmongSeveralKeysWithoutAKid() throws {
      let set = try F.keySet([F.rsaJWK(kid: "a"), F.rsaJWK(kid: "b")])
      let error = #expect(throws: TokenKitError.self) {
        try set.verify(JSONWebToken(compact: F.token(kid: nil)))
      }
      #expect(error?.message.contains("names no key (kid)") == true)
    }

    @Test func refusesATamperedPayload() throws {
      let parts = F.token().split(separator: ".").map(String.init)
      let forged = Base64URL.encode(F.json(.object(F.claims(["sub": "someone-else"]))))
      let token = try JSONWebToken(compact: "\(parts[0]).\(forged).\(parts[2])")
      let error = #expect(throws: TokenKitError.self) { try F.publishedKeys.verify(token) }
      #expect(error?.code == .invalidIDToken)
      #expect(error?.message.contains("signature does not match") == true)
    }

    @Test(arguments: [("RS256", "rsa-1", F.SigningKey.rsa), ("ES256", "ec-1", .p256)])
    func refusesATamperedSignature(alg: String, kid: String, key: F.SigningKey) throws {
      let compact = F.token(alg: alg, kid: kid, key: key)
      var signature = Base64URL.decode(compact.split(separator: ".")[2])!
      signature[10] ^= 0x01
      let parts = compact.split(separator: ".")
      let token = try JSONWebToken(compact: "\(parts[0]).\(parts[1]).\(Base64URL.encode(signature))")
      #expect(throws: TokenKitError.self) { try F.publishedKeys.verify(token) }
    }

    @Test func refusesASignatureByAKeyTheIssuerDidNotPublish() throws {
      // Claims the issuer's kid, signed by someone else.
      let token = try JSONWebToken(compact: F.token(alg: "ES256", kid: "ec-1", key: .stranger))
      let error = #expect(throws: TokenKitError.self) { try F.publishedKeys.verify(token) }
      #expect(error?.message.contains("signature does not match") == true)
    }

    @Test func refusesAnUnknownKid() throws {
      let token = try JSONWebToken(compact: F.token(kid: "rotated-away"))
      let error = #expect(throws: TokenKitError.self) { try F.publishedKeys.verify(token) }
      #expect(error?.message.contains("\"rotated-away\", which is not in the issuer's key set") == true)
    }

    /// The algorithm-confusion attack (RFC 8725 §2.1): an HMAC keyed with the public key.
    @Test(arguments: ["HS256", "HS384", "HS512"])
    func refusesHMACSignatures(alg: String) throws {
      let token = try JSONWebToken(compact: F.token(alg: alg, kid: "rsa-1", key: .hmacWithPublicKey))
      let error = #expect(throws: TokenKitError.self) { try F.publishedKeys.verify(token) }
      #expect(error?.message.contains("shared-secret MAC") == true)
    }

    @Test func refusesAnAlgorithmTheKeyDoesNotAllow() throws {
      // An RSA signature presented as ES256 under the RSA key's kid, and the reverse.
      for (alg, kid, key) in [("ES256", "rsa-1", F.SigningKey.rsa), ("RS256", "ec-1", .p256)] {
        let token = try JSONWebToken(compact: F.token(alg: alg, kid: kid, key: key))
        let error = #expect(throws: TokenKitError.self) { try F.publishedKeys.verify(token) }
        #expect(error?.message.contains("does not allow") == true)
      }
      let restricted = try F.keySet([F.rsaJWK(extra: ["alg": "RS256"])])
      #expect(throws: TokenKitError.self) {
        try restricted.verify(JSONWebToken(compact: F.token(alg: "PS256")))
      }
    }

    @Test func refusesUnsupportedAlgorithms() throws {
      let token = try JSONWebToken(compact: F.token(alg: "EdDSA", key: .p256))
      let error = #expect(throws: TokenKitError.self) { try F.publishedKeys.verify(token) }
      #expect(error?.message.contains("EdDSA, which tokenctl does not support") == true)
    }
  }
}
