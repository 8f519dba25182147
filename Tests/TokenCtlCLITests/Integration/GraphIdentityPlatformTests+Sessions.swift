import Foundation
import TestSupport
import Testing

/// Several people in one browser: a browser already signed in to Microsoft signs that
/// person in again unless told otherwise (the stand-in's `standin_session` cookie).
extension GraphIdentityPlatformTests {
  /// The query of the last authorization request the stand-in answered.
  func lastAuthorization() throws -> [String: Any] {
    try #require(try platform.authorizations().last?["query"] as? [String: Any])
  }

  /// Makes `account` need a new sign-in: the server wants the user in person.
  func makeNeedSignIn(_ account: String) async throws {
    try await platform.control(["next_token_errors": ["refresh_token": [["kind": "interaction_required"]]]])
    let refresh = try await tokenctl("refresh", account)
    try #require(refresh.status == 5, "\(refresh.stderr)")
  }

  @Test func aSecondPersonIsAddedWhileTheBrowserIsSignedInAsTheFirst() async throws {
    try await signIn()
    let login = try await tokenctl(
      ["login", "graph", "--browser"], environment: environment(user: "bob@contoso.test", session: "ada@contoso.test"))
    #expect(login.status == 0, "\(login.stderr)")
    #expect(login.stdout.contains("as bob@contoso.test "), "\(login.stdout)\(login.stderr)")
    #expect(try lastAuthorization()["prompt"] as? String == "select_account")
    #expect(try await tokenctl("list").stdout.contains("bob@contoso.test"))
  }

  @Test func aRepairNamesItsUserAndFailsWhenTheServerSignsInSomeoneElse() async throws {
    try await signIn("bob@contoso.test")
    try await signIn()
    try await makeNeedSignIn("graph:bob@contoso.test")
    // The browser is Ada's, and the person at it picks Ada again.
    let wrong = try await tokenctl(
      ["login", "graph:bob@contoso.test"], environment: environment(user: "ada@contoso.test"))
    #expect(wrong.status == 5, "\(wrong.stdout)\(wrong.stderr)")
    #expect(wrong.stderr.contains("signed in graph:ada@contoso.test, not graph:bob@contoso.test"), "\(wrong.stderr)")
    let query = try lastAuthorization()
    #expect(query["login_hint"] as? String == "bob@contoso.test")
    #expect(query["prompt"] == nil, "a repair names its user rather than asking")
    #expect(try await tokenctl("token", "graph:bob@contoso.test").status == 5, "still needs its sign-in")
    // With the same browser signed in as Ada, the hint reaches Bob, who signs in.
    let right = try await tokenctl(
      ["login", "graph:bob@contoso.test"], environment: environment(session: "ada@contoso.test"))
    #expect(right.status == 0, "\(right.stderr)")
    #expect(try await tokenctl("token", "graph:bob@contoso.test").status == 0)
  }

  @Test func aGuestIsRepairedByItsUsernameNotTheNameItIsShownBy() async throws {
    let fabrikam = platform.tenantID("fabrikam")
    try configure(tenant: fabrikam)
    try await signIn()
    let guest = "graph:ada@contoso.test/\(fabrikam)"
    try await makeNeedSignIn(guest)
    let repair = try await tokenctl("login", guest)
    #expect(repair.status == 0, "\(repair.stderr)")
    #expect(try lastAuthorization()["login_hint"] as? String == "ada@contoso.test")
    #expect(try await tokenctl("token", guest).status == 0)
  }
}
