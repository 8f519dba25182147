/// Unguessable values for the `state` (RFC 6749 §10.12) and `nonce` (OpenID Connect Core
/// §3.1.2.1) parameters of an authorization request.
public enum RandomToken {
  /// Returns `bytes` bytes from the system's cryptographically secure generator, base64url
  /// encoded without padding (RFC 4648 §5).
  ///
  /// The default of 32 bytes (256 bits) follows RFC 7636 §7.1's advice for the PKCE
  /// verifier, and RFC 6749 §10.10's requirement that guessing have a probability of at most
  /// 2^-128 is met with room to spare.
  public static func make(bytes: Int = 32) -> String {
    // SystemRandomNumberGenerator reads getrandom(2) on Linux: a CSPRNG.
    var generator = SystemRandomNumberGenerator()
    return Base64URL.encode((0..<max(bytes, 0)).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
  }
}
