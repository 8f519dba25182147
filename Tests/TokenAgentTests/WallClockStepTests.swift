import Foundation
import NativeAppSupport
import Synchronization
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenAgent

/// The agent keeps accounts fresh by sleeping until a wall-clock time.
/// Its wall clock steps back an hour: a token's expiry, written on the old clock, now looks
/// an hour away, while the server's clock did not move, so the agent must refresh now, not
/// in an hour. (libfaketime would step a real agent's clock, but it hides a Swift
/// program's arguments from it; the step is the test clock's here, against the real boot
/// clock, as `WallClockWatch` reports it.)
@Suite struct WallClockStepTests {
  @Test func aStepBackRefreshesEveryAccountKeptFreshAtOnce() async throws {
    try await stepBack(whileTheAgentReadsItsSchedule: false)
  }

  /// The step lands while the refresh ahead reads the account to compute its wait: the
  /// wake finds no wait to cancel yet, and the wait about to begin must not begin (under
  /// CI's load this took an hour before the `wakes` count).
  @Test func aStepWhileTheScheduleIsReadStillRefreshesAtOnce() async throws {
    try await stepBack(whileTheAgentReadsItsSchedule: true)
  }

  private func stepBack(whileTheAgentReadsItsSchedule: Bool) async throws {
    // A wall clock that runs: a frozen one would drift from the boot clock as the test
    // runs, and a busy machine's few seconds would look like a step (CI's once).
    let clock = RunningClock()
    let transport = ScriptedTransport { request in
      ScriptedTransport.tokens(access: "after-the-step", refresh: "refresh-2", expiresIn: 3600)
    }
    let registry = try OAuthFixtures.registry()
    let backing = InMemoryTokenStore.Backing()
    let directory = try TemporaryDirectory()
    var settings = AgentService.Settings()
    settings.isolatesRefreshes = false
    let onRead = ReadHook()
    let service = AgentService(
      base: registry, environment: ["HOME": directory.path("home"), "XDG_CONFIG_HOME": directory.path("config")],
      settings: settings, clock: clock, transport: transport,
      makeStore: { ReadHookStore(InMemoryTokenStore(group: $0, backing: backing), onRead: onRead) }, log: { _ in })
    defer { service.stop() }
    // Every read of the account goes to the store (as when nobody watches the keyring), so
    // that the hook sees the refresh ahead's.
    service.keyringUnwatched()
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
    let step: @Sendable () -> Void = {
      clock.advance(by: -3600)
      service.wallClockChanged()
    }
    if whileTheAgentReadsItsSchedule {
      // The next read of the account is the refresh ahead's, computing its wait: now, or
      // once this wake (no step yet) ends the wait it began.
      onRead.arm(step)
      service.wallClockChanged()
    } else {
      step()
    }
    let deadline = ContinuousClock.now + .seconds(20)
    while transport.requestCount == 0, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(!onRead.isArmed, "the step was not taken")
    #expect(transport.requestCount == 1, "refreshes after the step: \(transport.requestCount)")
    let after = try InMemoryTokenStore(group: Account.defaultGroup, backing: backing).load(account.key)
    #expect(after?.tokens.accessToken == "after-the-step")
  }
}

/// The real time in whole seconds, as the keyring's items keep times, moved by hand.
private final class RunningClock: WallClock, Sendable {
  private let offset = Mutex<Double>(0)
  var now: Date { Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down) + offset.withLock { $0 }) }
  func advance(by seconds: Double) { offset.withLock { $0 += seconds } }
}

/// An action run once, on the store's next read of an account.
private final class ReadHook: Sendable {
  private let action = Mutex<(@Sendable () -> Void)?>(nil)
  func arm(_ action: @escaping @Sendable () -> Void) { self.action.withLock { $0 = action } }
  var isArmed: Bool { action.withLock { $0 != nil } }
  func fire() {
    action.withLock { action in
      defer { action = nil }; return action
    }?()
  }
}

/// A store that fires `onRead` when an account is read.
private struct ReadHookStore: TokenStore {
  let base: InMemoryTokenStore
  let onRead: ReadHook
  var group: String { base.group }

  init(_ base: InMemoryTokenStore, onRead: ReadHook) {
    self.base = base
    self.onRead = onRead
  }

  func list(_ query: AccountQuery) throws -> [AccountListing] { try base.list(query) }
  func load(_ key: AccountKey) throws -> StoredAccount? {
    onRead.fire()
    return try base.load(key)
  }
  func loadAll(_ query: AccountQuery) throws -> [StoredAccount] {
    onRead.fire()
    return try base.loadAll(query)
  }
  func save(_ account: Account, tokens: TokenSet) throws { try base.save(account, tokens: tokens) }
  func remove(_ key: AccountKey) throws -> Bool { try base.remove(key) }
  func loadToken(for key: AccountKey, scopes: ScopeSet) throws -> TokenSet? {
    try base.loadToken(for: key, scopes: scopes)
  }
  func saveToken(_ tokens: TokenSet, scopes: ScopeSet, of account: Account) throws {
    try base.saveToken(tokens, scopes: scopes, of: account)
  }
}
