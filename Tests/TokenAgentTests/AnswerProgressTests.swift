import AgentWire
import Foundation
import Synchronization
import Testing

@testable import TokenAgent

/// When the agent says `working` (``PendingAnswer``, ``AnswerProgress``): only while an
/// answer waits for a refresh, and again every period while it does, so that a client can
/// tell an agent at work from one that stopped, or one that waits on a silent keyring.
@Suite struct AnswerProgressTests {
  @Test func anAnswerIsAtWorkOnceItGoesInLineForARefresh() async throws {
    let progress = AnswerProgress()
    let turnstile = AccountTurnstile()
    #expect(!progress.isAtWork, "reading the keyring, or anything else, is no work")
    try await AnswerProgress.$current.withValue(progress) {
      try await turnstile.run("group\ngitlocal\nid-ada") { #expect(progress.isAtWork) }
    }
    #expect(progress.isAtWork)
  }

  @Test func aRefreshWithNoClientWaitingMarksNothing() async throws {
    let turnstile = AccountTurnstile()
    // A refresh ahead of time runs outside any answer: nobody is told.
    try await turnstile.run("group\ngitlocal\nid-ada") { #expect(AnswerProgress.current == nil) }
  }

  @Test func anApplicationsAnswerIsAtWorkFromTheStart() {
    #expect(AnswerProgress(atWork: true).isAtWork)
  }

  /// Every period while the answer has not come, not once: the client waits for the next
  /// `working` only a few seconds.
  @Test func aSlowAnswerIsAnnouncedAgainEveryPeriodUntilItComes() {
    let pending = PendingAnswer()
    Thread.detachNewThread {
      usleep(450_000)
      pending.deliver(AgentMessage("token"))
    }
    let calls = Mutex(0)
    let answer = pending.wait(slowAfter: 50, every: 100) { calls.withLock { $0 += 1 } }
    #expect(answer.kind == "token")
    // At 50, 150, 250 and 350 ms, and perhaps 450: a loaded machine may wake late, never early.
    #expect((2...5).contains(calls.withLock { $0 }), "\(calls.withLock { $0 }) calls")
  }

  @Test func aQuickAnswerIsNeverAnnounced() {
    let pending = PendingAnswer()
    pending.deliver(AgentMessage("token"))
    let calls = Mutex(0)
    _ = pending.wait(slowAfter: 250, every: 1000) { calls.withLock { $0 += 1 } }
    #expect(calls.withLock { $0 } == 0)
  }
}
