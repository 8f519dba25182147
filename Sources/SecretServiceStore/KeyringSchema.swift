import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The Secret Service schema of tokenctl's items, documented in tokenctl-keyring(5).
///
/// Attributes are stored unencrypted by some Secret Service providers and are visible to
/// every client on the session bus, so they hold only what is not secret: what identifies
/// the account, and what `list` shows. The tokens are the item's secret.
public enum KeyringSchema {
  /// The schema name, stored in the `xdg:schema` attribute as libsecret does.
  public static let name = "org.tokenctl.Account"
  /// The content type of the secret, which is JSON. Not `application/json`: KWallet
  /// keeps the content type, and libsecret's text readers (`secret-tool lookup`, Python's
  /// `secretstorage` `get_secret` does not care) take only `text/plain` as text
  /// (``SecretServiceQuirk/keepsContentType``).
  public static let contentType = "text/plain"

  /// Attribute names.
  public enum Attribute {
    public static let schema = "xdg:schema"
    public static let type = "type"
    public static let account = "account"
    public static let group = "group"
    public static let name = "name"
    public static let scopes = "scopes"
    public static let created = "created"
    public static let updated = "updated"
    public static let expires = "expires"
    public static let refreshable = "refreshable"
    public static let issuer = "issuer"
    public static let clientID = "client-id"
    public static let authority = "authority"
    public static let state = "state"
    public static let grant = "grant"
  }

  /// The attributes an item may lack, and so may have to clear on an update.
  static let optionalAttributes = [
    Attribute.expires, Attribute.issuer, Attribute.clientID, Attribute.authority, Attribute.grant,
  ]

  /// The `state` attribute's value for an account whose refresh token was rejected.
  public static let needsSignInState = "needs-sign-in"

  /// The `grant` attribute's value for a service account (``Account/isServiceAccount``);
  /// the attribute is absent on other accounts.
  public static let clientCredentialsGrant = "client_credentials"

  /// The attributes to search for `query` in `group`.
  static func searchAttributes(_ query: AccountQuery, group: String) -> [String: String] {
    var attributes = [Attribute.schema: name, Attribute.group: group]
    attributes[Attribute.type] = query.type
    attributes[Attribute.account] = query.id
    attributes[Attribute.name] = query.name
    return attributes
  }

  /// The attributes that identify one account: an item is found, and replaced, by these.
  static func keyAttributes(_ key: AccountKey, group: String) -> [String: String] {
    searchAttributes(AccountQuery(type: key.type, id: key.id), group: group)
  }

  /// Every attribute of an account's item.
  static func attributes(of account: Account, tokens: TokenSummary) -> [String: String] {
    var attributes = keyAttributes(account.key, group: account.group)
    attributes[Attribute.name] = account.name
    attributes[Attribute.scopes] = account.scopes.joined(separator: " ")
    attributes[Attribute.created] = String(Int64(account.createdAt.timeIntervalSince1970))
    attributes[Attribute.updated] = String(Int64(account.updatedAt.timeIntervalSince1970))
    attributes[Attribute.expires] = tokens.expiresAt.map { String(Int64($0.timeIntervalSince1970)) }
    attributes[Attribute.refreshable] = tokens.refreshable ? "true" : "false"
    attributes[Attribute.issuer] = account.issuer
    attributes[Attribute.clientID] = account.clientID
    attributes[Attribute.authority] = account.authority
    attributes[Attribute.state] = account.needsSignIn ? needsSignInState : "ok"
    if account.isServiceAccount { attributes[Attribute.grant] = clientCredentialsGrant }
    return attributes
  }

  /// Reads an item's attributes back; `nil` when they are not a complete tokenctl item.
  static func listing(from stored: [String: String]) -> AccountListing? {
    // An empty value is an attribute cleared on a provider that merges attributes
    // (``SecretServiceQuirk/mergesAttributes``): it reads as absent.
    let attributes = stored.filter { !$0.value.isEmpty }
    guard attributes[Attribute.schema] == name,
      let type = attributes[Attribute.type], let id = attributes[Attribute.account],
      let group = attributes[Attribute.group], let displayName = attributes[Attribute.name],
      let created = attributes[Attribute.created].flatMap(Int64.init),
      let updated = attributes[Attribute.updated].flatMap(Int64.init)
    else { return nil }
    let expires: Date?
    if let text = attributes[Attribute.expires] {
      guard let seconds = Int64(text) else { return nil }
      expires = Date(timeIntervalSince1970: TimeInterval(seconds))
    } else {
      expires = nil
    }
    let account = Account(
      type: type, id: id, name: displayName, group: group,
      scopes: (attributes[Attribute.scopes] ?? "").split(separator: " ").map(String.init),
      createdAt: Date(timeIntervalSince1970: TimeInterval(created)),
      updatedAt: Date(timeIntervalSince1970: TimeInterval(updated)),
      issuer: attributes[Attribute.issuer], clientID: attributes[Attribute.clientID],
      needsSignIn: attributes[Attribute.state] == needsSignInState,
      isServiceAccount: attributes[Attribute.grant] == clientCredentialsGrant,
      authority: attributes[Attribute.authority])
    return AccountListing(
      account: account,
      tokens: TokenSummary(expiresAt: expires, refreshable: attributes[Attribute.refreshable] == "true"))
  }

  /// The label a person sees in Seahorse: `tokenctl: graph — ada@contoso.com`, with the
  /// group added when it is not the default one.
  static func label(of account: Account, defaultGroup: String) -> String {
    let base = "tokenctl: \(account.type) — \(account.name)"
    return account.group == defaultGroup ? base : "\(base) [\(account.group)]"
  }
}
