import Foundation
import SecretServiceStore
import Testing
import TokenKit
import TokenStoreTesting

/// The keyring store against a real gnome-keyring on a private session bus.
@Suite struct SecretServiceTokenStoreTests {
  init() throws { try TestKeyring.require() }

  @Test(arguments: TokenStoreConformance.checks)
  func conformance(_ check: TokenStoreConformance.Check) async throws {
    try check.run { group in SecretServiceTokenStore(group: group) }
  }

  static let epoch = Date(timeIntervalSince1970: 1_790_000_000)

  static func sample(group: String) -> StoredAccount {
    StoredAccount(
      account: Account(
        type: "graph", id: "00000000-ada-oid", name: "ada@contoso.com", group: group,
        scopes: ["openid", "User.Read"], createdAt: epoch, updatedAt: epoch.addingTimeInterval(5)),
      tokens: TokenSet(
        accessToken: "eyJ-ACCESS-\(UUID().uuidString)", refreshToken: "0.REFRESH-\(UUID().uuidString)",
        idToken: "eyJ-IDTOKEN-\(UUID().uuidString)", expiresAt: epoch.addingTimeInterval(3600), scope: ["openid"]))
  }

  /// Runs `body` with `sample(group:)` of the store's group saved in `store`, and removes
  /// it after.
  static func withSample(
    in store: SecretServiceTokenStore, _ body: (StoredAccount) async throws -> Void
  )
    async throws
  {
    let saved = sample(group: store.group)
    try store.save(saved.account, tokens: saved.tokens)
    defer { _ = try? store.remove(saved.account.key) }
    try await body(saved)
  }

  /// An item's attributes alone say whether it is one of the group's accounts (the agent
  /// asks this of items another program changed): another group's item is not, and an
  /// item that is gone cannot say.
  @Test func anItemSaysWhetherItIsAnAccountOfTheGroup() async throws {
    let store = SecretServiceTokenStore(group: TokenStoreConformance.freshGroup())
    let other = SecretServiceTokenStore(group: TokenStoreConformance.freshGroup())
    var removed: String?
    try await Self.withSample(in: store) { _ in
      try await Self.withSample(in: other) { _ in
        let ours = try #require(try store.loadAllAddressed(.all).first?.address)
        let theirs = try #require(try other.loadAllAddressed(.all).first?.address)
        #expect(try store.isAccountItem(address: ours) == true)
        #expect(try store.isAccountItem(address: theirs) == false)
        removed = theirs
      }
    }
    // `withSample` removed the other group's item.
    #expect(try store.isAccountItem(address: try #require(removed)) == nil)
  }

  @Test func secretToolReadsTheItemWithTheDocumentedAttributes() async throws {
    let group = TokenStoreConformance.freshGroup()
    let store = SecretServiceTokenStore(group: group)
    let saved = Self.sample(group: group)
    try store.save(saved.account, tokens: saved.tokens)
    defer { _ = try? store.remove(saved.account.key) }

    let items = try await TestKeyring.items(["xdg:schema": "org.tokenctl.Account", "group": group])
    try #require(items.count == 1)
    let item = items[0]
    #expect(item["label"] == "tokenctl: graph — ada@contoso.com [\(group)]")
    #expect(item["attribute.type"] == "graph")
    #expect(item["attribute.account"] == "00000000-ada-oid")
    #expect(item["attribute.group"] == group)
    #expect(item["attribute.name"] == "ada@contoso.com")
    #expect(item["attribute.scopes"] == "openid User.Read")
    #expect(item["attribute.created"] == "1790000000")
    #expect(item["attribute.updated"] == "1790000005")
    #expect(item["attribute.expires"] == "1790003600")
    #expect(item["attribute.refreshable"] == "true")
    #expect(item["attribute.state"] == "ok")
    // secret-tool shows `xdg:schema` as `schema`.
    #expect(item["schema"] == "org.tokenctl.Account")
    let attributeNames = Set(item.keys.filter { $0.hasPrefix("attribute.") })
    #expect(
      attributeNames == [
        "attribute.type", "attribute.account", "attribute.group", "attribute.name",
        "attribute.scopes", "attribute.created", "attribute.updated", "attribute.expires", "attribute.refreshable",
        "attribute.state",
      ])

