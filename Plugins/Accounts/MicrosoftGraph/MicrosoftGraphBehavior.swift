import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the Microsoft identity platform does its own way.
public struct MicrosoftGraphBehavior: AccountTypeBehavior {
  public init() {}

  /// The account's id is `oid.tid`, the object id of the user in their tenant, as MSAL's
  /// home account id is: Microsoft's `sub` is pairwise, different for every application,
  /// so another tool sharing the keyring group would not recognise it, while `oid` is
  /// the id Graph itself uses for the user (`/users/{oid}`).
  ///
  /// A guest (a user of another tenant, or a personal account, invited into this one) has
  /// the same `preferred_username` as their account at home, but another `oid` and
  /// `tid`: the two are different accounts, so the guest's name says in which tenant it
  /// is (`ada@contoso.com/TENANT-ID`), in `list`, completion and every message alike.
  /// Microsoft's ID tokens say so with `idp`: "identical to the value of the Issuer claim
  /// unless the user account isn't in the same tenant as the issuer, such as guests"
  /// (https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference).
  ///
  /// A personal Microsoft account may have the same address as a work account (one
  /// registered with a work address): its name says `/personal`
  /// (`sam@contoso.test/personal`), known by the tenant of personal accounts in `tid`
  /// (https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference).
  public func identity(claims: IDTokenClaims) -> AccountIdentity? {
    guard let oid = claims.string("oid"), let tid = claims.string("tid") else { return nil }
    var name = claims.preferredUsername ?? claims.email ?? claims.name ?? oid
    if let idp = claims.string("idp"), idp != claims.issuer {
      name += "/\(tid)"
    } else if tid.lowercased() == MicrosoftGraphPlugin.personalAccountsTenant {
      name += Self.personalSuffix
    }
    return AccountIdentity(id: "\(oid).\(tid)", name: name, issuer: claims.issuer)
  }

  /// What a personal account's name ends in.
  static let personalSuffix = "/personal"

  /// A browser already signed in to Microsoft signs that person in again without asking
  /// when the request sends no `prompt` ("prompt=select_account interrupts single
  /// sign-on", https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow):
  /// a new account asks the person to choose, as MSAL's interactive sign-in does by
  /// default; the repair of a kept account names its user instead, by the username it
  /// signs in with, not the name a guest is shown by.
  public func authorizationParameters(hasRefreshableAccount: Bool, signingInAgain again: Account?) -> [String: String] {
    guard let again else { return ["prompt": "select_account"] }
    // `domain_hint` skips the email-based discovery between a work and a personal account
    // of one address (`consumers` or `organizations`, same page).
    let personal =
      again.id.split(separator: ".").last.map(String.init)?.lowercased()
      == MicrosoftGraphPlugin.personalAccountsTenant
    return ["login_hint": Self.username(of: again), "domain_hint": personal ? "consumers" : "organizations"]
  }

  /// The username `account` signs in with: its name without what ``identity(claims:)``
  /// adds to a guest's or a personal account's.
  static func username(of account: Account) -> String {
    let tid = account.id.split(separator: ".").last.map { "/\($0)" }
    for suffix in [tid, personalSuffix].compactMap(\.self) where account.name.hasSuffix(suffix) {
      return String(account.name.dropLast(suffix.count))
    }
    return account.name
  }

  /// Microsoft says "consent needed" as `invalid_grant` with `suberror` `consent_required`,
  /// and "sign in again in person" as `interaction_required` or with the `basic_action` and
  /// `additional_action` suberrors ("Handling error codes in your application",
  /// https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes#handling-error-codes-in-your-application):
  /// the OpenID Connect codes for the same facts.
  public func normalized(_ error: OAuthError) -> OAuthError {
    var normalized = error
    switch error.otherMembers["suberror"] {
    case "consent_required": normalized.code = OAuthError.consentRequired
    case "basic_action", "additional_action": normalized.code = OAuthError.interactionRequired
    default: break
    }
    return normalized
  }

