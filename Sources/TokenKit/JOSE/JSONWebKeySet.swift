/// An issuer's JWK Set (RFC 7517 §5), as served at its `jwks_uri` (OpenID Connect
/// Discovery §3), reduced to the keys tokenctl can check ID-token signatures with.
///
/// Keys of an unknown type, on an unknown curve, with a missing member or too short are
/// left out and listed in `skipped`, as RFC 7517 §5 asks ("implementations SHOULD ignore
/// JWKs within a JWK Set that use "kty" values that are not understood by them, that are
/// missing required members, or for which values are out of the supported ranges"): an
/// issuer that also publishes, say, an encryption key must not break sign-in.
public struct JSONWebKeySet: Sendable, CustomStringConvertible {
  /// A key left out of the set, and why.
  public struct SkippedKey: Sendable, Hashable {
    /// Its `kid`, if it had one.
    public var keyID: String?
    /// Why tokenctl cannot use it, as a sentence.
    public var reason: String
  }

  /// The usable keys, in the order served.
  public let keys: [JSONWebKey]
  /// The keys left out.
  public let skipped: [SkippedKey]

  public init(keys: [JSONWebKey]) {
    self.keys = keys
    skipped = []
  }

  /// Parses the JSON of a JWK Set: an object whose `keys` member is an array of JWKs.
  ///
  /// Throws `TokenKitError.Code.serverError` only if the document as a whole is not a JWK
  /// Set; keys tokenctl cannot use are skipped.
  public init(json: some Collection<UInt8>) throws {
    guard let members = JSONValue.parseObject(json), let entries = members["keys"]?.arrayValue else {
      throw TokenKitError(
        .serverError, "The issuer's key set (jwks_uri) is not a JSON Web Key Set.",
        recovery: "Check the account type's issuer; the server's OpenID configuration may be wrong.")
    }
    var keys: [JSONWebKey] = []
    var skipped: [SkippedKey] = []
    for entry in entries {
      guard let object = entry.objectValue else {
        skipped.append(SkippedKey(keyID: nil, reason: "An entry of the issuer's key set is not a JSON object."))
        continue
      }
      do {
        keys.append(try JSONWebKey(members: object))
      } catch {
        skipped.append(SkippedKey(keyID: object["kid"]?.stringValue, reason: error.message))
      }
    }
    self.keys = keys
    self.skipped = skipped
  }

  /// Checks the signature of `token` (RFC 7515 §5.2) with the key it was made with, as
  /// OpenID Connect Core §3.1.3.7 step 6 and §10.1 say to pick it: the key named by the
  /// header's `kid`; without a `kid`, the only key that fits `alg`.
  ///
  /// Throws `TokenKitError.Code.invalidIDToken` saying what failed: an algorithm tokenctl
  /// refuses (see `JWSAlgorithm`), no key or no single key to check with, or a signature
  /// that does not match.
  public func verify(_ token: JSONWebToken) throws {
    let candidates = try candidates(for: token)
    guard candidates.contains(where: { $0.isValidSignature(of: token) }) else {
      throw Self.failure(
        "The ID token's signature does not match the issuer's key \(JSONWebKey.name(token.header.keyID)).",
        recovery: "Sign in again. If it keeps failing, something between tokenctl and the issuer is altering tokens.")
    }
  }

  /// The keys that may have signed `token`: those with its `kid`, or the only key fitting
  /// its `alg`.
  func candidates(for token: JSONWebToken) throws -> [JSONWebKey] {
    // The header is the token's sender's: its words are escaped wherever they are quoted.
    let name = ServerText.escaped(token.header.algorithm)
    guard let algorithm = token.algorithm else {
      if name.hasPrefix("HS") {
        throw Self.failure(
          "The ID token is signed with \(name), a shared-secret MAC, which tokenctl does not accept: a public "
            + "client has no secret to share, and the issuer's published keys must not serve as one.",
          recovery: Self.misconfigured)
      }
      throw Self.failure(
        "The ID token is signed with \(name), which tokenctl does not support.", recovery: Self.misconfigured)
    }

    guard let keyID = token.header.keyID else {
      let fitting = keys.filter { $0.fits(algorithm) }
      guard fitting.count == 1 else {
        throw Self.failure(
          fitting.isEmpty
            ? "The issuer's key set has no key for the ID token's algorithm \(name)."
            : "The ID token names no key (kid), and the issuer's key set has \(fitting.count) keys for \(name).",
          recovery: Self.misconfigured)
      }
      return fitting
    }

    let named = keys.filter { $0.keyID == keyID }
    guard !named.isEmpty else {
      if let skipped = skipped.first(where: { $0.keyID == keyID }) {
        throw Self.failure(
          "The ID token is signed with a key tokenctl cannot use. \(skipped.reason)", recovery: Self.misconfigured)
      }
      throw Self.failure(
        "The ID token is signed with the key \"\(ServerText.escaped(keyID))\", which is not in the issuer's key set.",
        recovery: "Sign in again: the issuer may just have changed its keys. If it keeps failing, "
          + "the account type's issuer is misconfigured.")
    }
    let fitting = named.filter { $0.fits(algorithm) }
    guard !fitting.isEmpty else {
      throw Self.failure(
        "The ID token claims the algorithm \(name), which its key \"\(ServerText.escaped(keyID))\" (\(ServerText.escaped(named[0].keyType))) does not allow.",
        recovery: Self.misconfigured)
    }
    return fitting
  }

  public var description: String {
    "JSONWebKeySet(\(keys.count) keys, \(skipped.count) skipped)"
  }

  static let misconfigured =
    "Sign in again; if it keeps failing, the account type's issuer or client id is misconfigured."

  static func failure(_ message: String, recovery: String) -> TokenKitError {
    TokenKitError(.invalidIDToken, message, recovery: recovery)
  }
}
