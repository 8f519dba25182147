import ApplicationConsent
import Foundation
import NativeAppSupport
import Synchronization
import TestSupport
import Testing
import TokenKit

@testable import TokenAgent

/// The consent prompt for a forwarded host names the host, the account, and the program
/// there only as the host reports it: quoted, said to be unchecked, and made safe first.
struct ForwardedPromptTests {
  static let host = PeerApplication.forwarded(HostName("build1")!)

  @Test func theHostsPromptNamesTheProgramItReportsAsReported() throws {
    let reported = try #require(ReportedProgram("git-credential-tokenctl (run by git)"))
    let question = DesktopSession.consentQuestion(
      application: Self.host, group: "default", account: "github:ada", reported: reported)
    #expect(
      question.summary
        == "build1 (over ssh) asks for a token of github:ada for \u{201C}git-credential-tokenctl (run by git)\u{201D}")
    #expect(question.body.contains("The host build1, which you forwarded the agent to over ssh,"))
    #expect(
      question.body.contains(
        "The program asking is \u{201C}git-credential-tokenctl (run by git)\u{201D}, as the host reports it (unchecked)."
      ))
  }

  @Test func aHostThatReportsNothingIsNamedAlone() {
    let question = DesktopSession.consentQuestion(
      application: Self.host, group: "default", account: "github:ada", reported: nil)
    #expect(question.summary == "build1 (over ssh) asks for a token of github:ada")
    #expect(!question.body.contains("reports"))
  }

  @Test func aLocalProgramsPromptTakesNoReportedWords() {
    let local = PeerApplication(identity: .executable("/usr/bin/python3"), isOwn: false)
    let question = DesktopSession.consentQuestion(
      application: local, group: "default", account: "github:ada", reported: ReportedProgram("git"))
    #expect(question.summary == "python3 asks for a token of github:ada")
  }

  /// The words reach the prompt the way the agent passes them (DesktopMethods, around
  /// consent's decision): through the question's own task.
  @Test func theReportedProgramReachesThePromptThroughTheConsentGate() async throws {
    let directory = try TemporaryDirectory()
    let home = directory.url.path
    let directories = XDGDirectories(environment: [
      "HOME": home, "XDG_STATE_HOME": home + "/state", "XDG_CONFIG_HOME": home + "/config",
      "XDG_CACHE_HOME": home + "/cache",
    ])
    let gate = ConsentGate(
      grants: ApplicationGrants(directories: directories, warn: { _ in }), audit: AuditLog(directories: directories),
      clock: TestClock())
    let seen = Mutex<[String?]>([])
    gate.askWith { _, _, _ in
      seen.withLock { $0.append(ReportedProgram.asking?.text) }
      return .denied
    }
    let account = Account(
      type: "github", id: "1", name: "ada", group: "default", createdAt: .distantPast, updatedAt: .distantPast)
    let admitted = await ReportedProgram.$asking.withValue(ReportedProgram("git-credential-tokenctl (run by git)")) {
      await gate.admit(.success(Self.host), group: "default", account: account, via: .ssh)
    }
    #expect(!admitted)
    #expect(seen.withLock { $0 } == ["git-credential-tokenctl (run by git)"])
  }

  @Test(arguments: [
    ("git-credential-tokenctl (run by git)", "git-credential-tokenctl (run by git)"),
    // Markup a notification server would render, and a line turned around.
    ("<b>tokenctl</b> & co", "?b?tokenctl?/b? ? co"),
    ("git\u{202E}lmx.exe", "git?lmx.exe"),
    ("git\nAllow: everything\u{7}", "git?Allow: everything?"),
    (String(repeating: "a", count: 100), String(repeating: "a", count: 64)),
  ])
  func reportedWordsAreMadeSafe(raw: String, shown: String) {
    #expect(ReportedProgram(raw)?.text == shown)
  }

  @Test(arguments: ["", "   ", "\u{1}\u{2}", "\u{202E}"])
  func reportedWordsWithNothingSafeLeftAreNone(raw: String) {
    #expect(ReportedProgram(raw) == nil)
  }
}
