import TokenKit

/// What the Microsoft identity platform does its own way.
public struct MicrosoftGraphBehavior: AccountTypeBehavior {
  public init() {}

  /// The account's id is `oid.tid`, the object id of the user in their tenant, as MSAL's
  /// home account id is: Microsoft's `sub` is pairwise, different for every application,
  /// so another tool sharing the keyring group would not recognise it, while `oid` is
  /// the id Graph itself uses for the user (`/users/{oid}`).
  public func identity(claims: IDTokenClaims) -> AccountIdentity? {
    guard let oid = claims.string("oid"), let tid = claims.string("tid") else { return nil }
    return AccountIdentity(
      id: "\(oid).\(tid)", name: claims.preferredUsername ?? claims.email ?? claims.name ?? oid,
      issuer: claims.issuer)
  }
}
