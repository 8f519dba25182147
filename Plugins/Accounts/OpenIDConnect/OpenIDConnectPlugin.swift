import TokenKit

/// Any OpenID Connect provider, its endpoints discovered from an issuer the user names.
public enum OpenIDConnectPlugin: AccountTypePlugin {
  public static let name = "OpenIDConnect"

  public static let descriptor = EndpointDescriptor(
    id: "oidc",
    displayName: "OpenID Connect (any issuer)",
    endpoints: .discoveredFromUserIssuer,
    // `offline_access` asks for a refresh token (OpenID Connect Core §11).
    defaultScopes: ["openid", "profile", "email", "offline_access"],
    redirect: .loopback()
  )

  public static var descriptors: [EndpointDescriptor] { [descriptor] }
}
