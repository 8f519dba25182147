import Foundation
import TestSupport
import Testing
import TokenKit

@testable import TokenAgent

/// The pause the agent's clients share while a server fails (issue 28, item 7), on the
/// test clock: doubling from 5 s to 5 minutes, never shorter than `Retry-After`, over when
/// the server answers.
@Suite struct ServerBackoffTests {
  let clock = TestClock()
  let backoff = ServerBackoff()
  static let down = TokenKitError(.serverError, "the server answered 503")

  @Test func pausesDoubleFromFiveSecondsToFiveMinutes() {
    var pauses: [Double] = []
    for _ in 0..<9 {
      let until = backoff.failed("ada", error: Self.down, now: clock.now)
      pauses.append(until.timeIntervalSince(clock.now))
      clock.advance(by: until.timeIntervalSince(clock.now))
    }
    #expect(pauses == [5, 10, 20, 40, 80, 160, 300, 300, 300])
  }

  @Test func whileAPauseLastsClientsGetItsErrorThenTheServerIsAskedAgain() {
    #expect(backoff.current("ada", now: clock.now) == nil)
    backoff.failed("ada", error: Self.down, now: clock.now)
    clock.advance(by: 4.9)
    #expect(backoff.current("ada", now: clock.now)?.message == Self.down.message)
    #expect(backoff.current("grace", now: clock.now) == nil, "a pause is per account")
    clock.advance(by: 0.1)
    #expect(backoff.current("ada", now: clock.now) == nil, "over after 5 s")
  }

  @Test func aRetryAfterLongerThanThePauseIsHonoured() {
    var busy = TokenKitError(.serverError, "the server answered 429")
    busy.retryAfter = 900
    let until = backoff.failed("ada", error: busy, now: clock.now)
    #expect(until.timeIntervalSince(clock.now) == 900)
    clock.advance(by: 899)
    #expect(backoff.current("ada", now: clock.now)?.retryAfter == 900)
    var soon = Self.down
    soon.retryAfter = 1
    #expect(backoff.failed("grace", error: soon, now: clock.now).timeIntervalSince(clock.now) == 5, "never shorter")
  }

  @Test func anAnswerEndsThePauseAndTheDoubling() {
    for _ in 0..<4 { backoff.failed("ada", error: Self.down, now: clock.now) }
    backoff.succeeded("ada")
    #expect(backoff.current("ada", now: clock.now) == nil)
    #expect(backoff.failed("ada", error: Self.down, now: clock.now).timeIntervalSince(clock.now) == 5)
  }

  @Test func onlyServerAndNetworkFailuresPause() {
    #expect(ServerBackoff.pauses(for: TokenKitError(.serverError, "x")))
    #expect(ServerBackoff.pauses(for: TokenKitError(.networkFailure, "x")))
    #expect(!ServerBackoff.pauses(for: TokenKitError(.needsSignIn, "x")), "a refused grant ends the refreshes")
    #expect(!ServerBackoff.pauses(for: TokenKitError(.keyringLocked, "x")), "not the server's fault")
  }
}
