import Foundation
import Testing
import TokenKit
import TokenStoreTesting

@Suite struct AccountReferenceTests {
  @Test(
    arguments: [
      ("graph:ada@contoso.com", "graph", "ada@contoso.com"),
      ("ada@contoso.com", nil, "ada@contoso.com"),
      ("oidc:https://issuer.example:sub", "oidc", "https://issuer.example:sub"),
      ("weird:name", nil, "weird:name"),
      ("graph:", "graph", ""),
    ] as [(String, String?, String)])
  func parsesATypePrefixOnlyWhenItIsAKnownType(text: String, type: String?, account: String) {
    let reference = AccountReference(parsing: text, knownTypes: ["graph", "oidc"])
    #expect(reference.type == type)
    #expect(reference.account == account)
  }

  static func store() throws -> InMemoryTokenStore {
    let store = InMemoryTokenStore(group: "work")
    let date = Date(timeIntervalSince1970: 0)
    for (type, id, name) in [
      ("graph", "oid-1", "ada@contoso.com"), ("oidc", "sub-1", "ada@contoso.com"),
      ("graph", "oid-2", "grace@contoso.com"),
    ] {
      try store.save(
        Account(type: type, id: id, name: name, group: "work", createdAt: date, updatedAt: date),
        tokens: TokenSet(accessToken: "t"))
    }
    return store
  }

  @Test(arguments: [
    ("grace@contoso.com", "oid-2"), ("graph:ada@contoso.com", "oid-1"), ("oidc:ada@contoso.com", "sub-1"),
    ("oid-2", "oid-2"), ("graph:oid-1", "oid-1"),
  ])
  func resolvesByNameThenById(text: String, id: String) throws {
    let reference = AccountReference(parsing: text, knownTypes: ["graph", "oidc"])
    #expect(try reference.resolve(in: Self.store()).account.id == id)
  }

  @Test func anAmbiguousNameListsTheCandidates() throws {
    let error = #expect(throws: TokenKitError.self) {
      try AccountReference(parsing: "ada@contoso.com", knownTypes: ["graph", "oidc"]).resolve(in: Self.store())
    }
    #expect(error?.code == .ambiguousAccount)
    #expect(error?.message.contains("graph:oid-1") == true)
    #expect(error?.message.contains("oidc:sub-1") == true)
  }

  @Test func anUnknownNameSaysWhereItLooked() throws {
    let error = #expect(throws: TokenKitError.self) {
      try AccountReference(parsing: "graph:nobody", knownTypes: ["graph"]).resolve(in: Self.store())
    }
    #expect(error?.code == .noSuchAccount)
    #expect(error?.message == "no account 'graph:nobody' in group 'work'")
    #expect(error?.remedy == .listAccounts(group: "work"))
  }
}
