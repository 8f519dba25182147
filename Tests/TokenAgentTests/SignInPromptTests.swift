import Synchronization
import TestSupport
import Testing

@testable import TokenAgent

/// The desktop notification that an account needs a sign-in, and its "Sign in" action:
/// the action starts the sign-in of that account in that group, through the
/// `signIn` part the command line gives the agent (`AgentLaunch.Parts`), and nothing else
/// does.
@Suite struct SignInPromptTests {
  /// What the prompt showed, and the sign-ins it started.
  final class Desk: Sendable {
    struct Shown: Sendable {
      var summary: String
      var body: String
      var actions: [String]
      var answer: @Sendable (String?) -> Void
    }
    let shown = Mutex<[Shown]>([])
    let signIns = Mutex<[[String]]>([])
    let clock = TestClock()

    var prompt: DesktopSession.SignInPrompt {
      let signIn: AgentLaunch.SignIn = { account, group in self.signIns.withLock { $0.append([account, group]) } }
      return DesktopSession.SignInPrompt(
        notices: DesktopSession.SignInNotices(clock: clock),
        show: { summary, body, actions, answered in
          self.shown.withLock {
            $0.append(Shown(summary: summary, body: body, actions: actions.map(\.key), answer: answered))
          }
        }, signIn: signIn)
    }
  }

  @Test func signInStartsTheSignInOfThatAccountInThatGroup() throws {
    let desk = Desk()
    desk.prompt.needsSignIn(group: "work", account: "gitlab:ada")
    let shown = try #require(desk.shown.withLock { $0.first })
    #expect(shown.summary == "Sign in again to gitlab:ada")
    #expect(shown.body.contains("sign-in of gitlab:ada (group work)"))
    #expect(shown.actions == ["sign-in"])
    #expect(desk.signIns.withLock { $0 }.isEmpty, "nothing starts before the user acts")
    shown.answer("sign-in")
    #expect(desk.signIns.withLock { $0 } == [["gitlab:ada", "work"]])
  }

  /// A notification closed, or answered with anything but "Sign in", starts nothing.
  @Test(arguments: [nil, "default", "allow"] as [String?])
  func anyOtherAnswerStartsNothing(answer: String?) throws {
    let desk = Desk()
    desk.prompt.needsSignIn(group: "default", account: "gitlab:grace")
    try #require(desk.shown.withLock { $0.first }).answer(answer)
    #expect(desk.signIns.withLock { $0 }.isEmpty)
  }

  /// Once a day per account: a refresh failing again within the day shows nothing more.
  @Test func aSecondFailureTheSameDayShowsNothing() {
    let desk = Desk()
    let prompt = desk.prompt
    prompt.needsSignIn(group: "default", account: "gitlab:ada")
    prompt.needsSignIn(group: "default", account: "gitlab:ada")
    #expect(desk.shown.withLock { $0.count } == 1)
    desk.clock.advance(by: 86_400)
    prompt.needsSignIn(group: "default", account: "gitlab:ada")
    #expect(desk.shown.withLock { $0.count } == 2)
  }
}
