import TokenKit

/// Any OpenID Connect provider, its endpoints discovered from an issuer the user names.
public enum OpenIDConnectPlugin: AccountTypePlugin {
  public static let name = "OpenIDConnect"

  public static let descriptor: EndpointDescriptor = {
    var descriptor = EndpointDescriptor(
      id: "oidc",
      displayName: "OpenID Connect (any issuer)",
      endpoints: .discoveredFromUserIssuer,
      // `offline_access` asks for a refresh token (OpenID Connect Core §11).
      defaultScopes: ["openid", "profile", "email", "offline_access"],
      redirect: .loopback()
    )
    // No client id can ship for an issuer nobody knows yet: register one where the issuer
    // lets us (RFC 7591), as oidc-agent does.
    descriptor.dynamicRegistration = true
    // glewlwyd (2.7.5, Debian 12's) registers `token_endpoint_auth_method: none` as a
    // confidential client without a secret, which its token endpoint then refuses; its own
    // member makes the client public as asked. Servers ignore members they do not know
    // (RFC 7591 §2).
    descriptor.additionalRegistrationMetadata = ["client_confidential": false]
    // Any issuer may enforce OpenID Connect Core §11 (LemonLDAP::NG does): without
    // `prompt=consent`, `offline_access` brings no refresh token.
    descriptor.offlineAccessNeedsConsent = true
    return descriptor
  }()

  public static var descriptors: [EndpointDescriptor] { [descriptor] }
}
