import Foundation
import TestSupport
import Testing
import TokenKit

/// An account of a type whose fixed endpoints serve one issuer per tenant keeps talking to
/// the tenant it signed in at, whatever the type's settings name now; and a refusal of a
/// token for other scopes that asks for consent leaves the account alone (the consent
/// concerns those scopes only).
@Suite(.timeLimit(.minutes(1))) struct TenantBindingTests {
  typealias F = OAuthFixtures
  typealias T = ScriptedTransport
  typealias H = AccountHarness

  /// A platform at 127.0.0.1:9 whose issuers are `https://id.example/{tenant}`, with its
  /// endpoints under `/{tenant}/`.
  struct Tenanted: AccountTypeBehavior {
    func endpoints(_ configured: Endpoints, forIssuer issuer: String) -> Endpoints? {
      guard issuer.hasPrefix("https://id.example/") else { return nil }
      let tenant = issuer.dropFirst("https://id.example/".count)
      return Endpoints(authorization: nil, token: URL(string: "http://127.0.0.1:9/\(tenant)/token")!)
    }
  }

  static func harness(tenant: String, responses: [HTTPResponse]) throws -> H {
    let endpoints = Endpoints(
      authorization: URL(string: "http://127.0.0.1:9/\(tenant)/authorize")!,
      token: URL(string: "http://127.0.0.1:9/\(tenant)/token")!)
    var harness = try H(descriptors: [F.descriptor(endpoints: endpoints)], responses: responses)
    harness.registry.setBehavior(Tenanted(), for: "corp")
    return harness
  }

  static func seed(_ harness: H, issuer: String) throws {
    let now = harness.clock.now
    let account = Account(
      type: "corp", id: "user-42", name: "ada@example.org", group: harness.store.group, scopes: ["openid"],
      createdAt: now, updatedAt: now, issuer: issuer, clientID: F.clientID)
    try harness.store.save(
      account,
      tokens: TokenSet(accessToken: "AT-1", refreshToken: "RT-1", expiresAt: now.addingTimeInterval(-10), scope: nil))
  }

  @Test func anAccountRefreshesAtItsOwnTenantWhateverTheTypeNamesNow() async throws {
    // Signed in at tenant-a; the type is now set up for "common" (or tenant-b).
    for configured in ["common", "tenant-b"] {
      let harness = try Self.harness(tenant: configured, responses: [T.tokens(access: "AT-2", refresh: "RT-2")])
      try Self.seed(harness, issuer: "https://id.example/tenant-a")
      let fresh = try await harness.refresher.freshTokens(for: H.key)
      #expect(fresh.tokens.accessToken == "AT-2")
      #expect(harness.transport.requests.map(\.url.absoluteString) == ["http://127.0.0.1:9/tenant-a/token"])
    }
  }

  @Test func anAccountOfAnAuthorityTheTypeNoLongerReachesIsRefusedBeforeAnythingIsSent() async throws {
    let harness = try Self.harness(tenant: "common", responses: [T.tokens(access: "AT-2")])
    try Self.seed(harness, issuer: "https://other-cloud.example/tenant-a")
    let error = await #expect(throws: TokenKitError.self) { try await harness.refresher.freshTokens(for: H.key) }
    #expect(error?.code == .notConfigured)
    #expect(error?.message.contains("nothing was sent") == true)
    #expect(harness.transport.requestCount == 0)
    // Every path that hands a token on makes the same check.
    #expect(throws: TokenKitError.self) {
      try harness.registry.requireRecordedIssuer(of: try harness.stored()!.account)
    }
  }

  /// A type of fixed endpoints whose token endpoint moved to another server (a host
  /// setting, an edited type file) keeps its accounts' grants where they were issued.
  @Test func anAccountSignedInAtAnotherServerIsRefusedBeforeAnythingIsSent() async throws {
    var harness = try H(responses: [T.tokens(access: "AT-2")])
    let now = harness.clock.now
    let account = Account(
      type: "corp", id: "user-42", name: "ada@example.org", group: harness.store.group, createdAt: now,
      updatedAt: now, clientID: F.clientID, authority: "git.old.example")
    try harness.store.save(
      account,
      tokens: TokenSet(accessToken: "AT-1", refreshToken: "RT-1", expiresAt: now.addingTimeInterval(-10), scope: nil))
    let error = await #expect(throws: TokenKitError.self) { try await harness.refresher.freshTokens(for: H.key) }
    #expect(error?.code == .notConfigured)
    #expect(error?.message.contains("signed in at git.old.example") == true)
    #expect(harness.transport.requestCount == 0)
    // Signed in where the type points now, it refreshes there.
    harness.registry = try F.registry()
    var moved = account
    moved.authority = Origin(F.tokenURL)?.description
    try harness.store.save(moved, tokens: try #require(try harness.stored()).tokens)
    #expect(try await harness.refresher.freshTokens(for: H.key).tokens.accessToken == "AT-2")
  }

  @Test func consentForOtherScopesConcernsThoseScopesOnly() async throws {
    let harness = try Self.harness(
      tenant: "common",
      responses: [
        T.oauthError("consent_required", description: "AADSTS65001: The user or administrator has not consented")
      ])
    try Self.seed(harness, issuer: "https://id.example/tenant-a")
    let scopes = try #require(ScopeSet(["Mail.Read"]))
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.refresher.freshTokens(for: H.key, scopes: scopes)
    }
    #expect(error?.code == .scopeRefused)
    #expect(error?.message.contains("Mail.Read") == true)
    // A new sign-in keeps what the type asks for by default (the server's answer may
    // leave out the scope that brings a refresh token).
    #expect(
      error?.remedy
        == .consentToScopes(
          account: "corp:ada@example.org", granted: ["openid", "profile", "offline_access"], asked: ["Mail.Read"]))
    let stored = try #require(try harness.stored())
    #expect(!stored.account.needsSignIn)
    #expect(stored.tokens.refreshToken == "RT-1")
  }
}
