import TestSupport
import Testing

@testable import TokenAgent

/// The agent's sign-in notification comes once a day per account, by the agent's clock:
/// the day is the injected clock's, so it is tested without waiting a day.
@Suite struct SignInNoticesTests {
  @Test func oncePerAccountADayOnTheInjectedClock() {
    let clock = TestClock()
    let notices = DesktopSession.SignInNotices(clock: clock)
    #expect(notices.due(group: "default", account: "gitlab:ada"))
    #expect(!notices.due(group: "default", account: "gitlab:ada"), "shown a moment ago")
    #expect(notices.due(group: "default", account: "gitlab:grace"), "another account has its own day")
    #expect(notices.due(group: "work", account: "gitlab:ada"), "and so does the same account in another group")
    clock.advance(by: 86_399)
    #expect(!notices.due(group: "default", account: "gitlab:ada"), "not yet a day")
    clock.advance(by: 1)
    #expect(notices.due(group: "default", account: "gitlab:ada"), "a day later")
    #expect(!notices.due(group: "default", account: "gitlab:ada"), "and then not for another day")
  }
}
