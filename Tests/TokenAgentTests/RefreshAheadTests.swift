import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenAgent

/// The agent's refresh ahead on the injected clock and sleep: when it refreshes,
/// how long it backs off after failures, and that a server's `Retry-After` is honoured,
/// read from the waits it asks for rather than waited out in real time.
@Suite(.timeLimit(.minutes(10))) struct RefreshAheadTests {
  let clock = TestClock()
  let backing = InMemoryTokenStore.Backing()
  let directory: TemporaryDirectory

  init() throws { directory = try TemporaryDirectory() }

  /// An agent on the test's clock, whose waits are `sleep`'s and whose server is `transport`.
  func service(_ transport: ScriptedTransport, sleep: ManualSleep) throws -> AgentService {
    var settings = AgentService.Settings()
    settings.isolatesRefreshes = false
    let backing = backing
    return AgentService(
      base: try OAuthFixtures.registry(),
      environment: ["HOME": directory.path("home"), "XDG_CONFIG_HOME": directory.path("config")],
      settings: settings, clock: clock, transport: transport,
      makeStore: { InMemoryTokenStore(group: $0, backing: backing) }, log: { _ in },
      sleep: { try await sleep.sleep($0) })
  }

  /// Writes the agent's config.toml.
  func writeConfig(_ text: String) throws {
    let config = directory.url.appendingPathComponent("config/tokenctl")
    try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
    try text.write(to: config.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
  }

  /// Stores `ada` with a token issued now that lives `lifetime` seconds.
  @discardableResult
  func seed(lifetime: Double) throws -> StoredAccount {
    let account = Account(
      type: "corp", id: "sub-1", name: "ada", group: Account.defaultGroup, createdAt: clock.now,
      updatedAt: clock.now, issuer: OAuthFixtures.issuer, clientID: OAuthFixtures.clientID)
    let tokens = TokenSet(
      accessToken: "access-0", refreshToken: "refresh-0", expiresAt: clock.now.addingTimeInterval(lifetime),
      issuedAt: clock.now)
    try InMemoryTokenStore(group: Account.defaultGroup, backing: backing).save(account, tokens: tokens)
    return StoredAccount(account: account, tokens: tokens)
  }

  /// Hands `stored`'s token out, which keeps the account fresh from then on.
  func askOnce(_ service: AgentService, _ stored: StoredAccount) async throws {
    let handed = try await service.accessToken(group: Account.defaultGroup, stored: stored, minimumValidity: 0)
    #expect(handed.accessToken == stored.tokens.accessToken, "still valid: handed out as stored")
  }

  var storedAccess: String? {
    try? InMemoryTokenStore(group: Account.defaultGroup, backing: backing)
      .load(AccountKey(type: "corp", id: "sub-1"))?.tokens.accessToken
  }

  // MARK: When

  @Test func itSleepsUntilThreeQuartersOfTheLifetimeThenRefreshesAndSchedulesTheNewToken() async throws {
    let transport = ScriptedTransport { _ in
      ScriptedTransport.tokens(access: "access-1", refresh: "refresh-1", expiresIn: 600)
    }
    let sleep = ManualSleep(clock: clock)
    let service = try service(transport, sleep: sleep)
    defer { service.stop() }
    try await askOnce(service, try seed(lifetime: 3600))

    // 75 % of an hour, and a millisecond so as not to wake a hair early.
    #expect(await sleep.next() == .milliseconds(2_700_001))
    #expect(transport.requestCount == 0, "nothing refreshed before it is due")
    sleep.elapse()
    // The next wait is asked for once the refresh is done: 75 % of the new 10 minutes,
    // from the time of issue as the store keeps it, in whole seconds.
    let next = await sleep.next()
    #expect((449...451).contains(next.seconds), "\(next)")
    #expect(transport.requestCount == 1)
    #expect(transport.requests.first?.form.contains(.init("grant_type", "refresh_token")) == true)
    #expect(storedAccess == "access-1")
  }

  @Test(arguments: [(0.5, 1_800_001), (0.9, 3_240_001)] as [(Double, Int64)])
  func configTomlSetsTheFraction(fraction: Double, milliseconds: Int64) async throws {
    try writeConfig("[agent]\nrefresh_at_percent = \(Int(fraction * 100))\n")
    let sleep = ManualSleep(clock: clock)
    let service = try service(ScriptedTransport { _ in HTTPResponse(status: 500) }, sleep: sleep)
    defer { service.stop() }
    try await askOnce(service, try seed(lifetime: 3600))
    #expect(await sleep.next() == .milliseconds(milliseconds))
  }

  /// `refreshDue`, the schedule itself, for the tokens a store may hold.
  @Test func theDueTimeOfEachKindOfAccount() throws {
    let service = try service(ScriptedTransport { _ in HTTPResponse(status: 500) }, sleep: ManualSleep(clock: clock))
    let now = clock.now
    func stored(
      refresh: String? = "refresh", expiresIn: Double? = 3600, issuedAgo: Double? = 0, updatedAgo: Double = 0,
      needsSignIn: Bool = false, serviceAccount: Bool = false
    ) -> StoredAccount {
      var account = Account(
        type: "corp", id: "sub-1", name: "ada", group: "default", createdAt: now,
        updatedAt: now.addingTimeInterval(-updatedAgo))
      account.needsSignIn = needsSignIn
      account.isServiceAccount = serviceAccount
      return StoredAccount(
        account: account,
        tokens: TokenSet(
          accessToken: "a", refreshToken: refresh, expiresAt: expiresIn.map { now.addingTimeInterval($0) },
          issuedAt: issuedAgo.map { now.addingTimeInterval(-$0) }))
    }
    func due(_ stored: StoredAccount, idle: Double? = nil) -> Double? {
      service.refreshDue(stored, fraction: 0.75, idleLifetime: idle)?.timeIntervalSince(now)
    }
    #expect(due(stored()) == 2700, "three quarters of the lifetime after issue")
    #expect(due(stored(expiresIn: 600, issuedAgo: 3000)) == -300, "overdue: refreshed at once")
    #expect(due(stored(expiresIn: 3000, issuedAgo: nil, updatedAgo: 600)) == 2100, "the last update stands in")
    #expect(due(stored(expiresIn: 60, issuedAgo: nil, updatedAgo: -600)) == 60, "but never after the expiry")
    #expect(due(stored(), idle: 86_400 * 90) == 86_400 * 90 * 0.75, "only the refresh token kept alive")
    #expect(due(stored(expiresIn: nil)) == nil, "a token that does not expire")
    #expect(due(stored(refresh: nil)) == nil, "nothing to refresh with")
    #expect(due(stored(refresh: nil, serviceAccount: true)) == 2700, "a service account asks again instead")
    #expect(due(stored(needsSignIn: true)) == nil, "an account that must sign in again")
  }

  // MARK: After failures

  // MARK: While in use

  /// The accounts the agent keeps fresh now, as `tokenctl agent status` lists them, once
  /// the refresh-ahead tasks have settled (a task that stops does so on its own thread).
  func keptFresh(_ service: AgentService, count: Int) async throws -> Int {
    let end = ContinuousClock.now + .seconds(20)
    while service.status().values("account").count != count, ContinuousClock.now < end {
      try await Task.sleep(for: .milliseconds(10))
    }
    return service.status().values("account").count
  }

  /// Asked for once, an account of one-hour tokens is refreshed ahead twice (the two
  /// lifetimes it stays in use), then no more: no request, no wait. The next ask pays one
  /// refresh and keeps it fresh again.
  @Test func anAccountNobodyAsksForStopsBeingRefreshedAhead() async throws {
    let issued = Atomic(0)
    let transport = ScriptedTransport { _ in
      let n = issued.add(1, ordering: .sequentiallyConsistent).newValue
      return ScriptedTransport.tokens(access: "access-\(n)", refresh: "refresh-\(n)", expiresIn: 3600)
    }
    let sleep = ManualSleep(clock: clock)
    let service = try service(transport, sleep: sleep)
    defer { service.stop() }
    try await askOnce(service, try seed(lifetime: 3600))
    #expect(await sleep.next() == .milliseconds(2_700_001))
    sleep.elapse()
    #expect((2699...2701).contains(await sleep.next().seconds))
    sleep.elapse()
    #expect((2699...2701).contains(await sleep.next().seconds))
    #expect(transport.requestCount == 2, "refreshed ahead while in use: two hours after the ask")
    sleep.elapse()
    #expect(try await keptFresh(service, count: 0) == 0, "no longer kept fresh, 135 min after the ask")
    #expect(transport.requestCount == 2, "and not refreshed for it")

    let stored = try #require(
      try InMemoryTokenStore(group: Account.defaultGroup, backing: backing).load(AccountKey(type: "corp", id: "sub-1")))
    _ = try await service.accessToken(group: Account.defaultGroup, stored: stored, minimumValidity: 0)
    #expect(try await keptFresh(service, count: 1) == 1, "asked again: kept fresh again")
    #expect(await sleep.next().seconds > 0)
  }

  /// An account asked for between its refreshes is kept fresh for as long as it is asked.
  @Test func anAccountInUseIsKeptFresh() async throws {
    let transport = ScriptedTransport { _ in
      ScriptedTransport.tokens(access: "access-n", refresh: "refresh-n", expiresIn: 3600)
    }
    let sleep = ManualSleep(clock: clock)
    let service = try service(transport, sleep: sleep)
    defer { service.stop() }
    try await askOnce(service, try seed(lifetime: 3600))
    for _ in 0..<5 {
      _ = await sleep.next()
      sleep.elapse()
      let stored = try #require(
        try InMemoryTokenStore(group: Account.defaultGroup, backing: backing)
          .load(AccountKey(type: "corp", id: "sub-1")))
      _ = try await service.accessToken(group: Account.defaultGroup, stored: stored, minimumValidity: 0)
    }
    _ = await sleep.next()
    // Nearly four hours on: refreshed every 45 minutes (a client's ask at the due time may be the
    // one that refreshes), and kept fresh still.
    #expect(transport.requestCount >= 5)
    #expect(try await keptFresh(service, count: 1) == 1)
  }

  /// `keep_fresh` in config.toml keeps an account fresh whoever asks, for as long as the
  /// agent runs.
  @Test func anAccountConfigToKeepFreshIsNeverDropped() async throws {
    try writeConfig("[agent]\nkeep_fresh = true\n")
    let transport = ScriptedTransport { _ in
      ScriptedTransport.tokens(access: "access-n", refresh: "refresh-n", expiresIn: 3600)
    }
    let sleep = ManualSleep(clock: clock)
    let service = try service(transport, sleep: sleep)
    defer { service.stop() }
    let stored = try seed(lifetime: 3600)
    // Asked for once too: the configuration still wins.
    try await askOnce(service, stored)
    service.keepConfiguredAccountsFresh()
    for _ in 0..<5 {
      _ = await sleep.next()
      sleep.elapse()
    }
    _ = await sleep.next()
    #expect(transport.requestCount == 5, "refreshed ahead five times, nearly four hours after the only ask")
    #expect(try await keptFresh(service, count: 1) == 1)
  }

  /// The rule itself: an hour at least, or two lifetimes of the token.
  @Test func theInUseRule() {
    let now = clock.now
    func holds(_ askedAgo: Double, lifetime: Double?) -> Bool {
      AgentService.InUse.holds(lastAsked: now.addingTimeInterval(-askedAgo), lifetime: lifetime, now: now)
    }
    #expect(holds(3600, lifetime: 300), "five-minute tokens: an hour")
    #expect(!holds(3601, lifetime: 300))
    #expect(holds(7200, lifetime: 3600), "one-hour tokens: two hours")
    #expect(!holds(7201, lifetime: 3600))
    #expect(holds(86_400 * 2, lifetime: 86_400), "one-day tokens: two days")
    #expect(!holds(3601, lifetime: nil), "no known lifetime: an hour")
  }

  @Test func aFailingServerIsAskedAgainAfterDoublingWaitsUpToFiveMinutes() async throws {
    let transport = ScriptedTransport { _ in ScriptedTransport.oauthError("server_error", status: 500) }
    let sleep = ManualSleep(clock: clock)
    let service = try service(transport, sleep: sleep)
    defer { service.stop() }
    try await askOnce(service, try seed(lifetime: 3600))
    #expect(await sleep.next() == .milliseconds(2_700_001))
    var pauses: [Double] = []
    for _ in 0..<6 {
      sleep.elapse()
      pauses.append(await sleep.next().seconds)
    }
    // From the agent's first backoff (30 s), doubling, but no longer than the pause its
    // clients share (ServerBackoff.longest): the server may be back any minute.
    #expect(pauses == [30, 60, 120, 240, 300, 300])
    #expect(transport.requestCount == 6, "one request per pause, no more")
    #expect(storedAccess == "access-0", "the token is kept")
  }

  /// A change of the keyring (unlocked, its daemon back) cuts the pause after a failed
  /// refresh ahead short: the refresh is tried again at once, not after the backoff.
  @Test func aKeyringChangeWakesARefreshThatFailed() async throws {
    let transport = ScriptedTransport { _ in ScriptedTransport.oauthError("server_error", status: 500) }
    let sleep = ManualSleep(clock: clock)
    let service = try service(transport, sleep: sleep)
    defer { service.stop() }
    try await askOnce(service, try seed(lifetime: 3600))
    #expect(await sleep.next() == .milliseconds(2_700_001))
    sleep.elapse()
    #expect(await sleep.next().seconds == 30, "the first backoff")
    #expect(transport.requestCount == 1)
    service.keyringChanged()
    // Tried again at once, not 30 s later (the clients' shared pause for the server answers
    // it without a request), and failed again: the next backoff.
    #expect(await sleep.next().seconds == 60)
  }

  @Test func aRetryAfterLongerThanTheBackoffIsWaitedOutAndClientsGetTheErrorMeanwhile() async throws {
    let transport = ScriptedTransport { _ in
      HTTPResponse(status: 503, headers: [HTTPHeader("Retry-After", "900")], body: Array("busy".utf8))
    }
    let sleep = ManualSleep(clock: clock)
    let service = try service(transport, sleep: sleep)
    defer { service.stop() }
    let stored = try seed(lifetime: 3600)
    try await askOnce(service, stored)
    #expect(await sleep.next() == .milliseconds(2_700_001))
    sleep.elapse()
    #expect(await sleep.next() == .seconds(900), "the server's 900 s, not the first backoff's 30")
    #expect(transport.requestCount == 1)

    // A client that needs a fresh token meanwhile gets the server's answer at once,
    // without a request of its own.
    let error = await #expect(throws: TokenKitError.self) {
      try await service.accessToken(group: Account.defaultGroup, stored: stored, minimumValidity: 3000)
    }
    #expect(error?.retryAfter == 900)
    #expect(transport.requestCount == 1)

    sleep.elapse()
    _ = await sleep.next()
    #expect(transport.requestCount == 2, "asked again once the 900 s are over")
  }

  /// `backoff`, the rule: doubling from the first backoff to the longest; a server or
  /// network failure no longer than the clients' pause; never less than `Retry-After`.
  @Test(
    arguments: [
      (1, TokenKitError.Code.keyringLocked, nil, 30),
      (2, .keyringLocked, nil, 60),
      (7, .keyringLocked, nil, 1920),
      (8, .keyringLocked, nil, 3600),
      (50, .keyringLocked, nil, 3600),
      (1, .serverError, nil, 30),
      (5, .serverError, nil, 300),
      (9, .networkFailure, nil, 300),
      (1, .serverError, 120, 120),
      (9, .serverError, 7200, 7200),
      (1, .keyringLocked, 10, 30),
    ] as [(Int, TokenKitError.Code, Double?, Double)])
  func theBackoffRule(failures: Int, code: TokenKitError.Code, retryAfter: Double?, seconds: Double) throws {
    let service = try service(ScriptedTransport { _ in HTTPResponse(status: 500) }, sleep: ManualSleep(clock: clock))
    var error = TokenKitError(code, "failed")
    error.retryAfter = retryAfter
    #expect(service.backoff(failures, error: error) == seconds)
  }
}
