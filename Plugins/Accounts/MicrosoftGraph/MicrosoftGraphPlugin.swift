import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Microsoft Graph through the Microsoft identity platform (v2.0 endpoints): the account
/// type of the Azure AD v2.0 walkthrough this project descends from.
public enum MicrosoftGraphPlugin: AccountTypePlugin {
  public static let name = "MicrosoftGraph"

  /// The authority for any work, school or personal account. A tenant id or
  /// `organizations`/`consumers` narrows it; configuring that comes with the plugins issue.
  static let authority = "https://login.microsoftonline.com/common/oauth2/v2.0"

  public static let descriptor = EndpointDescriptor(
    id: "graph",
    displayName: "Microsoft Graph (Microsoft identity platform v2.0)",
    endpoints: .fixed(
      Endpoints(
        authorization: URL(string: "\(authority)/authorize")!,
        token: URL(string: "\(authority)/token")!,
        deviceAuthorization: URL(string: "\(authority)/devicecode")!,
        // Microsoft publishes no RFC 7009 revocation endpoint.
        revocation: nil,
        userinfo: URL(string: "https://graph.microsoft.com/oidc/userinfo")!,
        // The keys that sign ID tokens of every tenant. The issuer is left open: it names
        // the user's tenant (`…/{tid}/v2.0`), which `common` cannot know in advance.
        jwks: URL(string: "https://login.microsoftonline.com/common/discovery/v2.0/keys")!)),
    // The walkthrough's scopes: sign-in, a refresh token, and reading users to search them.
    defaultScopes: ["openid", "profile", "offline_access", "User.Read", "User.ReadBasic.All"],
    // Microsoft registers desktop redirects as `http://localhost` and ignores the port.
    redirect: .loopback(host: "localhost"),
    // Microsoft's device code endpoint says `authorization_declined` where RFC 8628 §3.5
    // says `access_denied`.
    deviceGrantErrorAliases: ["authorization_declined": "access_denied"],
    // National clouds (graph.microsoft.us, microsoftgraph.chinacloudapi.cn) are types of
    // their own with another API base; `GraphClient` follows whichever the type names.
    apiBase: URL(string: "https://graph.microsoft.com/v1.0")!
  )

  public static var descriptors: [EndpointDescriptor] { [descriptor] }

  public static var behaviors: [String: any AccountTypeBehavior] { [descriptor.id: MicrosoftGraphBehavior()] }
}
