import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The Secret Service schema of an account's tokens for other scopes
/// (``TokenStore/saveToken(_:scopes:of:)``), documented in tokenctl-keyring(5).
///
/// A schema of its own, not the account's: every reader of `org.tokenctl.Account` items,
/// `list` and other tools included, sees accounts only, and an item of this schema can
/// never be taken for one. Its secret is a token set without a refresh token or an ID
/// token; its attributes, like the account's, hold nothing secret.
public enum ScopedTokenSchema {
  /// The schema name, stored in the `xdg:schema` attribute as libsecret does.
  public static let name = "org.tokenctl.ScopedToken"

  private typealias Attribute = KeyringSchema.Attribute

  /// The attributes shared by every token of one account: what `remove` searches for.
  static func accountAttributes(_ key: AccountKey, group: String) -> [String: String] {
    [Attribute.schema: name, Attribute.group: group, Attribute.type: key.type, Attribute.account: key.id]
  }

  /// The attributes that identify one token: an item is found, and replaced, by these.
  static func keyAttributes(_ key: AccountKey, scopes: ScopeSet, group: String) -> [String: String] {
    var attributes = accountAttributes(key, group: group)
    attributes[Attribute.scopes] = scopes.text
    return attributes
  }

  /// Every attribute of a token's item, written at `updated`.
  static func attributes(
    of account: Account, scopes: ScopeSet, tokens: TokenSummary, updated: Date = Date()
  ) -> [String: String] {
    var attributes = keyAttributes(account.key, scopes: scopes, group: account.group)
    attributes[Attribute.expires] = tokens.expiresAt.map { String(Int64($0.timeIntervalSince1970)) }
    attributes[Attribute.updated] = String(Int64(updated.timeIntervalSince1970))
    return attributes
  }

  /// The label a person sees in Seahorse: the account's, with the scopes.
  static func label(of account: Account, scopes: ScopeSet, defaultGroup: String) -> String {
    "\(KeyringSchema.label(of: account, defaultGroup: defaultGroup)) (\(scopes.text))"
  }
}