    // The secret is the versioned JSON token set, readable by any tool.
    let lookup = try await TestKeyring.secretTool([
      "lookup", "type", "graph", "account", "00000000-ada-oid", "group", group,
    ])
    let secret = try #require(try JSONSerialization.jsonObject(with: Data(lookup.stdout.utf8)) as? [String: Any])
    #expect(secret["version"] as? Int == 1)
    #expect(secret["access_token"] as? String == saved.tokens.accessToken)
    #expect(secret["refresh_token"] as? String == saved.tokens.refreshToken)
    #expect(secret["expires_at"] as? Int == 1_790_003_600)
  }

  @Test func aTokenForOtherScopesIsAnItemOfItsOwnSchemaWithoutTheGrant() async throws {
    let group = TokenStoreConformance.freshGroup()
    let store = SecretServiceTokenStore(group: group)
    let saved = Self.sample(group: group)
    try store.save(saved.account, tokens: saved.tokens)
    defer { _ = try? store.remove(saved.account.key) }
    let scopes = try #require(ScopeSet(["offline_access", "https://outlook.office.com/IMAP.AccessAsUser.All"]))
    var scoped = saved.tokens
    scoped.accessToken = "eyJ-IMAP-\(UUID().uuidString)"
    scoped.scope = ["https://outlook.office.com/IMAP.AccessAsUser.All"]
    try store.saveToken(scoped, scopes: scopes, of: saved.account)

    let items = try await TestKeyring.items(["xdg:schema": ScopedTokenSchema.name, "group": group])
    try #require(items.count == 1)
    let item = items[0]
    #expect(item["label"] == "tokenctl: graph — ada@contoso.com [\(group)] (\(scopes.text))")
    #expect(item["attribute.type"] == "graph")
    #expect(item["attribute.account"] == "00000000-ada-oid")
    #expect(item["attribute.group"] == group)
    #expect(item["attribute.scopes"] == "https://outlook.office.com/IMAP.AccessAsUser.All offline_access")
    #expect(item["attribute.expires"] == "1790003600")
    #expect(
      item["attribute.updated"].flatMap(Int.init).map { abs(Double($0) - Date().timeIntervalSince1970) < 60 } == true)
    #expect(
      Set(item.keys.filter { $0.hasPrefix("attribute.") }) == [
        "attribute.type", "attribute.account", "attribute.group", "attribute.scopes", "attribute.expires",
        "attribute.updated",
      ])
    let text = item.map { "\($0.key)=\($0.value)" }.filter { !$0.hasPrefix("secret=") }.joined(separator: "\n")
    #expect(!text.contains(scoped.accessToken) && !text.contains(saved.tokens.refreshToken!))

    let lookup = try await TestKeyring.secretTool([
      "lookup", "xdg:schema", ScopedTokenSchema.name, "type", "graph", "account", "00000000-ada-oid", "group", group,
    ])
    let secret = try #require(try JSONSerialization.jsonObject(with: Data(lookup.stdout.utf8)) as? [String: Any])
    #expect(secret["version"] as? Int == 1)
    #expect(secret["access_token"] as? String == scoped.accessToken)
    #expect(secret["scope"] as? String == "https://outlook.office.com/IMAP.AccessAsUser.All")
    #expect(secret["refresh_token"] == nil && secret["id_token"] == nil)
    // The account's own item and its listing are as they were.
    #expect(try await TestKeyring.items(["xdg:schema": "org.tokenctl.Account", "group": group]).count == 1)
    #expect(try store.load(saved.account.key) == saved)

    try store.remove(saved.account.key)
    #expect(try await TestKeyring.items(["xdg:schema": ScopedTokenSchema.name, "group": group]).isEmpty)
  }

  @Test func theDefaultGroupsLabelIsTheBareForm() async throws {
    // Only the label format is checked here; the default group's items belong to users.
    let store = SecretServiceTokenStore(group: Account.defaultGroup)
    var sample = Self.sample(group: Account.defaultGroup)
    sample.account.id = "label-\(UUID().uuidString)"
    try store.save(sample.account, tokens: sample.tokens)
    defer { _ = try? store.remove(sample.account.key) }
    let items = try await TestKeyring.items(["account": sample.account.id])
    #expect(items.map { $0["label"] } == ["tokenctl: graph — ada@contoso.com"])
  }

  @Test func noTokenAppearsInAnyAttributeOrLabel() async throws {
    let group = TokenStoreConformance.freshGroup()
    let store = SecretServiceTokenStore(group: group)
    let saved = Self.sample(group: group)
    try store.save(saved.account, tokens: saved.tokens)
    var replaced = saved.tokens
    replaced.accessToken = "eyJ-ROTATED-\(UUID().uuidString)"
    try store.save(saved.account, tokens: replaced)
    defer { _ = try? store.remove(saved.account.key) }

    let items = try await TestKeyring.items(["group": group])
    try #require(items.count == 1)
    let visible = items[0].filter { $0.key != "secret" }.map { "\($0.key)=\($0.value)" }.joined(separator: "\n")
    for token in [saved.tokens.accessToken, replaced.accessToken, saved.tokens.refreshToken!, saved.tokens.idToken!] {
      #expect(!visible.contains(token))
      #expect(items[0]["secret"]?.contains(token) == (token != saved.tokens.accessToken))
    }
  }

  @Test func anItemWrittenByAnotherToolIsRead() async throws {
    let group = TokenStoreConformance.freshGroup()
    let json =
      #"{"version":1,"access_token":"from-elsewhere","refresh_token":"r","token_type":"Bearer","expires_at":1790003600}"#
    let stored = try await TestKeyring.secretTool(
      [
        "store", "--label", "tokenctl: oidc — grace", "xdg:schema", "org.tokenctl.Account", "type", "oidc",
        "account", "grace-sub", "group", group, "name", "grace", "created", "1790000000", "updated", "1790000000",
        "expires", "1790003600", "refreshable", "true",
      ], stdin: json)
    try #require(stored.status == 0)
    let store = SecretServiceTokenStore(group: group)
    defer { _ = try? store.remove(AccountKey(type: "oidc", id: "grace-sub")) }

    let listing = try store.list(.all)
    #expect(listing.map(\.account.name) == ["grace"])
    #expect(listing.first?.tokens == TokenSummary(expiresAt: Self.epoch.addingTimeInterval(3600), refreshable: true))
    #expect(try store.load(AccountKey(type: "oidc", id: "grace-sub"))?.tokens.accessToken == "from-elsewhere")
  }

  @Test(arguments: [
    (#"{"version":99,"access_token":"x","token_type":"Bearer"}"#, "format 99"),
    ("not json at all", "not a token set tokenctl can read"),
  ])
  func anUnreadableSecretIsACorruptItemNotAMissingAccount(secret: String, expected: String) async throws {
    let group = TokenStoreConformance.freshGroup()
    let stored = try await TestKeyring.secretTool(
      [
        "store", "--label", "tokenctl: oidc — broken", "xdg:schema", "org.tokenctl.Account", "type", "oidc",
        "account", "broken", "group", group, "name", "broken", "created", "0", "updated", "0", "refreshable", "false",
      ], stdin: secret)
    try #require(stored.status == 0)
    let store = SecretServiceTokenStore(group: group)
    defer { _ = try? store.remove(AccountKey(type: "oidc", id: "broken")) }

    let error = #expect(throws: TokenKitError.self) { try store.load(AccountKey(type: "oidc", id: "broken")) }
    #expect(error?.code == .corruptItem)
    #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    // Listing still works: it reads no secret.
    #expect(try store.list(.all).map(\.account.id) == ["broken"])
  }
}
