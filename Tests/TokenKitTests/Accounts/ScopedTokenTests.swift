import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit

/// Tokens for other scopes from one sign-in (RFC 6749 §6), with the refresher on an
/// in-memory store, a scripted server and a clock the test moves.
@Suite(.timeLimit(.minutes(1))) struct ScopedTokenTests {
  typealias T = ScriptedTransport
  typealias H = AccountHarness

  static let mail = ScopeSet(["Mail.Send", "IMAP"])!

  @Test func aTokenForOtherScopesComesFromTheRefreshTokenAndLeavesTheAccountsOwn() async throws {
    let harness = try H(responses: [
      T.tokens(access: "AT-mail", refresh: "RT-2", expiresIn: 1800, scope: "IMAP Mail.Send")
    ])
    let seeded = try harness.seed(left: 1800)
    let recorder = EventRecorder(harness.events)
    harness.clock.advance(by: 5)

    let tokens = try await harness.refresher.freshTokens(for: H.key, scopes: Self.mail)
    let request = try #require(harness.transport.requests.first)
    #expect(request[field: "grant_type"] == "refresh_token")
    #expect(request[field: "refresh_token"] == "RT-1")
    #expect(request[field: "scope"] == "IMAP Mail.Send")
    #expect(tokens.accessToken == "AT-mail")
    #expect(tokens.refreshToken == nil && tokens.idToken == nil)
    #expect(tokens.expiresAt == harness.clock.now.addingTimeInterval(1800))
    #expect(tokens.scope == ["IMAP", "Mail.Send"])
    #expect(try harness.store.loadToken(for: H.key, scopes: Self.mail) == tokens)

    // The account keeps its token, ID token and scopes; only the spent refresh token goes.
    let account = try #require(try harness.stored())
    var expected = seeded.tokens
    expected.refreshToken = "RT-2"
    #expect(account.tokens == expected)
    #expect(account.account.scopes == ["openid"])
    #expect(account.account.updatedAt == harness.clock.now)
    #expect(!harness.locks.isHeld)
    #expect(await recorder.drain().isEmpty)

    // Valid for the margin: kept, and nothing is sent.
    harness.clock.advance(by: 600)
    #expect(try await harness.refresher.freshTokens(for: H.key, scopes: Self.mail) == tokens)
    #expect(harness.transport.requestCount == 1)
    #expect(harness.locks.acquisitions == 1)
  }

  @Test func anExpiringTokenForOtherScopesIsReplacedWithTheRotatedRefreshToken() async throws {
    let harness = try H(responses: [
      T.tokens(access: "AT-mail-1", refresh: "RT-2", expiresIn: 600),
      T.tokens(access: "AT-mail-2", refresh: "RT-3", expiresIn: 600),
    ])
    try harness.seed(left: 1800)
    _ = try await harness.refresher.freshTokens(for: H.key, scopes: Self.mail)
    harness.clock.advance(by: 590)
    let second = try await harness.refresher.freshTokens(for: H.key, scopes: Self.mail)
    #expect(second.accessToken == "AT-mail-2")
    #expect(harness.transport.requests.map { $0[field: "refresh_token"] } == ["RT-1", "RT-2"])
    #expect(try harness.stored()?.tokens.refreshToken == "RT-3")
    // No scope in the answer: none is stored, and what is reported is the scopes asked
    // for, unconfirmed (RFC 6749 §5.1 lets a client assume them; a server may have
    // issued others).
    #expect(second.scope == nil)
    #expect(
      CarriedScopes(second, asked: ["IMAP", "Mail.Send"])
        == CarriedScopes(scopes: ["IMAP", "Mail.Send"], confirmed: false))
  }

  @Test func minimumValidityBeyondTheTokensLifeGetsANewOne() async throws {
    let harness = try H(responses: [
      T.tokens(access: "AT-mail-1", expiresIn: 600), T.tokens(access: "AT-mail-2", expiresIn: 600),
    ])
    try harness.seed(left: 1800)
    _ = try await harness.refresher.freshTokens(for: H.key, scopes: Self.mail)
    let longer = try await harness.refresher.freshTokens(for: H.key, scopes: Self.mail, minimumValidity: 900)
    #expect(longer.accessToken == "AT-mail-2")
    // No new refresh token in the answer: the account's stays (§6).
    #expect(try harness.stored()?.tokens.refreshToken == "RT-1")
  }

  @Test func theAccountsOwnScopesGiveItsOwnToken() async throws {
    let harness = try H(responses: [])
    let seeded = try harness.seed(left: 1800)
    let tokens = try await harness.refresher.freshTokens(for: H.key, scopes: ScopeSet(["openid"])!)
    #expect(tokens == seeded.tokens)
    #expect(harness.transport.requestCount == 0)
  }

  @Test func aRefusedScopeSaysWhatWasAskedAndChangesNothing() async throws {
    let harness = try H(responses: [T.oauthError("invalid_scope", description: "admin is not granted")])
    let seeded = try harness.seed(left: 1800)
    let admin = ScopeSet(["admin"])!
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.refresher.freshTokens(for: H.key, scopes: admin)
    }
    #expect(error?.code == .scopeRefused)
    #expect(error?.message.contains("admin") == true)
    #expect(error?.message.contains("invalid_scope") == true)
    #expect(
      error?.remedy == .requestGrantedScopes(account: "corp:ada@example.org", granted: ["openid"], asked: ["admin"]))
    #expect(error.map { !$0.fullText.contains("RT-1") && !$0.fullText.contains("AT-1") } == true)
    #expect(try harness.stored() == seeded)
    #expect(try harness.store.loadToken(for: H.key, scopes: admin) == nil)
  }

  @Test func aRejectedRefreshTokenMarksTheAccountAsARefreshDoes() async throws {
    let harness = try H(responses: [T.oauthError("invalid_grant")])
    let seeded = try harness.seed(left: 1800)
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.refresher.freshTokens(for: H.key, scopes: Self.mail)
    }
    #expect(error?.code == .needsSignIn)
    let stored = try #require(try harness.stored())
    #expect(stored.account.needsSignIn)
    #expect(stored.tokens == seeded.tokens)
    // A token kept from before is not handed out any more either.
    let again = await #expect(throws: TokenKitError.self) {
      try await harness.refresher.freshTokens(for: H.key, scopes: Self.mail)
    }
    #expect(again?.code == .needsSignIn)
    #expect(harness.transport.requestCount == 1)
  }

  @Test func aServiceAccountAsksWithItsClientsCredentialsAndTheScopes() async throws {
    let harness = try H(
      descriptors: [OAuthFixtures.descriptor(clientSecret: OAuthFixtures.secret, authentication: .clientSecretPost)],
      responses: [T.tokens(access: "AT-mail", expiresIn: 3600)])
    var service = try harness.seed(left: 1800, refreshToken: nil).account
    service.isServiceAccount = true
    try harness.store.save(service, tokens: try #require(try harness.stored()).tokens)

    let tokens = try await harness.refresher.freshTokens(for: H.key, scopes: Self.mail)
    #expect(tokens.accessToken == "AT-mail")
    let request = try #require(harness.transport.requests.first)
    #expect(request[field: "grant_type"] == "client_credentials")
    #expect(request[field: "scope"] == "IMAP Mail.Send")
    #expect(try harness.stored()?.tokens.accessToken == "AT-1")
  }

  @Test func anAccountWithoutARefreshTokenHasNoTokenForOtherScopes() async throws {
    let harness = try H(responses: [])
    try harness.seed(left: 1800, refreshToken: nil)
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.refresher.freshTokens(for: H.key, scopes: Self.mail)
    }
    #expect(error?.code == .tokenNotValid)
    #expect(harness.transport.requestCount == 0)
  }

  /// Another process got one while this one waited for the lock: it is used, and the
  /// account's refresh token is not spent again.
  @Test func aTokenGotElsewhereWhileWaitingIsUsed() async throws {
    let harness = try H(responses: [])
    let seeded = try harness.seed(left: 1800)
    let lock = try await harness.locks.acquire(H.key, group: harness.store.group, timeout: .seconds(5))
    let waiting = Task { try await harness.refresher.freshTokens(for: H.key, scopes: Self.mail) }
    try await Task.sleep(for: .milliseconds(50))
    let elsewhere = TokenSet(accessToken: "AT-elsewhere", expiresAt: harness.clock.now.addingTimeInterval(1800))
    try harness.store.saveToken(elsewhere, scopes: Self.mail, of: seeded.account)
    lock.release()
    #expect(try await waiting.value == elsewhere)
    #expect(harness.transport.requestCount == 0)
  }

  /// After a 401 a new token is got whatever the kept one's expiry.
  @Test func refreshingForScopesGetsANewTokenAtOnce() async throws {
    let harness = try H(responses: [
      T.tokens(access: "AT-mail-1", refresh: "RT-2"), T.tokens(access: "AT-mail-2", refresh: "RT-3"),
    ])
    try harness.seed(left: 1800)
    _ = try await harness.refresher.freshTokens(for: H.key, scopes: Self.mail)
    #expect(try await harness.refresher.refresh(H.key, scopes: Self.mail).accessToken == "AT-mail-2")
    #expect(harness.transport.requests.map { $0[field: "refresh_token"] } == ["RT-1", "RT-2"])
  }

  /// `request --scope`: the request carries the token for the scopes, and a 401 gets a
  /// new one for them, not a refresh of the account's own.
  @Test func anAuthorizedClientSendsTheTokenForTheScopesAndRenewsItOn401() async throws {
    let harness = try H(responses: [
      T.tokens(access: "AT-mail-1", refresh: "RT-2"), T.text(401, "expired"),
      T.tokens(access: "AT-mail-2", refresh: "RT-3"), T.text(200, "ok"),
    ])
    let seeded = try harness.seed(left: 1800)
    let url = try #require(URL(string: "https://mail.example.test/inbox"))
    let client = AuthorizedClient(manager: harness.manager, account: H.key, scopes: Self.mail) { _ in }
    let response = try await client.send(HTTPRequest(method: "GET", url: url), allowed: [try #require(Origin(url))])
    #expect(response.status == 200)
    let requests = harness.transport.requests
    #expect(requests.map { $0[field: "scope"] } == ["IMAP Mail.Send", nil, "IMAP Mail.Send", nil])
    #expect(requests[1].header("Authorization") == "Bearer AT-mail-1")
    #expect(requests[3].header("Authorization") == "Bearer AT-mail-2")
    #expect(try harness.stored()?.tokens.accessToken == seeded.tokens.accessToken)
    #expect(try harness.stored()?.tokens.refreshToken == "RT-3")
  }

  /// The exchange runs where the isolation says, with the scopes, and its stored answer is
  /// what the caller gets.
  @Test func theExchangeRunsInTheIsolationWithTheScopes() async throws {
    let harness = try H(responses: [T.tokens(access: "AT-mail", refresh: "RT-2")])
    try harness.seed(left: 1800)
    let isolation = RecordingIsolation(refresher: harness.refresher)
    var refresher = harness.refresher
    refresher.isolation = isolation
    #expect(try await refresher.freshTokens(for: H.key, scopes: Self.mail).accessToken == "AT-mail")
    #expect(isolation.calls.withLock { $0 } == [Self.mail])
    #expect(try harness.stored()?.tokens.refreshToken == "RT-2")
  }

  /// Runs the exchange in this process, as the refresh child would, recording the scopes.
  final class RecordingIsolation: RefreshIsolation {
    let refresher: TokenRefresher
    let calls = Mutex<[ScopeSet?]>([])
    init(refresher: TokenRefresher) { self.refresher = refresher }

    func refresh(
      _ key: AccountKey, group: String, scopes: ScopeSet?, holding lock: any AccountLockHandle
    ) async throws -> Bool {
      calls.withLock { $0.append(scopes) }
      if let scopes {
        _ = try await refresher.exchangeHoldingLock(key, scopes: scopes)
      } else {
        _ = try await refresher.refreshHoldingLock(key)
      }
      return true
    }
  }
}
