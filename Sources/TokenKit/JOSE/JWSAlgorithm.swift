/// A digital-signature algorithm of RFC 7518 §3.1 (JOSE header `alg`) that tokenctl
/// accepts on an ID token.
///
/// Only asymmetric algorithms are members, on purpose:
/// - `none` (RFC 7518 §3.6) is an unsigned token; accepting it would let anyone mint one.
/// - `HS256`, `HS384`, `HS512` (RFC 7518 §3.2) are MACs keyed with a shared secret. A
///   native app is a public client (RFC 8252 §8.4) with no secret to share, and checking an
///   HMAC against a key taken from a JWK Set is the "algorithm confusion" attack of
///   RFC 8725 §2.1: the public key, which everyone has, would become the MAC key.
///
/// Each algorithm fits exactly one key type and curve, so the key, not the token, decides
/// how a signature is checked (RFC 8725 §3.1).
public enum JWSAlgorithm: String, Sendable, Hashable, CaseIterable {
  /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3); the OpenID Connect default.
  case rs256 = "RS256"
  /// RSASSA-PKCS1-v1_5 with SHA-384 (RFC 7518 §3.3).
  case rs384 = "RS384"
  /// RSASSA-PKCS1-v1_5 with SHA-512 (RFC 7518 §3.3).
  case rs512 = "RS512"
  /// RSASSA-PSS with SHA-256, MGF1 with SHA-256 (RFC 7518 §3.5).
  case ps256 = "PS256"
  /// RSASSA-PSS with SHA-384, MGF1 with SHA-384 (RFC 7518 §3.5).
  case ps384 = "PS384"
  /// RSASSA-PSS with SHA-512, MGF1 with SHA-512 (RFC 7518 §3.5).
  case ps512 = "PS512"
  /// ECDSA on P-256 with SHA-256 (RFC 7518 §3.4).
  case es256 = "ES256"
  /// ECDSA on P-384 with SHA-384 (RFC 7518 §3.4).
  case es384 = "ES384"
  /// ECDSA on P-521 with SHA-512 (RFC 7518 §3.4).
  case es512 = "ES512"
}
