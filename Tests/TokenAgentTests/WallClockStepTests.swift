import Foundation
import NativeAppSupport
import Synchronization
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenAgent

/// The agent keeps accounts fresh by sleeping until a wall-clock time (issue 28, item 6).
/// Its wall clock steps back an hour: a token's expiry, written on the old clock, now looks
/// an hour away, while the server's clock did not move, so the agent must refresh now, not
/// in an hour. (libfaketime would step a real agent's clock, but it hides a Swift
/// program's arguments from it; the step is the test clock's here, against the real boot
/// clock, as `WallClockWatch` reports it.)
@Suite struct WallClockStepTests {
  @Test func aStepBackRefreshesEveryAccountKeptFreshAtOnce() async throws {
    // Whole seconds, as the keyring's items keep times: the agent's memory reads them so.
    let clock = TestClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
    let transport = ScriptedTransport { request in
      ScriptedTransport.tokens(access: "after-the-step", refresh: "refresh-2", expiresIn: 3600)
    }
    let registry = try OAuthFixtures.registry()
    let backing = InMemoryTokenStore.Backing()
    let directory = try TemporaryDirectory()
    var settings = AgentService.Settings()
    settings.isolatesRefreshes = false
    let service = AgentService(
      base: registry, environment: ["HOME": directory.path("home"), "XDG_CONFIG_HOME": directory.path("config")],
      settings: settings, clock: clock, transport: transport,
      makeStore: { InMemoryTokenStore(group: $0, backing: backing) }, log: { _ in })
    defer { service.stop() }
    let account = Account(
      type: "corp", id: "sub-1", name: "ada", group: Account.defaultGroup, createdAt: clock.now, updatedAt: clock.now,
      issuer: OAuthFixtures.issuer, clientID: OAuthFixtures.clientID)
    // An hour-long token issued now: due for its refresh ahead in 45 minutes.
    let tokens = TokenSet(
      accessToken: "before-the-step", refreshToken: "refresh-1", expiresAt: clock.now.addingTimeInterval(3600),
      issuedAt: clock.now)
    try InMemoryTokenStore(group: Account.defaultGroup, backing: backing).save(account, tokens: tokens)
    let stored = try service.resolve(group: Account.defaultGroup, account: "ada")
    service.noticeWallClockStep()
    let handed = try await service.accessToken(group: Account.defaultGroup, stored: stored, minimumValidity: 0)
    #expect(handed.accessToken == "before-the-step")
    #expect(transport.requestCount == 0)

    // The clock steps back an hour, and the watch says so.
    clock.advance(by: -3600)
    service.wallClockChanged()
    let deadline = ContinuousClock.now + .seconds(20)
    while transport.requestCount == 0, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(transport.requestCount == 1, "refreshes after the step: \(transport.requestCount)")
    let after = try InMemoryTokenStore(group: Account.defaultGroup, backing: backing).load(account.key)
    #expect(after?.tokens.accessToken == "after-the-step")
  }
}
