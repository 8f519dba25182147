/// The scopes an access token carries, as far as tokenctl can tell, and whether anything
/// but tokenctl's request says so.
///
/// RFC 6749 §5.1 lets a client take a token response without `scope` as granting what it
/// asked for, and some servers answer a refresh for other scopes with none while issuing
/// what the grant had all along. So, in this order:
/// 1. an access token that is a JWT with a `scope` claim (a space-separated string: RFC 9068
///    §2.2.3, RFC 8693 §4.2) or `scp` (a string or an array of strings, as some providers issue
///    them) carries what the claim says, whatever was asked. The claim is read, not
///    trusted: the token is not the client's to verify, and nothing but this report uses it;
/// 2. a token the server's answer named scopes for carries those (`TokenSet.scope`);
/// 3. otherwise it carries what was asked, as far as anyone said: not confirmed.
public struct CarriedScopes: Sendable, Hashable {
  public var scopes: [String]
  /// Whether the token or the server named the scopes; false when they are only those
  /// asked for.
  public var confirmed: Bool

  public init(scopes: [String], confirmed: Bool) {
    self.scopes = scopes
    self.confirmed = confirmed
  }

  /// What `tokens` carry, when `asked` are the scopes they were asked for: a token for
  /// other scopes than the account's own (RFC 6749 §6), where a server that ignores the
  /// asked scope issues the grant's instead and may well say nothing.
  public init(_ tokens: TokenSet, asked: [String]) {
    if let claimed = Self.claimedScopes(of: tokens.accessToken) {
      self.init(scopes: claimed, confirmed: true)
    } else if let named = tokens.scope {
      self.init(scopes: named, confirmed: true)
    } else {
      self.init(scopes: asked, confirmed: false)
    }
  }

  /// What an account's own token carries: the scopes of its grant, which the sign-in's
  /// answer named, or confirmed as asked by naming none (§5.1 obliges a server to name
  /// them when they differ), unless the token itself says otherwise. A refresh of the
  /// account's own token asks for no other scope (§6), so it keeps them.
  public init(ownToken tokens: TokenSet, granted: [String]) {
    self.init(scopes: Self.claimedScopes(of: tokens.accessToken) ?? tokens.scope ?? granted, confirmed: true)
  }

  /// The `scope` or `scp` claim of an access token that is a JWT; nil for any other token,
  /// or a JWT without either claim.
  static func claimedScopes(of accessToken: String) -> [String]? {
    // Most access tokens are opaque: not even worth a parse unless they look like a JWS.
    guard accessToken.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2,
      let token = try? JSONWebToken(compact: accessToken)
    else { return nil }
    for name in ["scope", "scp"] {
      switch token.claims[name] {
      case .string(let text)?: return text.split(separator: " ").map(String.init)
      case .array(let items)?:
        let scopes = items.compactMap(\.stringValue)
        if scopes.count == items.count { return scopes }
      default: continue
      }
    }
    return nil
  }
}
