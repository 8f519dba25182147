import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit

@Suite(.timeLimit(.minutes(1))) struct AccountEventsTests {
  static let account = Account(
    type: "corp", id: "user-42", name: "ada@example.org", group: "default", createdAt: OAuthFixtures.now,
    updatedAt: OAuthFixtures.now)

  @Test func everySubscriberGetsEveryEventInOrder() async {
    let center = AccountEventCenter()
    let first = EventRecorder(center)
    let second = EventRecorder(center)
    center.publish(AccountEvent(.added, Self.account))
    center.publish(AccountEvent(.refreshed, Self.account))
    center.publish(AccountEvent(.failed, Self.account, message: "HTTP 503"))
    #expect(await first.drain().map(\.kind) == [.added, .refreshed, .failed])
    let events = await second.drain()
    #expect(events.map(\.kind) == [.added, .refreshed, .failed])
    #expect(events.last?.message == "HTTP 503")
  }

  @Test func aSubscriberSeesOnlyLaterEvents() async {
    let center = AccountEventCenter()
    center.publish(AccountEvent(.added, Self.account))
    let late = EventRecorder(center)
    center.publish(AccountEvent(.revoked, Self.account))
    #expect(await late.drain().map(\.kind) == [.revoked])
  }

  @Test func observersAreCalledSynchronously() {
    let center = AccountEventCenter()
    let seen = Mutex<[AccountEvent.Kind]>([])
    center.observe { event in seen.withLock { $0.append(event.kind) } }
    center.publish(AccountEvent(.needsSignIn, Self.account))
    // No await in between: the observer already ran.
    #expect(seen.withLock { $0 } == [.needsSignIn])
  }

  @Test func aFinishedSubscriptionIsDropped() async {
    let center = AccountEventCenter()
    do {
      let stream = center.events()
      let task = Task {
        var count = 0
        for await _ in stream { count += 1 }
        return count
      }
      task.cancel()
      _ = await task.value
    }
    // Publishing to a cancelled subscriber is harmless; a live one still gets the event.
    center.publish(AccountEvent(.added, Self.account))
    let live = EventRecorder(center)
    center.publish(AccountEvent(.refreshed, Self.account))
    #expect(await live.drain().map(\.kind) == [.refreshed])
  }

  @Test func streamsEndWhenTheCenterGoesAway() async {
    var center: AccountEventCenter? = AccountEventCenter()
    let stream = center!.events()
    center!.publish(AccountEvent(.added, Self.account))
    center = nil
    var kinds: [AccountEvent.Kind] = []
    for await event in stream { kinds.append(event.kind) }
    #expect(kinds == [.added])
  }

  @Test func kindsHaveTheirHookNames() {
    #expect(AccountEvent.Kind.allCases.map(\.rawValue) == ["added", "refreshed", "needs-sign-in", "revoked", "failed"])
    #expect(AccountEvent(.needsSignIn, Self.account).description == "needs-sign-in corp:ada@example.org")
  }
}
