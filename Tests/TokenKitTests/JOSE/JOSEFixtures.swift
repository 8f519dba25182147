import Crypto
import CryptoExtras
import Foundation
import Testing
import TokenKit

/// Groups the JOSE suites, so that `--filter JOSE` selects them all.
@Suite enum JOSETests {}

/// Keys, JWK Sets and signed tokens for the JOSE tests, all made fresh with swift-crypto.
enum JOSEFixtures {
  /// RSA key generation takes a while: one key per test process.
  static let rsa = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
  static let p256 = P256.Signing.PrivateKey()
  static let p384 = P384.Signing.PrivateKey()
  /// A P-256 key the issuer never published.
  static let stranger = P256.Signing.PrivateKey()

  static let issuer = "https://issuer.example"
  static let clientID = "tokenctl-test-client"
  static let now = Date(timeIntervalSince1970: 1_800_000_000)
  static let clock = FixedClock(now)

  /// The private keys a test can sign with.
  enum SigningKey: Sendable {
    case rsa, p256, p384, stranger
    /// An HMAC keyed with the RSA modulus, the public value an algorithm-confusion attacker would use.
    case hmacWithPublicKey
    case unsigned
  }

  // MARK: JWKs

  static func rsaJWK(kid: String? = "rsa-1", extra: [String: JSONValue] = [:]) -> [String: JSONValue] {
    let primitives = try! rsa.publicKey.getKeyPrimitives()
    var jwk: [String: JSONValue] = [
      "kty": "RSA", "n": .string(Base64URL.encode(primitives.modulus)),
      "e": .string(Base64URL.encode(primitives.publicExponent)),
    ]
    if let kid { jwk["kid"] = .string(kid) }
    return jwk.merging(extra) { $1 }
  }

  static func ecJWK(_ point: Data, curve: String, kid: String?, extra: [String: JSONValue] = [:]) -> [String: JSONValue]
  {
    let coordinates = point.dropFirst()  // 0x04 || x || y
    let half = coordinates.count / 2
    var jwk: [String: JSONValue] = [
      "kty": "EC", "crv": .string(curve), "x": .string(Base64URL.encode(coordinates.prefix(half))),
      "y": .string(Base64URL.encode(coordinates.suffix(half))),
    ]
    if let kid { jwk["kid"] = .string(kid) }
    return jwk.merging(extra) { $1 }
  }

  static func p256JWK(kid: String? = "ec-1", extra: [String: JSONValue] = [:]) -> [String: JSONValue] {
    ecJWK(p256.publicKey.x963Representation, curve: "P-256", kid: kid, extra: extra)
  }

  static func p384JWK(kid: String? = "ec-384", extra: [String: JSONValue] = [:]) -> [String: JSONValue] {
    ecJWK(p384.publicKey.x963Representation, curve: "P-384", kid: kid, extra: extra)
  }

  static func json(_ value: JSONValue) -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return Array(try! encoder.encode(value))
  }

  static func keySet(_ jwks: [[String: JSONValue]]) throws -> JSONWebKeySet {
    try JSONWebKeySet(json: json(.object(["keys": .array(jwks.map(JSONValue.object))])))
  }

  /// The issuer's published keys: one RSA, one P-256, one P-384.
  static let publishedKeys = try! keySet([rsaJWK(), p256JWK(), p384JWK()])

  // MARK: Tokens

  /// Claims that pass validation against `issuer`, `clientID` and `now`, with nonce `n-0`.
  static func claims(_ changes: [String: JSONValue?] = [:]) -> [String: JSONValue] {
    var claims: [String: JSONValue] = [
      "iss": .string(issuer), "sub": "user-42", "aud": .string(clientID),
      "exp": .number(now.timeIntervalSince1970 + 3600), "iat": .number(now.timeIntervalSince1970 - 10),
      "nonce": "n-0", "preferred_username": "ada", "email": "ada@example.org", "name": "Ada Lovelace",
    ]
    for (name, value) in changes { claims[name] = value }
    return claims
  }

  /// A compact JWS over `claims`; the algorithm is `alg` whatever the key, so tests can lie.
  static func token(
    _ claims: [String: JSONValue] = claims(), alg: String = "RS256", kid: String? = "rsa-1",
    key: SigningKey = .rsa, header extra: [String: JSONValue] = [:]
  ) -> String {
    var header: [String: JSONValue] = ["alg": .string(alg), "typ": "JWT"]
    if let kid { header["kid"] = .string(kid) }
    header.merge(extra) { $1 }
    let input = Base64URL.encode(json(.object(header))) + "." + Base64URL.encode(json(.object(claims)))
    return input + "." + Base64URL.encode(signature(Array(input.utf8), alg: alg, key: key))
  }

  static func signature(_ input: [UInt8], alg: String, key: SigningKey) -> [UInt8] {
    switch key {
    case .rsa:
      let padding: _RSA.Signing.Padding = alg.hasPrefix("PS") ? .PSS : .insecurePKCS1v1_5
      let signature: _RSA.Signing.RSASignature
      switch alg.suffix(3) {
      case "384": signature = try! rsa.signature(for: SHA384.hash(data: input), padding: padding)
      case "512": signature = try! rsa.signature(for: SHA512.hash(data: input), padding: padding)
      default: signature = try! rsa.signature(for: SHA256.hash(data: input), padding: padding)
      }
      return Array(signature.rawRepresentation)
    case .p256: return Array(try! p256.signature(for: input).rawRepresentation)
    case .p384: return Array(try! p384.signature(for: input).rawRepresentation)
    case .stranger: return Array(try! stranger.signature(for: input).rawRepresentation)
    case .hmacWithPublicKey:
      let secret = SymmetricKey(data: try! rsa.publicKey.getKeyPrimitives().modulus)
      return Array(HMAC<SHA256>.authenticationCode(for: input, using: secret))
    case .unsigned: return []
    }
  }
}
