import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenAgent

/// The pause the agent's clients share while a server fails, on the test clock: clients
/// get the last failure at once, one request at a time goes through as a probe (after 1 s,
/// doubling to 4 s, never before `Retry-After`), and the probe's success ends the pause
/// for everyone, however long the outage lasted.
@Suite struct ServerBackoffTests {
  let clock = TestClock()
  let backoff = ServerBackoff()
  static let down = TokenKitError(.serverError, "the server answered 503")

  @Test func probesAreDueAfterOneSecondDoublingToFour() {
    var intervals: [Double] = []
    for _ in 0..<6 {
      let due = backoff.failed("ada", error: Self.down, now: clock.now)
      intervals.append(due.timeIntervalSince(clock.now))
      clock.advance(by: due.timeIntervalSince(clock.now))
      #expect(backoff.admit("ada", now: clock.now) == nil, "the probe goes when due")
    }
    #expect(intervals == [1, 2, 4, 4, 4, 4])
  }

  @Test func whileAPauseLastsClientsGetItsErrorAndOneProbeGoesAtATime() {
    #expect(backoff.admit("ada", now: clock.now) == nil, "no pause: ask")
    backoff.failed("ada", error: Self.down, now: clock.now)
    clock.advance(by: 0.9)
    #expect(backoff.current("ada", now: clock.now)?.message == Self.down.message)
    #expect(backoff.admit("ada", now: clock.now)?.message == Self.down.message)
    #expect(backoff.current("grace", now: clock.now) == nil, "a pause is per account")
    clock.advance(by: 0.1)
    #expect(backoff.current("ada", now: clock.now) == nil, "a probe is due: the caller may take its turn")
    #expect(backoff.admit("ada", now: clock.now) == nil, "this one is the probe")
    #expect(backoff.admit("ada", now: clock.now)?.message == Self.down.message, "one probe at a time")
    #expect(backoff.current("ada", now: clock.now) != nil, "the others are answered at once meanwhile")
    backoff.succeeded("ada")
    #expect(backoff.admit("ada", now: clock.now) == nil, "the probe's success ends the pause")
  }

  /// However long the outage, a client meets the recovered server within the longest
  /// interval between probes: the pause no longer outlives the outage.
  @Test(arguments: [10.0, 160, 3600])
  func aClientSucceedsWithinFourSecondsOfTheServersReturn(outage: Double) {
    let start = clock.now
    var serverUp: Bool { clock.now.timeIntervalSince(start) >= outage }
    var firstSuccess: Date?
    var requests = 0
    // A client every 100 ms, as a build asking for its token keeps doing.
    while firstSuccess == nil {
      if backoff.admit("ada", now: clock.now) == nil {
        requests += 1
        if serverUp {
          backoff.succeeded("ada")
          firstSuccess = clock.now
        } else {
          backoff.failed("ada", error: Self.down, now: clock.now)
        }
      }
      clock.advance(by: 0.1)
    }
    let late = firstSuccess!.timeIntervalSince(start) - outage
    #expect(late <= ServerBackoff.probeEvery + 0.1, "first success \(late) s after the server came back")
    #expect(Double(requests) <= outage / 4 + 4, "\(requests) requests in \(outage) s")
  }

  @Test func noProbeGoesBeforeTheServersRetryAfter() {
    var busy = TokenKitError(.serverError, "the server answered 429")
    busy.retryAfter = 900
    let due = backoff.failed("ada", error: busy, now: clock.now)
    #expect(due.timeIntervalSince(clock.now) == 900)
    clock.advance(by: 899)
    #expect(backoff.admit("ada", now: clock.now)?.retryAfter == 900)
    clock.advance(by: 1)
    #expect(backoff.admit("ada", now: clock.now) == nil)
    var soon = Self.down
    soon.retryAfter = 0.5
    #expect(backoff.failed("grace", error: soon, now: clock.now).timeIntervalSince(clock.now) == 1, "never shorter")
  }

