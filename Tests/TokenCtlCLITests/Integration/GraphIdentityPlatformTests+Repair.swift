import Foundation
import TestSupport
import Testing

/// The printed "sign in again" command repairs the account where it lives, whatever
/// config.toml names now: a guest at the tenant it is a guest in, a personal account at
/// the personal accounts' tenant, each steered with `domain_hint` as MSAL does.
extension GraphIdentityPlatformTests {
  @Test func aGuestIsRepairedInItsOwnTenantWhenConfigNamesAnother() async throws {
    let fabrikam = platform.tenantID("fabrikam")
    try configure(tenant: fabrikam)
    try await signIn()
    let guest = "graph:ada@contoso.test/\(fabrikam)"
    try await makeNeedSignIn(guest)
    try configure(tenant: platform.tenantID("contoso"))
    let repair = try await tokenctl("login", guest)
    #expect(repair.status == 0, "\(repair.stderr)")
    let last = try #require(try platform.authorizations().last)
    #expect(last["tenant"] as? String == fabrikam)
    #expect((last["query"] as? [String: Any])?["domain_hint"] as? String == "organizations")
    #expect(try await tokenctl("token", guest).status == 0)
  }

  @Test func aPersonalAccountSharingItsAddressIsRepairedAtTheConsumersTenant() async throws {
    try await signIn("sam@contoso.test")
    try configure(tenant: "consumers")
    try await signIn("sam@contoso.test")
    try configure(tenant: "common")
    try await makeNeedSignIn("graph:sam@contoso.test/personal")
    let repair = try await tokenctl("login", "graph:sam@contoso.test/personal")
    #expect(repair.status == 0, "\(repair.stderr)")
    let query = try lastAuthorization()
    #expect(query["domain_hint"] as? String == "consumers")
    #expect(query["login_hint"] as? String == "sam@contoso.test")
    #expect(try await tokenctl("token", "graph:sam@contoso.test/personal").status == 0)
  }
}
