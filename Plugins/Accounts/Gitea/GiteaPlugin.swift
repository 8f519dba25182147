import TokenKit

/// Any Gitea or Forgejo instance (Codeberg, a company's forge), its endpoints discovered
/// from the instance the user names: both serve OpenID Connect discovery at
/// `https://HOST/.well-known/openid-configuration`.
///
/// The issuer must be written as the instance states it, which is its root URL with the
/// trailing slash (`https://codeberg.org/`) for Gitea.
public enum GiteaPlugin: AccountTypePlugin {
  public static let name = "Gitea"

  public static let descriptor = EndpointDescriptor(
    id: "gitea",
    displayName: "Gitea or Forgejo (any instance)",
    endpoints: .discoveredFromUserIssuer,
    // An ID token names the user. Gitea sends refresh tokens without `offline_access`,
    // and its OAuth tokens reach git and the API without scopes of their own unless the
    // instance enables additional grant scopes.
    defaultScopes: ["openid", "profile"],
    // Gitea accepts any port on a registered `http://127.0.0.1/` redirect for public
    // clients, as RFC 8252 §7.3 asks.
    redirect: .loopback(),
    // The git host is the instance's own, known only once the user names it.
    git: GitIntegration(hosts: [], username: .literal("oauth2"))
  )

  public static var descriptors: [EndpointDescriptor] { [descriptor] }
}
