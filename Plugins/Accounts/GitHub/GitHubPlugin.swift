import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// GitHub.com through an OAuth app the user registers: tokens for git over HTTPS and the
/// REST API.
///
/// GitHub Enterprise Server serves the same endpoints under its own host
/// (`https://HOST/login/oauth/…`, API at `https://HOST/api/v3`). ``GitHubBehavior`` takes
/// its API from the descriptor's `apiBase`, so such a type is this descriptor with the
/// host replaced and the same behavior registered for its id.
public enum GitHubPlugin: AccountTypePlugin {
  public static let name = "GitHub"

  public static let descriptor = EndpointDescriptor(
    id: "github",
    displayName: "GitHub (OAuth app)",
    endpoints: .fixed(
      Endpoints(
        authorization: URL(string: "https://github.com/login/oauth/authorize")!,
        token: URL(string: "https://github.com/login/oauth/access_token")!,
        deviceAuthorization: URL(string: "https://github.com/login/device/code")!,
        // GitHub revokes through its REST API, not RFC 7009: `GitHubBehavior.revoke`.
        revocation: nil,
        // Not an OpenID provider: no ID token, no userinfo. `GitHubBehavior.identity`
        // asks the REST API instead.
        userinfo: nil, jwks: nil, issuer: nil)),
    // `repo` is the only OAuth app scope that lets git read and push private
    // repositories; `read:org` lets API calls see organization membership, as `gh` asks.
    defaultScopes: ["repo", "read:org"],
    // GitHub accepts any port on a registered loopback callback (`http://127.0.0.1/`).
    redirect: .loopback(),
    // An OAuth app's token endpoint wants the client secret even with PKCE.
    tokenEndpointAuthentication: .clientSecretPost,
    // GitHub ignores the username that comes with an OAuth token; `oauth2` is what
    // other credential helpers send.
    git: GitIntegration(hosts: ["github.com"], username: .literal("oauth2")),
    apiBase: URL(string: "https://api.github.com")!
  )

  public static var descriptors: [EndpointDescriptor] { [descriptor] }

  public static var behaviors: [String: any AccountTypeBehavior] { [descriptor.id: GitHubBehavior()] }
}
