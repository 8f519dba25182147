import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Bitbucket Cloud through an OAuth consumer the user adds to a workspace.
///
/// Bitbucket issues a new refresh token with every refresh; the core keeps whichever the
/// server sends. It has no device grant and no revocation endpoint, so signing out only
/// forgets the tokens, which expire on their own (access tokens after two hours).
public enum BitbucketPlugin: AccountTypePlugin {
  public static let name = "Bitbucket"

  public static let descriptor = EndpointDescriptor(
    id: "bitbucket",
    displayName: "Bitbucket Cloud (OAuth consumer)",
    endpoints: .fixed(
      Endpoints(
        authorization: URL(string: "https://bitbucket.org/site/oauth2/authorize")!,
        token: URL(string: "https://bitbucket.org/site/oauth2/access_token")!)),
    // A consumer's permissions cap what it gets whatever is asked: `account` for
    // `GET /2.0/user`, `repository:write` (which includes reading) for git push.
    defaultScopes: ["account", "repository", "repository:write"],
    redirect: .loopback(),
    // Bitbucket's documentation and examples authenticate consumers with HTTP Basic at
    // the token endpoint for every grant; every consumer has a secret.
    tokenEndpointAuthentication: .clientSecretBasic,
    // Bitbucket takes an OAuth access token over HTTPS with this fixed username.
    git: GitIntegration(hosts: ["bitbucket.org"], username: .literal("x-token-auth")),
    apiBase: URL(string: "https://api.bitbucket.org/2.0")!
  )

  public static var descriptors: [EndpointDescriptor] { [descriptor] }

  public static var behaviors: [String: any AccountTypeBehavior] { [descriptor.id: BitbucketBehavior()] }
}
