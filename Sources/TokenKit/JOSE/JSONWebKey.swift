import Crypto
import CryptoExtras

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A public key of an issuer's JWK Set (RFC 7517 §4) that tokenctl can check signatures
/// with: `kty` `RSA` (RFC 7518 §6.3.1: `n`, `e`) or `EC` (RFC 7518 §6.2.1: `crv` `P-256`,
/// `P-384` or `P-521`, `x`, `y`).
///
/// A key can be used for one family of algorithms only, fixed by its type and curve, so a
/// token cannot talk its way into a different check (RFC 8725 §3.1). Private members (`d`
/// and the like) and certificates (`x5c`) are ignored.
public struct JSONWebKey: Sendable, CustomStringConvertible {
  /// The smallest RSA modulus accepted, in bits: RFC 7518 §3.3 requires 2048 for RS256,
  /// and NIST SP 800-131A disallowed shorter keys for signatures in 2013.
  public static let minimumRSAKeySize = 2048

  /// `kty` (RFC 7517 §4.1): `RSA` or `EC`.
  public let keyType: String
  /// `kid` (RFC 7517 §4.5).
  public let keyID: String?
  /// `use` (RFC 7517 §4.2): `sig` or `enc`, if stated.
  public let use: String?
  /// `key_ops` (RFC 7517 §4.3), if stated.
  public let operations: [String]?
  /// `alg` (RFC 7517 §4.4): the one algorithm this key may be used with, if stated.
  public let algorithm: String?
  /// The size of the RSA modulus or of the curve, in bits.
  public let keySizeInBits: Int

  private let key: Key

  private enum Key: Sendable {
    case rsa(_RSA.Signing.PublicKey)
    case p256(P256.Signing.PublicKey)
    case p384(P384.Signing.PublicKey)
    case p521(P521.Signing.PublicKey)
  }

  /// Reads a key from the members of a JWK.
  ///
  /// Throws `TokenKitError.Code.invalidIDToken` naming the problem for a key type or curve
  /// tokenctl does not support, a missing or malformed member, or an RSA key shorter than
  /// `minimumRSAKeySize`.
  public init(members: [String: JSONValue]) throws(TokenKitError) {
    let keyID = members["kid"]?.stringValue
    func unusable(_ reason: String) -> TokenKitError {
      TokenKitError(.invalidIDToken, "The issuer's signing key \(Self.name(keyID)) \(reason).")
    }
    guard let keyType = members["kty"]?.stringValue else { throw unusable("has no key type (kty)") }
    func bytes(_ name: String) throws(TokenKitError) -> [UInt8] {
      guard let text = members[name]?.stringValue, let bytes = Base64URL.decode(text), !bytes.isEmpty else {
        throw unusable("has no valid \"\(name)\" member")
      }
      return bytes
    }

    switch keyType {
    case "RSA":
      let modulus = Array(try bytes("n").drop { $0 == 0 })
      let exponent = try bytes("e")
      let bits = modulus.isEmpty ? 0 : (modulus.count - 1) * 8 + (8 - modulus[0].leadingZeroBitCount)
      // Checked here, before swift-crypto refuses the key for the same reason, so the
      // message can say why.
      guard bits >= Self.minimumRSAKeySize else {
        throw unusable("is a \(bits)-bit RSA key; tokenctl requires at least \(Self.minimumRSAKeySize) bits")
      }
      guard let rsa = try? _RSA.Signing.PublicKey(n: modulus, e: exponent) else {
        throw unusable("is not a valid RSA public key")
      }
      key = .rsa(rsa)
      keySizeInBits = bits
    case "EC":
      let x = try bytes("x")
      let y = try bytes("y")
      let point = [0x04] + x + y  // SEC 1 §2.3.3 uncompressed point
      // RFC 7518 §6.2.1.2: each coordinate is the full size of the curve, leading zeros kept.
      let parsed: Key?
      switch members["crv"]?.stringValue {
      case "P-256": parsed = x.count == 32 && y.count == 32 ? try? .p256(.init(x963Representation: point)) : nil
      case "P-384": parsed = x.count == 48 && y.count == 48 ? try? .p384(.init(x963Representation: point)) : nil
      case "P-521": parsed = x.count == 66 && y.count == 66 ? try? .p521(.init(x963Representation: point)) : nil
      case let curve?: throw unusable("is on the curve \(ServerText.escaped(curve)), which tokenctl does not support")
      case nil: throw unusable("has no curve (crv)")
      }
      guard let parsed else { throw unusable("is not a valid point on its curve") }
      key = parsed
      keySizeInBits = x.count == 66 ? 521 : x.count * 8
    default:
      throw unusable("has the key type \(ServerText.escaped(keyType)), which tokenctl cannot check signatures with")
    }

    self.keyType = keyType
    self.keyID = keyID
    use = members["use"]?.stringValue
    operations = members["key_ops"]?.arrayValue?.compactMap(\.stringValue)
    algorithm = members["alg"]?.stringValue
  }

