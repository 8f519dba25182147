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

    // The person picks the work account while the personal one is repaired: the error
    // names both, each as itself.
    try await makeNeedSignIn("graph:sam@contoso.test/personal")
    var environment = environment()
    environment["MICROSOFT_STANDIN_ACCOUNT_KIND"] = "work"
    let wrong = try await tokenctl(["login", "graph:sam@contoso.test/personal"], environment: environment)
    #expect(wrong.status == 5, "\(wrong.stderr)")
    #expect(
      wrong.stderr.contains("signed in graph:sam@contoso.test, not graph:sam@contoso.test/personal"),
      "\(wrong.stderr)")
  }
}
