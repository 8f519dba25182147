import Crypto

/// Proof Key for Code Exchange (RFC 7636): the `code_verifier` the client keeps, and the
/// `code_challenge` it sends in the authorization request.
///
/// Only the `S256` method (RFC 7636 §4.2) is offered: `plain` exists for clients that
/// cannot compute SHA-256, and sends the secret itself through the browser.
public struct PKCE: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
  /// The shortest and longest verifier RFC 7636 §4.1 allows.
  public static let verifierLength = 43...128

  /// `code_verifier` (RFC 7636 §4.1), sent only in the token request. A secret.
  public let verifier: String
  /// `code_challenge` (RFC 7636 §4.2): `BASE64URL(SHA256(ASCII(code_verifier)))`.
  public let challenge: String
  /// `code_challenge_method` (RFC 7636 §4.3).
  public var method: String { "S256" }

  /// A new verifier of 32 random bytes, base64url encoded: 43 characters, the 256 bits of
  /// entropy RFC 7636 §7.1 recommends.
  public init() {
    self.init(trusted: RandomToken.make(bytes: 32))
  }

  /// Wraps a verifier made elsewhere, checking it against RFC 7636 §4.1: 43 to 128
  /// characters of `ALPHA / DIGIT / "-" / "." / "_" / "~"`.
  ///
  /// Throws `TokenKitError.Code.signInFailed`; the message gives the length but never the
  /// verifier.
  public init(verifier: String) throws {
    let length = verifier.utf8.count
    guard Self.verifierLength.contains(length) else {
      throw TokenKitError(
        .signInFailed,
        "A PKCE code verifier must be 43 to 128 characters long (RFC 7636 §4.1); this one has \(length).")
    }
    guard verifier.utf8.allSatisfy(Self.isUnreserved) else {
      throw TokenKitError(
        .signInFailed,
        "A PKCE code verifier may hold only letters, digits, \"-\", \".\", \"_\" and \"~\" (RFC 7636 §4.1).")
    }
    self.init(trusted: verifier)
  }

  private init(trusted verifier: String) {
    self.verifier = verifier
    challenge = Base64URL.encode(SHA256.hash(data: Array(verifier.utf8)))
  }

  /// The unreserved characters of RFC 3986 §2.3.
  private static func isUnreserved(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
      UInt8(ascii: "~"):
      return true
    default:
      return false
    }
  }

  // The verifier is a secret; the challenge is public (it travels through the browser).
  public var description: String { "PKCE(method: S256, challenge: \(challenge))" }
  public var debugDescription: String { description }
  public var customMirror: Mirror { Mirror(self, children: ["challenge": challenge, "method": method]) }
}
