import Crypto
import CryptoExtras
import Testing
import TokenKit

extension JOSETests {
  @Suite struct JSONWebKeySetTests {
    typealias F = JOSEFixtures

    @Test func decodesRSAAndECKeys() throws {
      let set = try F.keySet([
        F.rsaJWK(extra: ["use": "sig", "alg": "RS256"]), F.p256JWK(), F.p384JWK(),
      ])
      #expect(set.keys.count == 3)
      #expect(set.skipped.isEmpty)
      #expect(set.keys.map(\.keyID) == ["rsa-1", "ec-1", "ec-384"])
      #expect(set.keys.map(\.keyType) == ["RSA", "EC", "EC"])
      #expect(set.keys.map(\.keySizeInBits) == [2048, 256, 384])
      #expect(set.keys[0].use == "sig")
      #expect(set.keys[0].algorithm == "RS256")
      #expect(set.description == "JSONWebKeySet(3 keys, 0 skipped)")
    }

    @Test func skipsKeysOfUnknownTypesAndKeepsTheRest() throws {
      let set = try F.keySet([
        ["kty": "oct", "kid": "shared", "k": "c2VjcmV0"],
        ["kty": "OKP", "kid": "ed", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"],
        ["kid": "no-type"],
        F.rsaJWK(),
        F.p256JWK(),
      ])
      #expect(set.keys.map(\.keyID) == ["rsa-1", "ec-1"])
      #expect(set.skipped.map(\.keyID) == ["shared", "ed", "no-type"])
      #expect(set.skipped[0].reason.contains("key type oct"))
    }

    @Test func refusesRSAKeysUnder2048Bits() throws {
      // A 1024-bit modulus: the top bit set, odd.
      var generator = SystemRandomNumberGenerator()
      let modulus = [0xC1] + (0..<127).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
      let weak: [String: JSONValue] = [
        "kty": "RSA", "kid": "weak", "n": .string(Base64URL.encode(modulus)), "e": "AQAB",
      ]

      let error = #expect(throws: TokenKitError.self) { try JSONWebKey(members: weak) }
      #expect(error?.message.contains("1024-bit") == true)

      let set = try F.keySet([weak, F.rsaJWK()])
      #expect(set.keys.map(\.keyID) == ["rsa-1"])
      #expect(set.skipped.first?.reason.contains("at least 2048 bits") == true)

      // A token naming the refused key says why it cannot be checked.
      let token = try JSONWebToken(compact: F.token(kid: "weak"))
      let failure = #expect(throws: TokenKitError.self) { try set.verify(token) }
      #expect(failure?.code == .invalidIDToken)
      #expect(failure?.message.contains("1024-bit") == true)
    }

    @Test func refusesAGenerated1024BitKey() throws {
      let key = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
      let primitives = try key.publicKey.getKeyPrimitives()
      let members: [String: JSONValue] = [
        "kty": "RSA", "n": .string(Base64URL.encode(primitives.modulus)),
        "e": .string(Base64URL.encode(primitives.publicExponent)),
      ]
      let error = #expect(throws: TokenKitError.self) { try JSONWebKey(members: members) }
      #expect(error?.message.contains("1024-bit RSA key") == true)
    }

    @Test(
      arguments: [
        ("unknown curve", ["crv": "secp256k1"], "curve secp256k1"),
        ("no curve", ["crv": .null], "no curve"),
        ("short x", ["x": "AAAA"], "not a valid point"),
        ("x not base64url", ["x": "++++"], "\"x\""),
        (
          "point off the curve", ["x": .string(Base64URL.encode([UInt8](repeating: 1, count: 32)))], "not a valid point"
        ),
      ] as [(String, [String: JSONValue], String)])
    func skipsBrokenECKeys(_ name: String, change: [String: JSONValue], reason: String) throws {
      let jwk = F.p256JWK(extra: change)
      let set = try F.keySet([jwk])
      #expect(set.keys.isEmpty, "\(name)")
      #expect(set.skipped.first?.reason.contains(reason) == true, "\(name): \(set.skipped)")
    }

    @Test(arguments: ["[]", "{}", #"{"keys":{}}"#, "not json"])
    func refusesDocumentsThatAreNotKeySets(json: String) {
      let error = #expect(throws: TokenKitError.self) { try JSONWebKeySet(json: Array(json.utf8)) }
      #expect(error?.code == .serverError)
    }

    @Test func aKeysAlgUseAndOperationsLimitWhatItChecks() throws {
      let plain = try JSONWebKey(members: F.rsaJWK())
      #expect(JWSAlgorithm.allCases.filter(plain.fits) == [.rs256, .rs384, .rs512, .ps256, .ps384, .ps512])
      #expect(try JSONWebKey(members: F.rsaJWK(extra: ["alg": "PS256"])).fits(.rs256) == false)
      #expect(try JSONWebKey(members: F.rsaJWK(extra: ["use": "enc"])).fits(.rs256) == false)
      #expect(try JSONWebKey(members: F.rsaJWK(extra: ["key_ops": ["encrypt"]])).fits(.rs256) == false)
      #expect(try JSONWebKey(members: F.rsaJWK(extra: ["key_ops": ["verify"]])).fits(.rs256) == true)
      #expect(JWSAlgorithm.allCases.filter(try JSONWebKey(members: F.p256JWK()).fits) == [.es256])
      #expect(JWSAlgorithm.allCases.filter(try JSONWebKey(members: F.p384JWK()).fits) == [.es384])
    }
  }
}
