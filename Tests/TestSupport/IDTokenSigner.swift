import Crypto
import Foundation
import TokenKit

/// Signs ID tokens with a P-256 key whose JWK Set the tests serve at `jwks_uri`.
public enum IDTokenSigner {
  public static let key = P256.Signing.PrivateKey()
  public static let keyID = "test-es256"

  /// The JWK Set with the public key.
  public static var jwks: String {
    let point = key.publicKey.x963Representation.dropFirst()  // 0x04 || x || y
    let x = Base64URL.encode(point.prefix(32))
    let y = Base64URL.encode(point.suffix(32))
    return #"{"keys":[{"kty":"EC","crv":"P-256","use":"sig","kid":"\#(keyID)","x":"\#(x)","y":"\#(y)"}]}"#
  }

  /// Claims that pass validation at `now` for the fixtures' issuer and client.
  public static func claims(
    subject: String = "user-42", nonce: String?, now: Date, name: String = "ada@example.org"
  ) -> [String: JSONValue] {
    var claims: [String: JSONValue] = [
      "iss": .string(OAuthFixtures.issuer), "sub": .string(subject), "aud": .string(OAuthFixtures.clientID),
      "exp": .number(now.timeIntervalSince1970 + 3600), "iat": .number(now.timeIntervalSince1970),
      "preferred_username": .string(name),
    ]
    if let nonce { claims["nonce"] = .string(nonce) }
    return claims
  }

  public static func sign(_ claims: [String: JSONValue]) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let header: JSONValue = .object(["alg": .string("ES256"), "typ": .string("JWT"), "kid": .string(keyID)])
    let input =
      Base64URL.encode(try! encoder.encode(header)) + "."
      + Base64URL.encode(try! encoder.encode(JSONValue.object(claims)))
    let signature = try! key.signature(for: Array(input.utf8))
    return input + "." + Base64URL.encode(signature.rawRepresentation)
  }
}
