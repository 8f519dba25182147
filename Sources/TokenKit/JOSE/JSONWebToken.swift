/// A JSON Web Token (RFC 7519) in the JWS Compact Serialization (RFC 7515 §7.1),
/// parsed but not yet trusted: `BASE64URL(header) . BASE64URL(payload) . BASE64URL(signature)`.
///
/// Parsing checks only the form. Whether the signature is genuine is `JSONWebKeySet`'s
/// business, and whether the claims are acceptable is `IDTokenValidator`'s.
///
/// Why JOSE is our own (this folder, on swift-crypto's primitives): tokenctl only ever
/// verifies ID tokens, and the rules that make that safe are the ones it must hold in one
/// place: asymmetric algorithms only (no HMAC with a public key), no `none`, `crit`
/// refused, RSA keys of 2,048 bits or more, unknown keys skipped as RFC 7517 §5 asks, and
/// a bound on every input, fuzzed with the other parsers. The one JOSE library at hand,
/// vapor/jwt-kit, signs and verifies every kind of token through policies of its own, and
/// would add swift-certificates and swift-extras-base64 to every build.
public struct JSONWebToken: Sendable, Hashable, CustomStringConvertible {
  /// The largest token accepted, in bytes of its compact form.
  ///
  /// ID tokens are a few KiB at most; the bound keeps a hostile server from making us
  /// decode and hash megabytes.
  public static let maximumLength = 64 * 1024

  /// The JOSE header (RFC 7515 §4): the members tokenctl acts on.
  public struct Header: Sendable, Hashable {
    /// `alg` (RFC 7515 §4.1.1), as it appears on the wire.
    public var algorithm: String
    /// `kid` (RFC 7515 §4.1.4): which key of the issuer's set signed the token.
    public var keyID: String?
    /// `typ` (RFC 7515 §4.1.9), such as `JWT`.
    public var type: String?
    /// Every header member, including those above.
    public var members: [String: JSONValue]
  }

  public let header: Header
  /// The claims set (RFC 7519 §4), decoded.
  public let claims: [String: JSONValue]
  /// The payload exactly as signed: the JSON text of the claims set.
  public let payload: [UInt8]
  /// The JWS Signing Input (RFC 7515 §5.1 step 5): `ASCII(BASE64URL(header) . BASE64URL(payload))`.
  public let signingInput: [UInt8]
  /// The JWS Signature (RFC 7515 §2), decoded from base64url.
  public let signature: [UInt8]

  /// Parses a compact JWS.
  ///
  /// Refuses, with `TokenKitError.Code.invalidIDToken`, anything but three base64url parts
  /// whose header and payload are JSON objects; an encrypted token (JWE, five parts, which
  /// tokenctl cannot decrypt); `alg` `none` (an unsigned token, RFC 7518 §3.6); a `crit`
  /// header, since tokenctl understands no extension (RFC 7515 §4.1.11); and anything over
  /// `maximumLength`.
  public init(compact: some StringProtocol) throws {
    guard compact.utf8.count <= Self.maximumLength else {
      throw Self.malformed("is larger than \(Self.maximumLength / 1024) KiB")
    }
    let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3 else {
      if parts.count == 5 {
        throw Self.malformed("is encrypted (JWE), which tokenctl does not support")
      }
      throw Self.malformed("does not have the three dot-separated parts of a signed JWT")
    }
    guard let headerBytes = Base64URL.decode(parts[0]),
      let payload = Base64URL.decode(parts[1]),
      let signature = Base64URL.decode(parts[2])
    else {
      throw Self.malformed("is not valid base64url")
    }
    guard let headerMembers = JSONValue.parseObject(headerBytes) else {
      throw Self.malformed("has a header that is not a JSON object")
    }
    guard let claims = JSONValue.parseObject(payload) else {
      throw Self.malformed("has a payload that is not a JSON object")
    }
    guard let algorithm = headerMembers["alg"]?.stringValue else {
      throw Self.malformed("has no signature algorithm (alg) in its header")
    }
    guard algorithm.lowercased() != "none" else {
      throw Self.malformed("is not signed (alg \"none\")")
    }
    guard headerMembers["crit"] == nil else {
      throw Self.malformed("requires header extensions (crit) that tokenctl does not understand")
    }
    if let keyID = headerMembers["kid"], keyID.stringValue == nil {
      throw Self.malformed("has a key id (kid) that is not a string")
    }
    header = Header(
      algorithm: algorithm, keyID: headerMembers["kid"]?.stringValue, type: headerMembers["typ"]?.stringValue,
      members: headerMembers)
    self.claims = claims
    self.payload = payload
    self.signature = signature
    signingInput = Array(compact.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
  }

  /// The algorithm named by `alg`, if tokenctl accepts it.
  public var algorithm: JWSAlgorithm? { JWSAlgorithm(rawValue: header.algorithm) }

  // The claims may be personal and the token is a bearer credential: name only the header.
  public var description: String {
    "JSONWebToken(alg: \(header.algorithm), kid: \(header.keyID ?? "none"))"
  }

  static func malformed(_ what: String) -> TokenKitError {
    TokenKitError(
      .invalidIDToken, "The ID token \(what).",
      recovery: "Sign in again; if it keeps failing, the server is not sending OpenID Connect ID tokens.")
  }
}