  @Test func aProbeThatEndsWithoutAnswerLetsTheNextRequestProbe() {
    backoff.failed("ada", error: Self.down, now: clock.now)
    clock.advance(by: 1)
    #expect(backoff.admit("ada", now: clock.now) == nil)
    backoff.settled("ada")
    #expect(backoff.admit("ada", now: clock.now) == nil, "settled: the pause stays, the next may probe")
    clock.advance(by: ServerBackoff.probeLost)
    #expect(backoff.admit("ada", now: clock.now) == nil, "a probe never heard of again is taken as lost")
  }

  @Test func anAnswerEndsThePauseAndTheDoubling() {
    for _ in 0..<4 { backoff.failed("ada", error: Self.down, now: clock.now) }
    backoff.succeeded("ada")
    #expect(backoff.current("ada", now: clock.now) == nil)
    #expect(backoff.failed("ada", error: Self.down, now: clock.now).timeIntervalSince(clock.now) == 1)
  }

  @Test func onlyServerAndNetworkFailuresPause() {
    #expect(ServerBackoff.pauses(for: TokenKitError(.serverError, "x")))
    #expect(ServerBackoff.pauses(for: TokenKitError(.networkFailure, "x")))
    #expect(!ServerBackoff.pauses(for: TokenKitError(.needsSignIn, "x")), "a refused grant ends the refreshes")
    #expect(!ServerBackoff.pauses(for: TokenKitError(.keyringLocked, "x")), "not the server's fault")
  }
}

/// The same through the agent's service, with a scripted server that fails for 160 s and
/// then recovers, and a client asking every half second: the first token comes within 5 s
/// of the server's return, and the failing server saw one request per probe interval.
@Suite struct ServerOutageRecoveryTests {
  let clock = TestClock()
  let backing = InMemoryTokenStore.Backing()
  let directory: TemporaryDirectory

  init() throws { directory = try TemporaryDirectory() }

  @Test func clientsGetTokensWithinFiveSecondsOfTheServersRecovery() async throws {
    let start = clock.now
    let clock = clock
    let transport = ScriptedTransport { _ in
      clock.now.timeIntervalSince(start) < 160
        ? HTTPResponse(status: 500, body: Array("down".utf8))
        : ScriptedTransport.tokens(access: "access-1", refresh: "refresh-1", expiresIn: 3600)
    }
    var settings = AgentService.Settings()
    settings.isolatesRefreshes = false
    let backing = backing
    let service = AgentService(
      base: try OAuthFixtures.registry(),
      environment: ["HOME": directory.path("home"), "XDG_CONFIG_HOME": directory.path("config")],
      settings: settings, clock: clock, transport: transport,
      makeStore: { InMemoryTokenStore(group: $0, backing: backing) }, log: { _ in },
      sleep: { _ in try await Task.sleep(for: .seconds(3600)) })
    defer { service.stop() }
    let account = Account(
      type: "corp", id: "sub-1", name: "ada", group: Account.defaultGroup, createdAt: clock.now,
      updatedAt: clock.now, issuer: OAuthFixtures.issuer, clientID: OAuthFixtures.clientID)
    let expired = TokenSet(
      accessToken: "access-0", refreshToken: "refresh-0", expiresAt: clock.now.addingTimeInterval(-1),
      issuedAt: clock.now.addingTimeInterval(-3600))
    try InMemoryTokenStore(group: Account.defaultGroup, backing: backing).save(account, tokens: expired)
    let stored = StoredAccount(account: account, tokens: expired)

    var firstToken: Double?
    var failed = 0
    while firstToken == nil, clock.now.timeIntervalSince(start) < 400 {
      do {
        let tokens = try await service.accessToken(group: Account.defaultGroup, stored: stored, minimumValidity: 0)
        #expect(tokens.accessToken == "access-1")
        firstToken = clock.now.timeIntervalSince(start)
      } catch {
        failed += 1
      }
      clock.advance(by: 0.5)
    }
    let first = try #require(firstToken, "no token in 400 s")
    #expect(first - 160 <= 5, "first token \(first - 160) s after the server's recovery")
    // The server was asked about once per probe interval while down, not once per client.
    #expect(transport.requestCount <= 160 / 4 + 6, "\(transport.requestCount) requests for \(failed) failures")
    #expect(failed > transport.requestCount, "clients were answered from the pause meanwhile")
  }
}
