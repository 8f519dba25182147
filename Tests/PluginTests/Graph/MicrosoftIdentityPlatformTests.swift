import AccountTypeFiles
import Foundation
import MicrosoftGraphAccount
import Testing
import TokenKit

/// The `graph` type's reading of the Microsoft identity platform, as its documentation
/// describes it (each test names the page): tenants, suberrors, AADSTS numbers, guests.
@Suite struct MicrosoftIdentityPlatformTests {
  static let behavior = MicrosoftGraphBehavior()

  static func configured(_ options: [String: String]) throws -> EndpointDescriptor {
    try MicrosoftGraphPlugin.configure(MicrosoftGraphPlugin.descriptor, options: options)
  }

  static func endpoints(_ options: [String: String] = [:]) throws -> Endpoints {
    guard case .fixed(let endpoints) = try configured(options).endpoints else {
      throw TokenKitError(.notConfigured, "")
    }
    return endpoints
  }

  /// Every tenant's issuer is `https://{authority}/{tid}/v2.0`
  /// (https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc): an
  /// account signed in through `common` refreshes at its own tenant.
  @Test(arguments: ["common", "organizations", "fabrikam.onmicrosoft.com", "b7e1c1a4-0000-4000-8000-00000000000b"])
  func anAccountRefreshesAtTheTenantItsIssuerNames(configuredTenant: String) throws {
    let configured = try Self.endpoints(["tenant": configuredTenant])
    let own = try #require(
      Self.behavior.endpoints(configured, forIssuer: "https://login.microsoftonline.com/a1-tid/v2.0"))
    #expect(own.token.absoluteString == "https://login.microsoftonline.com/a1-tid/oauth2/v2.0/token")
    #expect(own.jwks?.absoluteString == "https://login.microsoftonline.com/a1-tid/discovery/v2.0/keys")
    #expect(own.userinfo?.absoluteString == "https://graph.microsoft.com/oidc/userinfo")
  }

  @Test func aStandInWithAPortKeepsItsPort() throws {
    let configured = try Self.endpoints(["authority_host": "127.0.0.1:8443", "graph_host": "127.0.0.1:8443"])
    #expect(configured.token.absoluteString == "https://127.0.0.1:8443/common/oauth2/v2.0/token")
    let own = try #require(Self.behavior.endpoints(configured, forIssuer: "https://127.0.0.1:8443/t-1/v2.0"))
    #expect(own.token.absoluteString == "https://127.0.0.1:8443/t-1/oauth2/v2.0/token")
    #expect(
      try Self.configured(["graph_host": "127.0.0.1:8443"]).apiBase?.absoluteString == "https://127.0.0.1:8443/v1.0")
  }

  @Test(arguments: ["a:b:c", "host:", ":443", "host:44x", "host/x", "host:123456"])
  func malformedHostsAreRefused(host: String) {
    #expect(throws: TokenKitError.self) { try Self.configured(["authority_host": host]) }
  }

  /// An issuer of another cloud, or of no tenant, is not reached from this authority.
  @Test(arguments: [
    "https://login.microsoftonline.us/a1-tid/v2.0", "https://login.microsoftonline.com/v2.0",
    "https://login.microsoftonline.com:444/a1-tid/v2.0", "https://sts.windows.net/a1-tid/",
  ])
  func anIssuerOfAnotherAuthorityIsRefused(issuer: String) throws {
    #expect(Self.behavior.endpoints(try Self.endpoints(), forIssuer: issuer) == nil)
    let account = Account(
      type: "graph", id: "o.t", name: "ada@contoso.com", group: "default", createdAt: .now, updatedAt: .now,
      issuer: issuer)
    #expect(throws: TokenKitError.self) {
      try ServiceConfiguration.requireRecordedIssuer(
        of: account, in: MicrosoftGraphPlugin.descriptor, behavior: Self.behavior)
    }
  }

  /// "Handling error codes in your application"
  /// (https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes#handling-error-codes-in-your-application).
  @Test(
    arguments: [
      ("invalid_grant", "consent_required", "consent_required"),
      ("interaction_required", "basic_action", "interaction_required"),
      ("interaction_required", "additional_action", "interaction_required"),
      ("invalid_grant", "bad_token", "invalid_grant"),
      ("invalid_grant", nil, "invalid_grant"),
    ] as [(String, String?, String)])
  func suberrorsBecomeTheStandardsCodes(code: String, suberror: String?, expected: String) {
    let error = OAuthError(code: code, otherMembers: suberror.map { ["suberror": $0] } ?? [:])
    #expect(Self.behavior.normalized(error).code == expected)
  }

  /// AADSTS7000218 on a public client: the registration's "Allow public client flows".
  @Test func aPublicClientRefusedForASecretIsToldAboutPublicClientFlows() {
    let error = OAuthError(
      code: "invalid_client",
      errorDescription:
        "AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
      otherMembers: ["error_codes": "7000218"])
    #expect(Self.behavior.advice(for: error)?.contains("Allow public client flows") == true)
    #expect(Self.behavior.advice(for: OAuthError(code: "invalid_client")) == nil)
  }

  /// Registration mistakes whose remedy only Microsoft's error reference names
  /// (https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes): each
  /// number, words the advice must have, and words it must not.
  @Test(arguments: [
    ("9002327", "invalid_request", "\"Mobile and desktop applications\"", "secret"),
    ("7000112", "unauthorized_client", "disabled in its tenant", "secret"),
    ("7000112", "unauthorized_client", "Cloud Application Administrator", "client id"),
  ])
  func registrationMistakesGetTheirOwnAdvice(number: String, code: String, wanted: String, unwanted: String) throws {
    let advice = try #require(
      Self.behavior.advice(for: OAuthError(code: code, otherMembers: ["error_codes": number])))
    #expect(advice.contains(wanted), "\(advice)")
    #expect(!advice.lowercased().contains(unwanted), "\(advice)")
  }

  static func account(name: String, id: String) -> Account {
    Account(
      type: "graph", id: id, name: name, group: "default", createdAt: Date(timeIntervalSince1970: 0),
      updatedAt: Date(timeIntervalSince1970: 0))
  }

  /// A browser signed in to Microsoft signs its person in again unless the request says
  /// otherwise (https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow,
  /// `prompt`): a new account lets the person choose; a repair names its user by username.
  @Test func aNewAccountLetsThePersonChooseAndARepairNamesItsUser() {
    #expect(
      Self.behavior.authorizationParameters(hasRefreshableAccount: true, signingInAgain: nil)
        == ["prompt": "select_account"])
    let member = Self.account(name: "ada@contoso.test", id: "ada00000-c0a7.c0a7050c")
    #expect(
      Self.behavior.authorizationParameters(hasRefreshableAccount: true, signingInAgain: member)
        == ["login_hint": "ada@contoso.test", "domain_hint": "organizations"])
    let guest = Self.account(name: "ada@contoso.test/fab41ca0", id: "ada00000-fab4.fab41ca0")
    #expect(
      Self.behavior.authorizationParameters(hasRefreshableAccount: true, signingInAgain: guest)
        == ["login_hint": "ada@contoso.test", "domain_hint": "organizations"])
  }

  static func idToken(_ claims: String) -> String { ProviderQuirkTests.idToken(claims) }

  /// A guest's `idp` names their home issuer
  /// (https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference):
  /// the member and the guest account of one person have different names.
  @Test func aGuestIsNamedWithTheTenantItIsAGuestIn() throws {
    let member = try IDTokenClaims(
      unverified: Self.idToken(
        #"{"iss":"https://login.microsoftonline.com/t-a/v2.0","sub":"s","aud":"app","exp":2000000000,"iat":1900000000,"#
          + #""oid":"o-1","tid":"t-a","preferred_username":"ada@contoso.com"}"#))
    let guest = try IDTokenClaims(
      unverified: Self.idToken(
        #"{"iss":"https://login.microsoftonline.com/t-b/v2.0","sub":"s2","aud":"app","exp":2000000000,"#
          + #""iat":1900000000,"oid":"o-2","tid":"t-b","preferred_username":"ada@contoso.com","#
          + #""idp":"https://sts.windows.net/t-a/"}"#))
    let memberName = try #require(Self.behavior.identity(claims: member)).name
    let guestName = try #require(Self.behavior.identity(claims: guest)).name
    #expect(memberName == "ada@contoso.com")
    #expect(guestName == "ada@contoso.com/t-b")
  }

  /// A personal account on a work address is not named like the work account: `tid` is
  /// the personal accounts' tenant
  /// (https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference);
  /// its repair still names the address alone.
  @Test func aPersonalAccountOnAWorkAddressIsToldApart() throws {
    let personal = try IDTokenClaims(
      unverified: Self.idToken(
        #"{"iss":"https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0","sub":"s","#
          + #""aud":"app","exp":2000000000,"iat":1900000000,"oid":"00000000-0000-0000-5a30-000000000007","#
          + #""tid":"9188040d-6c67-4c5b-b112-36a304b66dad","preferred_username":"sam@contoso.com"}"#))
    let identity = try #require(Self.behavior.identity(claims: personal))
    #expect(identity.name == "sam@contoso.com/personal")
    let account = Self.account(name: identity.name, id: identity.id)
    #expect(
      Self.behavior.authorizationParameters(hasRefreshableAccount: false, signingInAgain: account)["login_hint"]
        == "sam@contoso.com")
  }

  /// App-only tokens need a tenant and the `.default` scope
  /// (https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-client-creds-grant-flow).
  @Test func aServiceAccountNeedsATenantAndAsksForDotDefault() throws {
    let common = try Self.configured([:])
    #expect(common.clientCredentialsScopes == ["https://graph.microsoft.com/.default"])
    let configuration = ServiceConfiguration(
      descriptor: common, endpoints: try Self.endpoints(), client: ClientIdentity(id: "app"), issuer: nil)
    let problem = try #require(Self.behavior.clientCredentialsProblem(configuration))
    #expect(problem.code == .notConfigured)
    #expect(problem.remedy == .configure(type: "graph", setting: "tenant"))
    let tenant = ServiceConfiguration(
      descriptor: try Self.configured(["tenant": "contoso.onmicrosoft.com"]),
      endpoints: try Self.endpoints(["tenant": "contoso.onmicrosoft.com"]), client: ClientIdentity(id: "app"),
      issuer: nil)
    #expect(Self.behavior.clientCredentialsProblem(tenant) == nil)
  }
}
