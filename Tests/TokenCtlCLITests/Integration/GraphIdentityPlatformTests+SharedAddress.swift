import Foundation
import TestSupport
import Testing

/// One address with a work account and a personal Microsoft account (the stand-in's
/// sam@contoso.test): two accounts, told apart wherever tokenctl shows one.
extension GraphIdentityPlatformTests {
  @Test func aWorkAndAPersonalAccountOnOneAddressAreToldApart() async throws {
    try await signIn("sam@contoso.test")
    try configure(tenant: "consumers")
    let personal = try await signIn("sam@contoso.test")
    #expect(personal.stdout.contains("as sam@contoso.test/personal "), "\(personal.stdout)")
    try configure(tenant: "common")

    let list = try await tokenctl("list")
    let names = list.stdout.split(separator: "\n").dropFirst().compactMap { $0.split(separator: " ").dropFirst().first }
    #expect(Set(names.map(String.init)) == ["sam@contoso.test", "sam@contoso.test/personal"], "\(list.stdout)")
    #expect(try await tokenctl("token", "graph:sam@contoso.test").status == 0)
    #expect(try await tokenctl("token", "graph:sam@contoso.test/personal").status == 0)

    // Where the person at the browser picks the work account, a repair of the personal one
    // goes to the personal accounts' tenant all the same, which signs in no work account.
    try await makeNeedSignIn("graph:sam@contoso.test/personal")
    var environment = environment()
    environment["MICROSOFT_STANDIN_ACCOUNT_KIND"] = "work"
    let repair = try await tokenctl(["login", "graph:sam@contoso.test/personal"], environment: environment)
    #expect(repair.status == 0, "\(repair.stderr)")
    #expect(repair.stdout.contains("as sam@contoso.test/personal "), "\(repair.stdout)")
  }
}