  /// Whether this key may check a signature made with `algorithm`: the key type and curve
  /// fit, and `alg`, `use` and `key_ops` (RFC 7517 §4.2–4.4), where stated, allow it.
  public func fits(_ algorithm: JWSAlgorithm) -> Bool {
    if let stated = self.algorithm, stated != algorithm.rawValue { return false }
    if let use, use != "sig" { return false }
    if let operations, !operations.contains("verify") { return false }
    switch (key, algorithm) {
    case (.rsa, .rs256), (.rsa, .rs384), (.rsa, .rs512), (.rsa, .ps256), (.rsa, .ps384), (.rsa, .ps512),
      (.p256, .es256), (.p384, .es384), (.p521, .es512):
      return true
    default:
      return false
    }
  }

  /// Whether `token` carries a valid signature by this key (RFC 7515 §5.2 step 8).
  ///
  /// False when the token's `alg` does not `fit` this key, whatever the signature.
  public func isValidSignature(of token: JSONWebToken) -> Bool {
    guard let algorithm = token.algorithm, fits(algorithm) else { return false }
    let input = token.signingInput
    let signature = token.signature
    switch (key, algorithm) {
    case (.rsa(let key), _):
      let rsaSignature = _RSA.Signing.RSASignature(rawRepresentation: signature)
      // RFC 7518 §3.5: PSS uses MGF1 with the same hash and a salt as long as the hash,
      // which is what swift-crypto's `.PSS` does.
      switch algorithm {
      case .rs256: return key.isValidSignature(rsaSignature, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
      case .rs384: return key.isValidSignature(rsaSignature, for: SHA384.hash(data: input), padding: .insecurePKCS1v1_5)
      case .rs512: return key.isValidSignature(rsaSignature, for: SHA512.hash(data: input), padding: .insecurePKCS1v1_5)
      case .ps256: return key.isValidSignature(rsaSignature, for: SHA256.hash(data: input), padding: .PSS)
      case .ps384: return key.isValidSignature(rsaSignature, for: SHA384.hash(data: input), padding: .PSS)
      case .ps512: return key.isValidSignature(rsaSignature, for: SHA512.hash(data: input), padding: .PSS)
      default: return false
      }
    // RFC 7518 §3.4: the signature is R and S as fixed-size big-endian integers, not DER.
    case (.p256(let key), _):
      guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
      return key.isValidSignature(signature, for: input)
    case (.p384(let key), _):
      guard let signature = try? P384.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
      return key.isValidSignature(signature, for: input)
    case (.p521(let key), _):
      guard let signature = try? P521.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
      return key.isValidSignature(signature, for: input)
    }
  }

  public var description: String {
    "JSONWebKey(kty: \(keyType), kid: \(keyID ?? "none"), \(keySizeInBits) bits)"
  }

  /// How messages name a key: by its `kid`, quoted, or as "without a key id".
  static func name(_ keyID: String?) -> String {
    keyID.map { "\"\(ServerText.escaped($0))\"" } ?? "without a key id (kid)"
  }
}
