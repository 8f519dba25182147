import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit

@Suite(.timeLimit(.minutes(1))) struct TokenRefresherTests {
  typealias F = OAuthFixtures
  typealias T = ScriptedTransport
  typealias H = AccountHarness

  @Test func aValidTokenIsReturnedWithoutARequest() async throws {
    let harness = try H(responses: [])
    let seeded = try harness.seed(left: 1800)
    let recorder = EventRecorder(harness.events)
    let fresh = try await harness.refresher.freshTokens(for: H.key)
    #expect(fresh == seeded)
    #expect(harness.transport.requestCount == 0)
    #expect(harness.locks.acquisitions == 0)
    #expect(await recorder.drain().isEmpty)
  }

  @Test func anExpiredTokenIsRefreshedOnceAndTheRotatedRefreshTokenStored() async throws {
    let harness = try H(responses: [T.tokens(access: "AT-2", refresh: "RT-2", expiresIn: 3600, scope: "openid email")])
    try harness.seed(left: -10)
    let recorder = EventRecorder(harness.events)
    harness.clock.advance(by: 1)
    let fresh = try await harness.refresher.freshTokens(for: H.key)

    #expect(harness.transport.requestCount == 1)
    let request = try #require(harness.transport.requests.first)
    #expect(request.url == F.tokenURL)
    #expect(request[field: "grant_type"] == "refresh_token")
    #expect(request[field: "refresh_token"] == "RT-1")
    #expect(request[field: "client_id"] == F.clientID)

    #expect(fresh.tokens.accessToken == "AT-2")
    #expect(fresh.tokens.refreshToken == "RT-2")
    #expect(fresh.tokens.idToken == "ID-1")
    #expect(fresh.tokens.issuedAt == harness.clock.now)
    #expect(fresh.tokens.expiresAt == harness.clock.now.addingTimeInterval(3600))
    #expect(fresh.account.updatedAt == harness.clock.now)
    #expect(fresh.account.scopes == ["openid", "email"])
    #expect(try harness.stored() == fresh)
    #expect(!harness.locks.isHeld)

    let events = await recorder.drain()
    #expect(events.map(\.kind) == [.refreshed])
    #expect(events.first?.account == fresh.account)
  }

  /// A caller's copy of the same tokens, read through the keyring's JSON (whole seconds),
  /// is not taken for another process's refresh: the refresh asked for happens. The agent
  /// took the store's own copy for new tokens, handed back the old ones, and asked again
  /// at once, for ever.
  @Test func theSameTokensWithTimesInWholeSecondsAreNotAnotherProcesssRefresh() async throws {
    let harness = try H(responses: [T.tokens(access: "AT-2", refresh: "RT-2", expiresIn: 3600)])
    harness.clock.advance(by: 0.25)
    let seeded = try harness.seed(left: 600)
    var copy = seeded
    copy.tokens.issuedAt = copy.tokens.issuedAt.map {
      Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down))
    }
    copy.tokens.expiresAt = copy.tokens.expiresAt.map {
      Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down))
    }
    #expect(copy.tokens != seeded.tokens)
    let fresh = try await harness.refresher.freshTokens(for: copy, minimumValidity: 900)
    #expect(harness.transport.requestCount == 1)
    #expect(fresh.tokens.accessToken == "AT-2")
  }

  /// The account a caller has just read is not read again when its token is valid: the
  /// store has lost it meanwhile, and nothing notices.
  @Test func aValidStoredAccountIsAnsweredWithoutReadingTheStore() async throws {
    let harness = try H(responses: [])
    let seeded = try harness.seed(left: 1800)
    try harness.store.remove(H.key)
    #expect(try await harness.refresher.freshTokens(for: seeded) == seeded)
    #expect(harness.transport.requestCount == 0)
    #expect(harness.locks.acquisitions == 0)
  }

  /// An expired account the caller read is read again under the lock, where another
  /// process's refresh shows: its tokens are the answer, and nothing is sent.
  @Test func anExpiredStoredAccountIsReadAgainUnderTheLock() async throws {
    let harness = try H(responses: [])
    let stale = try harness.seed(left: -10)
    var refreshedElsewhere = stale
    refreshedElsewhere.tokens.accessToken = "AT-elsewhere"
    refreshedElsewhere.tokens.expiresAt = harness.clock.now.addingTimeInterval(3600)
    try harness.store.save(refreshedElsewhere.account, tokens: refreshedElsewhere.tokens)
    let fresh = try await harness.refresher.freshTokens(for: stale)
    #expect(fresh.tokens.accessToken == "AT-elsewhere")
    #expect(harness.transport.requestCount == 0)
    #expect(harness.locks.acquisitions == 1)
  }

  @Test func aResponseWithoutARefreshTokenKeepsTheOldOne() async throws {
    let harness = try H(responses: [T.tokens(access: "AT-2"), T.tokens(access: "AT-3")])
    try harness.seed(left: -10)
    #expect(try await harness.refresher.freshTokens(for: H.key).tokens.refreshToken == "RT-1")
    #expect(try harness.stored()?.tokens.refreshToken == "RT-1")
    #expect(try harness.stored()?.account.scopes == ["openid"])
  }

  @Test func theNextRefreshSendsTheRotatedToken() async throws {
    let harness = try H(responses: [
      T.tokens(access: "AT-2", refresh: "RT-2", expiresIn: 60), T.tokens(access: "AT-3", refresh: "RT-3"),
    ])
    try harness.seed(left: -10)
    _ = try await harness.refresher.freshTokens(for: H.key)
    harness.clock.advance(by: 120)
    let fresh = try await harness.refresher.freshTokens(for: H.key)
    #expect(harness.transport.requests.map { $0[field: "refresh_token"] } == ["RT-1", "RT-2"])
    #expect(fresh.tokens.refreshToken == "RT-3")
  }

  @Test func invalidGrantMarksTheAccountAndStopsRefreshing() async throws {
    let harness = try H(responses: [T.oauthError("invalid_grant", description: "Token has been revoked")])
    let seeded = try harness.seed(left: -10)
    let recorder = EventRecorder(harness.events)
    let error = await #expect(throws: TokenKitError.self) { try await harness.refresher.freshTokens(for: H.key) }
    #expect(error?.code == .needsSignIn)
    #expect(error?.message.contains("Token has been revoked") == true)
    // The hint names the account, so that the server need not ask which user.
    #expect(error?.remedy == .signInAgain(account: "corp:ada@example.org", group: harness.store.group))
    #expect(error.map { !$0.fullText.contains("RT-1") } == true)

    let stored = try #require(try harness.stored())
    #expect(stored.account.needsSignIn)
    #expect(stored.tokens == seeded.tokens)
    #expect(stored.account.updatedAt == harness.clock.now)

    let events = await recorder.drain()
    #expect(events.map(\.kind) == [.needsSignIn])
    #expect(events.first?.account.needsSignIn == true)
    #expect(events.first?.message?.contains("invalid_grant") == true)

    // The server declared the refresh token dead: it is not sent again.
    for _ in 0..<2 {
      let again = await #expect(throws: TokenKitError.self) { try await harness.refresher.freshTokens(for: H.key) }
      #expect(again?.code == .needsSignIn)
      let forced = await #expect(throws: TokenKitError.self) { try await harness.refresher.refresh(H.key) }
      #expect(forced?.code == .needsSignIn)
    }
    #expect(harness.transport.requestCount == 1)
  }

  @Test func serverTroubleLeavesTheTokensAsTheyWere() async throws {
    let harness = try H(responses: [
      HTTPResponse(
        status: 503, headers: [HTTPHeader("Retry-After", "30"), HTTPHeader("Content-Type", "text/html")],
        body: Array("<h1>Maintenance</h1>".utf8))
    ])
    let seeded = try harness.seed(left: -10)
    let recorder = EventRecorder(harness.events)
    let error = await #expect(throws: TokenKitError.self) { try await harness.refresher.freshTokens(for: H.key) }
    #expect(error?.code == .serverError)
    #expect(error?.message.contains("HTTP 503") == true)
    #expect(error?.recovery?.contains("Try again in 30 s.") == true)
    #expect(try harness.stored() == seeded)
    let events = await recorder.drain()
    #expect(events.map(\.kind) == [.failed])
    #expect(events.first?.message?.contains("HTTP 503") == true)
  }

  @Test(arguments: [TransportError.Kind.connectionFailed, .dnsFailure, .timedOut, .tls])
  func aNetworkFailureLeavesTheTokensAsTheyWere(kind: TransportError.Kind) async throws {
    let harness = try H { _ throws(TransportError) in throw TransportError(kind, "127.0.0.1:9: it failed") }
    let seeded = try harness.seed(left: -10)
    let recorder = EventRecorder(harness.events)
    let error = await #expect(throws: TokenKitError.self) { try await harness.refresher.freshTokens(for: H.key) }
    #expect(error?.code == .networkFailure)
    #expect(error?.message.contains("it failed") == true)
    #expect(try harness.stored() == seeded)
    #expect(await recorder.drain().map(\.kind) == [.failed])
    #expect(!harness.locks.isHeld)
  }

  @Test func concurrentCallersShareOneRefresh() async throws {
    let harness = try H { _ throws(TransportError) in
      try? await Task.sleep(for: .milliseconds(50))
      return T.tokens(access: "AT-2", refresh: "RT-2")
    }
    try harness.seed(left: -10)
    let refresher = harness.refresher
    let tokens = try await withThrowingTaskGroup(of: TokenSet.self) { group in
      for _ in 0..<16 { group.addTask { try await refresher.freshTokens(for: H.key).tokens } }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(tokens.count == 16)
    #expect(harness.transport.requestCount == 1)
    #expect(Set(tokens.map(\.accessToken)) == ["AT-2"])
    #expect(Set(tokens.map(\.refreshToken)) == ["RT-2"])
    #expect(try harness.stored()?.tokens.refreshToken == "RT-2")
  }

  /// `TokenSet.defaultRefreshMargin`: a tenth of the lifetime for short-lived tokens, at
  /// most a minute.
  @Test(arguments: [
    (120.0, 30.0, false), (120, 11, true), (120, 13, false), (3600, 30, true), (3600, 59, true), (3600, 61, false),
    (600, 59, true), (600, 61, false),
  ])
  func refreshesWithinTheDefaultMargin(lifetime: Double, left: Double, refreshed: Bool) async throws {
    let harness = try H(responses: [T.tokens(access: "AT-2", refresh: "RT-2")])
    try harness.seed(left: left, lifetime: lifetime)
    let fresh = try await harness.refresher.freshTokens(for: H.key)
    #expect(harness.transport.requestCount == (refreshed ? 1 : 0))
    #expect(fresh.tokens.accessToken == (refreshed ? "AT-2" : "AT-1"))
  }

  @Test func minimumValidityOverridesTheMargin() async throws {
    let harness = try H(responses: [T.tokens(access: "AT-2", refresh: "RT-2")])
    try harness.seed(left: 600)
    #expect(try await harness.refresher.freshTokens(for: H.key, minimumValidity: 300).tokens.accessToken == "AT-1")
    #expect(try await harness.refresher.freshTokens(for: H.key, minimumValidity: 900).tokens.accessToken == "AT-2")
    #expect(harness.transport.requestCount == 1)
  }

  @Test func aTokenWithoutExpiryIsNeverRefreshedUnlessForced() async throws {
    let harness = try H(responses: [T.tokens(access: "AT-2")])
    let account = Account(
      type: "corp", id: "user-42", name: "ada", group: harness.store.group, createdAt: F.now, updatedAt: F.now)
    try harness.store.save(account, tokens: TokenSet(accessToken: "AT-1", refreshToken: "RT-1"))
    #expect(try await harness.refresher.freshTokens(for: H.key, minimumValidity: 86400).tokens.accessToken == "AT-1")
    #expect(harness.transport.requestCount == 0)
    #expect(try await harness.refresher.refresh(H.key).tokens.accessToken == "AT-2")
    #expect(harness.transport.requestCount == 1)
  }

  @Test func refreshIsForcedEvenForAValidToken() async throws {
    let harness = try H(responses: [T.tokens(access: "AT-2", refresh: "RT-2")])
    try harness.seed(left: 3000)
    let refreshed = try await harness.refresher.refresh(H.key)
    #expect(refreshed.tokens.accessToken == "AT-2")
    #expect(harness.transport.requestCount == 1)
  }

  @Test func anExpiredTokenWithoutRefreshTokenIsNotValid() async throws {
    let harness = try H(responses: [])
    try harness.seed(left: -10, refreshToken: nil)
    let error = await #expect(throws: TokenKitError.self) { try await harness.refresher.freshTokens(for: H.key) }
    #expect(error?.code == .tokenNotValid)
    #expect(harness.transport.requestCount == 0)
  }

  @Test func anUnknownAccountIsNoSuchAccount() async throws {
    let harness = try H(responses: [])
    let error = await #expect(throws: TokenKitError.self) { try await harness.refresher.freshTokens(for: H.key) }
    #expect(error?.code == .noSuchAccount)
  }

  @Test func anUnknownTypeFailsWithoutARequestAndReleasesTheLock() async throws {
    let harness = try H(responses: [])
    try harness.seed(left: -10, type: "gone")
    let key = AccountKey(type: "gone", id: "user-42")
    let error = await #expect(throws: TokenKitError.self) { try await harness.refresher.freshTokens(for: key) }
    #expect(error?.code == .unknownAccountType)
    #expect(harness.transport.requestCount == 0)
    #expect(!harness.locks.isHeld)
  }

  /// A valid token is not handed out while a refresh of its account is in flight (the
  /// lock is held): that refresh may revoke it, as django-oauth-toolkit does the access
  /// token issued beside a rotated refresh token. The caller waits for the refresh and
  /// gets its token.
  @Test func aValidTokenWhoseRefreshIsInFlightIsNotHandedOut() async throws {
    let harness = try H(responses: [])
    let seeded = try harness.seed(left: 1800)
    let held = try await harness.locks.acquire(H.key, group: harness.store.group, timeout: .seconds(1))
    let refresher = harness.refresher
    let waiting = Task { try await refresher.freshTokens(for: H.key) }
    try await Task.sleep(for: .milliseconds(50))
    var tokens = seeded.tokens
    tokens.accessToken = "AT-new"
    tokens.refreshToken = "RT-new"
    try harness.store.save(seeded.account, tokens: tokens)
    held.release()
    #expect(try await waiting.value.tokens.accessToken == "AT-new")
    #expect(harness.transport.requestCount == 0)
  }

  /// Another process's refresh, finished while this one waited for the lock.
  struct RefreshingElsewhere: AccountLocking {
    let inner: MemoryAccountLocks
    let meanwhile: @Sendable () throws -> Void
    func acquire(_ key: AccountKey, group: String, timeout: Duration) async throws -> any AccountLockHandle {
      try meanwhile()
      return try await inner.acquire(key, group: group, timeout: timeout)
    }
    func isHeld(_ key: AccountKey, group: String) -> Bool { inner.isHeld(key, group: group) }
  }

  @Test func tokensRefreshedElsewhereWhileWaitingAreUsed() async throws {
    let harness = try H(responses: [])
    let seeded = try harness.seed(left: -10)
    let store = harness.store
    let now = harness.clock.now
    var refresher = harness.refresher
    refresher.locks = RefreshingElsewhere(inner: harness.locks) {
      var tokens = seeded.tokens
      tokens.accessToken = "AT-other"
      tokens.refreshToken = "RT-other"
      // Shorter-lived than asked for: still taken, as refreshing again would burn a rotation.
      tokens.expiresAt = now.addingTimeInterval(120)
      tokens.issuedAt = now
      try store.save(seeded.account, tokens: tokens)
    }
    let fresh = try await refresher.freshTokens(for: H.key, minimumValidity: 600)
    #expect(fresh.tokens.accessToken == "AT-other")
    #expect(harness.transport.requestCount == 0)
  }

  @Test func anAccountMarkedElsewhereWhileWaitingIsNotRefreshed() async throws {
    let harness = try H(responses: [T.tokens(access: "AT-2")])
    let seeded = try harness.seed(left: -10)
    let store = harness.store
    var refresher = harness.refresher
    refresher.locks = RefreshingElsewhere(inner: harness.locks) {
      var account = seeded.account
      account.needsSignIn = true
      var tokens = seeded.tokens
      tokens.accessToken = "AT-changed"
      try store.save(account, tokens: tokens)
    }
    let error = await #expect(throws: TokenKitError.self) { try await refresher.freshTokens(for: H.key) }
    #expect(error?.code == .needsSignIn)
    #expect(harness.transport.requestCount == 0)
  }

  @Test func aLockHeldTooLongTimesOut() async throws {
    let harness = try H(responses: [T.tokens(access: "AT-2")])
    let seeded = try harness.seed(left: -10)
    let held = try await harness.locks.acquire(H.key, group: seeded.account.group, timeout: .seconds(1))
    defer { held.release() }
    var refresher = harness.refresher
    refresher.lockTimeout = .milliseconds(20)
    let error = await #expect(throws: TokenKitError.self) { try await refresher.freshTokens(for: H.key) }
    #expect(error?.code == .internalFailure)
    #expect(harness.transport.requestCount == 0)
  }

  @Test func aDiscoveredTypeRefreshesAtTheDiscoveredEndpoint() async throws {
    // A type whose users name the issuer; plain http is allowed for a loopback issuer.
    let issuer = URL(string: "http://127.0.0.1:9/realms/corp")!
    let userIssuer = EndpointDescriptor(
      id: "corp", displayName: "Corp", endpoints: .discoveredFromUserIssuer, clientID: "default-client")
    let harness = try H(descriptors: [userIssuer]) { request throws(TransportError) in
      switch request.url.path() {
      case "/realms/corp/.well-known/openid-configuration":
        return HTTPResponse(status: 200, body: Array(discoveryDocument(issuer: issuer.absoluteString).utf8))
      case "/realms/corp/token": return T.tokens(access: "AT-2")
      default: return HTTPResponse(status: 404)
      }
    }
    let account = Account(
      type: "corp", id: "user-42", name: "ada", group: harness.store.group, createdAt: F.now, updatedAt: F.now,
      issuer: issuer.absoluteString, clientID: "client-of-the-account")
    try harness.store.save(
      account, tokens: TokenSet(accessToken: "AT-1", refreshToken: "RT-1", expiresAt: F.now.addingTimeInterval(-1)))
    #expect(try await harness.refresher.freshTokens(for: H.key).tokens.accessToken == "AT-2")
    let token = try #require(harness.transport.requests(to: "/realms/corp/token").first)
    // RFC 6749 §6: the client the tokens were issued to, not the type's current default.
    #expect(token[field: "client_id"] == "client-of-the-account")
  }
}
