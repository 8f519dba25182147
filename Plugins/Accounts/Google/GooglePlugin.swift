import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Google accounts through a "Desktop app" OAuth client the user creates in the Google
/// Cloud console. Endpoints, keys and the RFC 7009 revocation endpoint come from Google's
/// discovery document.
public enum GooglePlugin: AccountTypePlugin {
  public static let name = "Google"

  public static let descriptor = EndpointDescriptor(
    id: "google",
    displayName: "Google",
    endpoints: .discovered(issuer: URL(string: "https://accounts.google.com")!),
    // Sign-in only; users add API scopes (`https://www.googleapis.com/auth/…`) in
    // config.toml for what they call.
    defaultScopes: ["openid", "email", "profile"],
    // Google ended the out-of-band redirect (`urn:ietf:wg:oauth:2.0:oob`) in 2022;
    // desktop clients redirect to a loopback address on any port.
    redirect: .loopback(),
    // A desktop client has a secret that Google's token endpoint requires even with
    // PKCE, though Google documents it as not confidential.
    tokenEndpointAuthentication: .clientSecretPost,
    apiBase: URL(string: "https://www.googleapis.com")!
  )

  public static var descriptors: [EndpointDescriptor] { [descriptor] }

  public static var behaviors: [String: any AccountTypeBehavior] { [descriptor.id: GoogleBehavior()] }
}
