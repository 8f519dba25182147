import Testing
import TokenKit

/// The normal form tokens for other scopes are kept by (RFC 6749 §3.3).
@Suite struct ScopeSetTests {
  @Test(arguments: [
    (["write", "read", "read"], "read write"),
    (
      ["https://outlook.office.com/IMAP.AccessAsUser.All", "offline_access"],
      "https://outlook.office.com/IMAP.AccessAsUser.All offline_access"
    ),
    // By bytes: upper case sorts before lower case, in every locale.
    (["read", "User.Read"], "User.Read read"),
  ])
  func theNormalFormIsSortedAndUnique(scopes: [String], text: String) throws {
    #expect(try #require(ScopeSet(scopes)).text == text)
    #expect(ScopeSet(parsing: "  " + scopes.reversed().joined(separator: "  ") + " ") == ScopeSet(scopes))
  }

  @Test(arguments: [[], [""], ["read", "a b"], ["quote\""], ["back\\slash"], ["tab\t"], ["é"]])
  func emptyOrInvalidScopesAreNoSet(scopes: [String]) {
    #expect(ScopeSet(scopes) == nil)
  }

  @Test func anAccountsOwnScopesAreItsOwnInAnyOrder() {
    let account = Account(
      type: "t", id: "i", name: "n", group: "g", scopes: ["write", "read"], createdAt: .distantPast,
      updatedAt: .distantPast)
    #expect(ScopeSet(["read", "write"])!.isOwn(of: account))
    #expect(!ScopeSet(["read"])!.isOwn(of: account))
  }
}
