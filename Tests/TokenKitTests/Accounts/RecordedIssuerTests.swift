import AccountTypeFiles
import Foundation
import TestSupport
import Testing
import TokenKit

/// An issuer set in the configuration must never receive the tokens of an account that
/// signed in at another issuer: one changed line of config.toml would otherwise send them
/// to a server the user never signed in at.
@Suite struct RecordedIssuerTests {
  typealias F = OAuthFixtures
  typealias T = ScriptedTransport

  /// Where the account signed in, and where the configuration now points.
  static let signedInAt = "https://a.example/realms/staff"
  static let configured = "https://b.example/realms/staff"

  /// A harness whose `corp` type takes its issuer from the user, set to `configured` as
  /// config.toml's `[types.corp] issuer` would set it, and whose transport serves the
  /// configured issuer in full, so that anything sent there would succeed.
  static func harness() throws -> AccountHarness {
    let base = try AccountHarness(
      descriptors: [
        EndpointDescriptor(
          id: "corp", displayName: "Corp", endpoints: .discoveredFromUserIssuer, clientID: "default-client")
      ]
    ) { request throws(TransportError) in
      switch request.url.path() {
      case "/realms/staff/.well-known/openid-configuration":
        return HTTPResponse(status: 200, body: Array(discoveryDocument(issuer: Self.configured).utf8))
      case "/realms/staff/token": return T.tokens(access: "AT-from-B")
      case "/realms/staff/revoke": return HTTPResponse(status: 200)
      default: return HTTPResponse(status: 404)
      }
    }
    return try base.reconfigured(["corp": AccountTypeSettings(issuer: Self.configured)])
  }

  static func seed(_ harness: AccountHarness, left: Double) throws -> StoredAccount {
    let account = Account(
      type: "corp", id: "user-42", name: "ada", group: harness.store.group, createdAt: F.now, updatedAt: F.now,
      issuer: signedInAt, clientID: "client-of-the-account")
    let tokens = TokenSet(accessToken: "AT-1", refreshToken: "RT-1", expiresAt: F.now.addingTimeInterval(left))
    try harness.store.save(account, tokens: tokens)
    return StoredAccount(account: account, tokens: tokens)
  }

  static func expectRefusal(_ error: TokenKitError?, _ harness: AccountHarness, kept: StoredAccount) throws {
    #expect(error?.code == .notConfigured)
    #expect(error?.message.contains(signedInAt) == true)
    #expect(error?.message.contains(configured) == true)
    #expect(harness.transport.requestCount == 0)
    #expect(try harness.store.load(kept.account.key) == kept)
  }

  @Test func anExpiredTokenIsNotRefreshedAtTheConfiguredIssuer() async throws {
    let harness = try Self.harness()
    let seeded = try Self.seed(harness, left: -10)
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.refresher.freshTokens(for: seeded.account.key)
    }
    try Self.expectRefusal(error, harness, kept: seeded)
  }

  @Test func aForcedRefreshIsRefusedToo() async throws {
    let harness = try Self.harness()
    let seeded = try Self.seed(harness, left: 3000)
    let error = await #expect(throws: TokenKitError.self) { try await harness.refresher.refresh(seeded.account.key) }
    try Self.expectRefusal(error, harness, kept: seeded)
  }

  @Test func aValidTokenIsNotHandedOutForTheConfiguredIssuer() async throws {
    let harness = try Self.harness()
    let seeded = try Self.seed(harness, left: 3000)
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.manager.freshTokens(for: seeded.account.key)
    }
    try Self.expectRefusal(error, harness, kept: seeded)
  }

  @Test func revocationIsNotSentToTheConfiguredIssuerAndTheAccountStays() async throws {
    let harness = try Self.harness()
    let seeded = try Self.seed(harness, left: 3000)
    let error = await #expect(throws: TokenKitError.self) { try await harness.manager.signOut(seeded.account.key) }
    try Self.expectRefusal(error, harness, kept: seeded)
  }

  @Test func theAccountsOwnIssuerStillWorks() async throws {
    // The same configuration naming the account's own issuer: the refresh goes there.
    let harness = try Self.harness()
    let account = Account(
      type: "corp", id: "user-42", name: "ada", group: harness.store.group, createdAt: F.now, updatedAt: F.now,
      issuer: Self.configured, clientID: "client-of-the-account")
    try harness.store.save(
      account, tokens: TokenSet(accessToken: "AT-1", refreshToken: "RT-1", expiresAt: F.now.addingTimeInterval(-1)))
    #expect(try await harness.refresher.freshTokens(for: account.key).tokens.accessToken == "AT-from-B")
  }

  @Test func aSignInAskingForAnotherIssuerThanTheConfiguredOneIsRefused() async throws {
    let harness = try Self.harness()
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.manager.signIn(
        type: "corp", options: SignInOptions(issuer: Self.signedInAt), method: .clientCredentials)
    }
    #expect(error?.code == .notConfigured)
    #expect(error?.message.contains(Self.signedInAt) == true)
    #expect(error?.message.contains(Self.configured) == true)
    #expect(harness.transport.requestCount == 0)
  }
}
