import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An ID token, and the issuer's key set that should have signed it.
///
/// The input's first line is the compact token; what follows, if anything, is the JWK Set
/// (`jwks_uri`'s document). Validation runs at a clock one minute after the token's `iat`,
/// for the issuer and audience it names, so that a well-signed seed validates and the
/// fuzzer explores the checks past the signature.
enum JOSEFuzzing {
  /// Labels: `verified` (validated against the key set), `claims` (a token with the claims
  /// OpenID Connect requires), `token` (a signed JWT without them), `refused`.
  static func run(_ bytes: [UInt8]) -> String {
    let newline = bytes.firstIndex(of: 0x0A) ?? bytes.count
    let compact = String(decoding: bytes[..<newline], as: UTF8.self)
    let keySetBytes = bytes[min(newline + 1, bytes.count)...]

    let token: JSONWebToken
    do {
      token = try JSONWebToken(compact: compact)
    } catch {
      return "refused"
    }
    _ = token.description
    _ = token.algorithm
    precondition(Base64URL.decode(Base64URL.encode(token.payload)) == token.payload, "base64url does not round-trip")

    guard let claims = try? IDTokenClaims(unverified: compact) else { return "token" }
    _ = claims.description
    // Without keys, as for a token received straight from the token endpoint over TLS,
    // at a fixed time, so that the time checks and their messages see every date.
    _ = try? IDTokenValidator(issuer: claims.issuer, clientID: claims.audience[0], keys: nil)
      .validate(compact, nonce: nil, clock: FixedClock(OAuthResponseFuzzing.receivedAt))
    guard !keySetBytes.isEmpty, let keys = try? JSONWebKeySet(json: keySetBytes) else { return "claims" }
    _ = keys.description
    _ = try? keys.verify(token)
    let clock = FixedClock(claims.issuedAt.addingTimeInterval(60))
    let validator = IDTokenValidator(issuer: claims.issuer, clientID: claims.audience[0], keys: keys)
    guard let validated = try? validator.validate(compact, nonce: claims.nonce, clock: clock) else {
      return "claims"
    }
    precondition(validated.signatureVerified, "validated against a key set without checking the signature")
    _ = try? validator.validateRefreshed(compact, previous: validated, clock: clock)
    return "verified"
  }
}