  /// AADSTS numbers (`error_codes`) whose remedy is a setting of the app registration
  /// (https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes).
  public func advice(for error: OAuthError) -> String? {
    let numbers = Set((error.otherMembers["error_codes"] ?? "").split(separator: " ").map(String.init))
    // AADSTS7000218: "The request body must contain the following parameter:
    // 'client_assertion' or 'client_secret'": the registration treats the app as
    // confidential, and tokenctl is a public client with no secret.
    if numbers.contains("7000218") {
      return "The app registration does not allow public clients: in the Microsoft Entra admin center, open the "
        + "app registration's Authentication page and set \"Allow public client flows\" to Yes (it sends no secret)."
    }
    // AADSTS9002327: "Tokens issued for the 'Single-Page Application' client-type may only be
    // redeemed via cross-origin requests": `http://localhost` is registered as a browser
    // app's redirect, whose codes only a web page may redeem.
    if numbers.contains("9002327") {
      return "The app registration lists http://localhost as a single-page application's redirect: in the Microsoft "
        + "Entra admin center, open the app registration's Authentication page, remove it under \"Single-page "
        + "application\" and add it under \"Mobile and desktop applications\"."
    }
    // AADSTS7000112 UnauthorizedClientApplicationDisabled: the app's service principal in
    // the tenant is disabled ("Enabled for users to sign in?" No,
    // https://learn.microsoft.com/en-us/entra/identity/enterprise-apps/disable-user-sign-in-portal);
    // nothing on this side can change that, and the public client has no secret to check.
    if numbers.contains("7000112") {
      return "The application is disabled in its tenant, which issues it no tokens: an administrator of that tenant "
        + "(a Cloud Application Administrator, an Application Administrator, or the app's owner) can enable it under "
        + "Enterprise applications, the app's Properties, \"Enabled for users to sign in?\"."
    }
    // AADSTS90002 InvalidTenantName: the tenant the endpoints name is not one Microsoft
    // knows, in this cloud (the discovery document and the signing keys answer it too).
    if numbers.contains("90002") { return Self.unknownTenantAdvice }
    // AADSTS700016: the application was not found in the directory.
    if numbers.contains("700016") {
      return "The client id is not an app registered in this tenant: check the client id, or sign in through a "
        + "tenant where the app is registered (tenant \"common\" or \"organizations\" for a multi-tenant app)."
    }
    return nil
  }

  /// What to do about a tenant Microsoft does not know (AADSTS90002, "Check to make sure
  /// you have the correct tenant ID and are signing into the correct cloud",
  /// https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes).
  static let unknownTenantAdvice =
    "Microsoft does not know this tenant: set the type's tenant to the \"Directory (tenant) ID\" on the app "
    + "registration's Overview page, or to a verified domain of the tenant, or to \"organizations\" or \"common\"; "
    + "a tenant of a national cloud also needs that cloud's authority_host."

  /// Every tenant's issuer is `https://AUTHORITY/{tid}/v2.0` ("Fetch the OpenID
  /// configuration document",
  /// https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc): an
  /// account signed in through `common` or `organizations` keeps refreshing at its own
  /// tenant, `…/{tid}/oauth2/v2.0/token`, as MSAL does with a cached account, since
  /// Microsoft's refresh tokens are not bound to a tenant and another tenant would issue
  /// tokens for its guest object instead. An issuer at another authority host (another
  /// cloud) is not reached from this one.
  public func endpoints(_ configured: Endpoints, forIssuer issuer: String) -> Endpoints? {
    guard let issuerURL = URL(string: issuer), let tenant = MicrosoftGraphPlugin.tenant(ofIssuer: issuerURL),
      MicrosoftGraphPlugin.authority(of: issuerURL) == MicrosoftGraphPlugin.authority(of: configured.token),
      let authority = MicrosoftGraphPlugin.authority(of: configured.token)
    else { return nil }
    let graphHost = configured.userinfo.flatMap(MicrosoftGraphPlugin.authority(of:)) ?? "graph.microsoft.com"
    return MicrosoftGraphPlugin.endpoints(authorityHost: authority, tenant: tenant, graphHost: graphHost)
  }

  /// An app-only token (the client credentials grant) is issued by one tenant, the app's
  /// or a customer's that consented to it: `common`, `organizations` and `consumers` are
  /// refused by the platform ("Get a token",
  /// https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-client-creds-grant-flow#get-a-token).
  public func clientCredentialsProblem(_ configuration: ServiceConfiguration) -> TokenKitError? {
    guard let tenant = MicrosoftGraphPlugin.tenant(ofEndpoint: configuration.endpoints.token),
      MicrosoftGraphPlugin.multiTenantAliases.contains(tenant)
    else { return nil }
    return TokenKitError(
      .notConfigured,
      "a service account of type '\(configuration.descriptor.id)' needs the tenant it belongs to, and the type is set "
        + "up for '\(tenant)', which issues no app-only tokens; nothing was sent",
      remedy: .configure(type: configuration.descriptor.id, setting: "tenant"))
  }
}
