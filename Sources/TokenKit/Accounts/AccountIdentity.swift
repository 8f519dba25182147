#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Who signed in: what makes an account unique within its type, and what to call it.
public struct AccountIdentity: Sendable, Hashable {
  /// The account's stable id (`Account.id`).
  public var id: String
  /// The display name (`Account.name`).
  public var name: String
  /// `iss`, when an ID token or the type's issuer vouched for the identity.
  public var issuer: String?

  public init(id: String, name: String, issuer: String?) {
    self.id = id
    // The server chose the name, and every message about the account quotes it.
    self.name = ServerText.escaped(name)
    self.issuer = issuer
  }

  /// The identity an ID token states (OpenID Connect Core §2, §5.7): `sub` is unique only
  /// within its issuer, so for a type whose users name the issuer, the id includes it;
  /// one user at two issuers is two accounts.
  public init(claims: IDTokenClaims, issuerIsPerAccount: Bool) {
    let id = issuerIsPerAccount ? "\(Self.shortIssuer(claims.issuer))|\(claims.subject)" : claims.subject
    self.init(
      id: id, name: claims.preferredUsername ?? claims.email ?? claims.name ?? claims.subject,
      issuer: claims.issuer)
  }

  /// `https://id.example.org/realms/x` → `id.example.org/realms/x`: the issuer without its
  /// scheme, which is always https (or http on loopback) and only makes ids longer.
  static func shortIssuer(_ issuer: String) -> String {
    var text = Substring(issuer)
    for scheme in ["https://", "http://"] where text.hasPrefix(scheme) { text = text.dropFirst(scheme.count) }
    while text.hasSuffix("/") { text = text.dropLast() }
    return String(text)
  }
}
