import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// GitLab.com through an application the user registers as not confidential: a public
/// client with PKCE, an OpenID provider, with the device grant and RFC 7009 revocation.
///
/// The endpoints are written out rather than discovered from `https://gitlab.com`:
/// GitLab's discovery document (doorkeeper-openid_connect) does not list the device
/// authorization endpoint, which GitLab serves since 17.1, so discovery would lose
/// `login --device`. A self-managed instance is the same with its own host.
public enum GitLabPlugin: AccountTypePlugin {
  public static let name = "GitLab"

  static let origin = "https://gitlab.com"

  public static let descriptor = EndpointDescriptor(
    id: "gitlab",
    displayName: "GitLab.com",
    endpoints: .fixed(
      Endpoints(
        authorization: URL(string: "\(origin)/oauth/authorize")!,
        token: URL(string: "\(origin)/oauth/token")!,
        deviceAuthorization: URL(string: "\(origin)/oauth/authorize_device")!,
        revocation: URL(string: "\(origin)/oauth/revoke")!,
        userinfo: URL(string: "\(origin)/oauth/userinfo")!,
        jwks: URL(string: "\(origin)/oauth/discovery/keys")!,
        issuer: origin)),
    // `openid profile` name the user in the ID token; `read_repository` and
    // `write_repository` are exactly git over HTTPS. `api` (full read and write of the
    // API) is left for users who need it; GitLab sends refresh tokens without asking.
    defaultScopes: ["openid", "profile", "read_repository", "write_repository"],
    redirect: .loopback(),
    // GitLab takes an OAuth token for git over HTTPS with the username `oauth2`.
    git: GitIntegration(hosts: ["gitlab.com"], username: .literal("oauth2")),
    apiBase: URL(string: "\(origin)/api/v4")!
  )

  public static var descriptors: [EndpointDescriptor] { [descriptor] }
}
