#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The claims of an OpenID Connect ID token (OpenID Connect Core §2 and §5.1).
///
/// Made by `IDTokenValidator`, which checks them, or by `init(unverified:)`, which only
/// decodes. The required claims `iss`, `sub`, `aud`, `exp` and `iat` are always present.
public struct IDTokenClaims: Sendable, Hashable, CustomStringConvertible {
  /// `iss`: who issued the token.
  public let issuer: String
  /// `sub`: the user, unique within the issuer.
  public let subject: String
  /// `aud`: the clients the token is for; on the wire a string or an array.
  public let audience: [String]
  /// `azp`: the client the token was issued to, when there are several audiences.
  public let authorizedParty: String?
  /// `exp`.
  public let expiresAt: Date
  /// `iat`.
  public let issuedAt: Date
  /// `nbf` (RFC 7519 §4.1.5), if present.
  public let notBefore: Date?
  /// `auth_time`: when the user last authenticated, if present.
  public let authenticatedAt: Date?
  /// `nonce`, if present.
  public let nonce: String?
  /// `preferred_username` (§5.1); not unique, not stable, for display only.
  public let preferredUsername: String?
  /// `email` (§5.1); for display only.
  public let email: String?
  /// `name` (§5.1).
  public let name: String?
  /// Whether the signature was checked against the issuer's keys. False when the issuer
  /// publishes no keys and the token was trusted for coming straight from its token
  /// endpoint over TLS (§3.1.3.7 step 6), or for `init(unverified:)`.
  public internal(set) var signatureVerified: Bool
  /// Every claim, including those above.
  public let claims: [String: JSONValue]

  /// Decodes the claims of an ID token without checking its signature, issuer, audience,
  /// times or nonce: for reading back a token that was validated when it was received.
  ///
  /// Throws `TokenKitError.Code.invalidIDToken` if the token is malformed or lacks a
  /// required claim.
  public init(unverified idToken: some StringProtocol) throws {
    try self.init(token: JSONWebToken(compact: idToken), signatureVerified: false)
  }

  init(token: JSONWebToken, signatureVerified: Bool) throws {
    let claims = token.claims
    func missing(_ what: String) -> TokenKitError {
      JSONWebToken.malformed("has no valid \(what), which OpenID Connect Core §2 requires")
    }
    func date(_ name: String) throws -> Date? {
      guard let value = claims[name] else { return nil }
      // RFC 7519 §2 NumericDate: seconds since 1970, possibly with a fraction.
      guard let seconds = value.numberValue else { throw JSONWebToken.malformed("has a \(name) that is not a number") }
      return Date(timeIntervalSince1970: seconds)
    }
    guard let issuer = claims["iss"]?.stringValue, !issuer.isEmpty else { throw missing("issuer (iss)") }
    guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else { throw missing("subject (sub)") }
    let audience: [String]
    switch claims["aud"] {
    case .string(let single)?: audience = [single]
    case .array(let many)?: audience = many.compactMap(\.stringValue)
    default: audience = []
    }
    guard !audience.isEmpty, (claims["aud"]?.arrayValue?.count ?? 1) == audience.count else {
      throw missing("audience (aud)")
    }
    guard let expiresAt = try date("exp") else { throw missing("expiry time (exp)") }
    guard let issuedAt = try date("iat") else { throw missing("issue time (iat)") }

    self.issuer = issuer
    self.subject = subject
    self.audience = audience
    self.expiresAt = expiresAt
    self.issuedAt = issuedAt
    notBefore = try date("nbf")
    authenticatedAt = try date("auth_time")
    authorizedParty = claims["azp"]?.stringValue
    nonce = claims["nonce"]?.stringValue
    preferredUsername = claims["preferred_username"]?.stringValue
    email = claims["email"]?.stringValue
    name = claims["name"]?.stringValue
    self.signatureVerified = signatureVerified
    self.claims = claims
  }

  /// The claim named `claim` if it is a string, such as a provider's tenant or object id.
  public func string(_ claim: String) -> String? { claims[claim]?.stringValue }

  // Leaves out the nonce and the personal claims; the issuer and subject identify the
  // account without exposing anything that lets a token be replayed.
  public var description: String {
    "IDTokenClaims(iss: \(issuer), sub: \(subject), aud: \(audience), signatureVerified: \(signatureVerified))"
  }
}
