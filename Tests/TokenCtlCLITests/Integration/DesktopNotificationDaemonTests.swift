import ApplicationConsent
import Foundation
import TestSupport
import Testing

/// The agent's notifications in a real notification daemon: Debian's dunst 1.9 on Xvfb,
/// on the test's private session bus (AgentDBusTests.Desk), answered through dunst's own
/// means as a person would: `dunstctl context`, dunst's menu of a notification's actions
/// (its `dmenu` here a script that picks one), and what is on screen read back from
/// `dunstctl count` and from dunst's `-print` of each notification it shows.
@Suite(.serialized, .enabled(if: DesktopTests.enabled, "run with `make test-desktop`"))
struct DesktopNotificationDaemonTests {
  /// Xvfb and dunst for one desk; stopped with `stop()`, and by themselves when the test
  /// process or the desk's bus is gone.
  final class Screen {
    let xvfb: TestProcess
    let dunst: TestProcess
    let environment: [String: String]
    /// What dunst printed of each notification it showed.
    let printed: String

    init(_ desk: AgentDBusTests.Desk, choose label: String = "Allow") async throws {
      let folder = desk.home.appendingPathComponent("dunst")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      // dunst's menu lists each action as `#LABEL (SUMMARY) [ID,KEY]`; the person picks one.
      let choose = folder.appendingPathComponent("choose")
      try "#!/bin/sh\nexec grep -m1 \"^#$1 \"\n".write(to: choose, atomically: true, encoding: .utf8)
      chmod(choose.path, 0o700)
      let configuration = folder.appendingPathComponent("dunstrc")
      try "[global]\n    dmenu = \(choose.path) \(label)\n".write(to: configuration, atomically: true, encoding: .utf8)
      // Xvfb on a display number it picks, written to `display`; the shell stops it when
      // this process is gone or the shell is told to stop.
      let display = folder.appendingPathComponent("display").path
      xvfb = try TestProcess(
        "/bin/sh",
        [
          "-c",
          """
          Xvfb -displayfd 3 -nolisten tcp -screen 0 1024x768x24 3>"$1" 2>/dev/null & x=$!
          trap 'kill $x; exit 0' TERM
          while kill -0 "$2" 2>/dev/null && kill -0 $x 2>/dev/null; do sleep 1; done
          kill $x 2>/dev/null
          """, "xvfb", display, String(getpid()),
        ])
      var number = ""
      let deadline = Date().addingTimeInterval(AgentDBusTests.startupLimit)
      while number.isEmpty, Date() < deadline {
        number = ((try? String(contentsOfFile: display, encoding: .utf8)) ?? "").trimmingCharacters(
          in: .whitespacesAndNewlines)
        if number.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
      }
      guard !number.isEmpty else {
        xvfb.terminate()
        throw TestFailure("Xvfb did not start")
      }
      var environment = desk.session.environment
      environment["DISPLAY"] = ":\(number)"
      self.environment = environment
      printed = folder.appendingPathComponent("printed").path
      dunst = try TestProcess(
        "/usr/bin/dunst", ["-conf", configuration.path, "-print"], environment: environment, stdout: printed,
        stderr: folder.appendingPathComponent("dunst.log").path)
      do { try await AgentDBusTests.waitForName("org.freedesktop.Notifications", desk) } catch {
        stop()
        throw error
      }
    }

    func dunstctl(_ arguments: String...) async throws -> String {
      let result = try await TestProcess.run("/usr/bin/dunstctl", arguments, environment: environment)
      guard result.status == 0 else { throw TestFailure("dunstctl \(arguments): \(result.stderr)") }
      return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// How many notifications dunst has on screen.
    func displayed() async throws -> Int { Int(try await dunstctl("count", "displayed")) ?? -1 }

    /// Waits until dunst has `count` notifications on screen; how many it has at the end.
    func displayed(becomes count: Int, within seconds: TimeInterval) async throws -> Int {
      let deadline = Date().addingTimeInterval(seconds)
      var now = try await displayed()
      while now != count, Date() < deadline {
        try await Task.sleep(for: .milliseconds(100))
        now = try await displayed()
      }
      return now
    }

    /// What dunst printed of the notifications it showed so far.
    var shown: String { (try? String(contentsOfFile: printed, encoding: .utf8)) ?? "" }

    /// Waits until dunst has shown a notification whose summary contains `text`.
    func waitForShown(_ text: String, within seconds: TimeInterval = 30) async throws {
      let deadline = Date().addingTimeInterval(seconds)
      while !shown.contains(text) {
        guard Date() < deadline else { throw TestFailure("dunst showed no \"\(text)\": \(shown)") }
        try await Task.sleep(for: .milliseconds(50))
      }
    }

    func stop() {
      dunst.terminate()
      xvfb.terminate()
    }
  }

  /// The Python program asking for ada's token, in the background.
  static func asking(_ desk: AgentDBusTests.Desk) -> Task<ProcessResult, any Error> {
    let environment = desk.session.environment
    return Task {
      try await TestProcess.run(
        "/usr/bin/python3", ["Tests/Support/dbus-client.py", "token", "", "ada", "60"], environment: environment)
    }
  }

  @Test func allowChosenInDunstsMenuGrantsHandsOutTheTokenAndTakesTheQuestionOffTheScreen() async throws {
    let desk = try await AgentDBusTests.Desk(consentTimeout: 60)
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada")
    let screen = try await Screen(desk, choose: "Allow")
    defer { screen.stop() }

    let asking = Self.asking(desk)
    try await screen.waitForShown("asks for a token of gitlocal:ada")
    #expect(try await screen.displayed() == 1)
    _ = try await screen.dunstctl("context")
    let answer = try AgentDBusTests.Desk.decode(try await asking.value, ["token"])
    #expect(answer["token"] as? String == ada.access, "\(answer)")
    #expect(try await AgentDBusTests.grantStates(desk) == [AgentDBusTests.python: "allowed"])
    #expect(desk.auditLog.contains("allowed app=\(AuditEvent.escape(AgentDBusTests.python))"), "\(desk.auditLog)")
    #expect(
      try await screen.displayed(becomes: 0, within: 5) == 0,
      "the answered question is off the screen, its actions no longer offered")
    #expect(try await screen.dunstctl("count", "history") == "1")
  }

  @Test func denyChosenInDunstsMenuRefusesAndTakesTheQuestionOffTheScreen() async throws {
    let desk = try await AgentDBusTests.Desk(consentTimeout: 60)
    defer { desk.stop() }
    try await desk.seed(name: "ada")
    let screen = try await Screen(desk, choose: "Deny")
    defer { screen.stop() }

    let asking = Self.asking(desk)
    try await screen.waitForShown("asks for a token of gitlocal:ada")
    _ = try await screen.dunstctl("context")
    let answer = try AgentDBusTests.Desk.decode(try await asking.value, ["token"])
    #expect(answer["error"] as? String == "org.tokenctl.Error.AccessDenied", "\(answer)")
    #expect(try await AgentDBusTests.grantStates(desk) == [AgentDBusTests.python: "denied"])
    #expect(try await screen.displayed(becomes: 0, within: 5) == 0)
  }

  @Test func aQuestionAnsweredWithTokenctlAllowIsWithdrawnFromTheScreen() async throws {
    let desk = try await AgentDBusTests.Desk(consentTimeout: 60)
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada")
    let screen = try await Screen(desk)
    defer { screen.stop() }

    let asking = Self.asking(desk)
    try await screen.waitForShown("asks for a token of gitlocal:ada")
    let allowed = try await desk.session.tokenctl("allow", "/usr/bin/python3", "gitlocal:ada")
    #expect(allowed.status == 0, "\(allowed.stderr)")
    let answer = try AgentDBusTests.Desk.decode(try await asking.value, ["token"])
    #expect(answer["token"] as? String == ada.access, "\(answer)")
    #expect(try await screen.displayed(becomes: 0, within: 5) == 0, "the question was withdrawn")
  }

  @Test func aQuestionNobodyAnswersComesOffTheScreenAtItsTimeout() async throws {
    // Two seconds, well before dunst's own ten-second expiry of a normal notification.
    let desk = try await AgentDBusTests.Desk(consentTimeout: 2)
    defer { desk.stop() }
    try await desk.seed(name: "ada")
    let screen = try await Screen(desk)
    defer { screen.stop() }

    let asking = Self.asking(desk)
    try await screen.waitForShown("asks for a token of gitlocal:ada")
    let answer = try AgentDBusTests.Desk.decode(try await asking.value, ["token"])
    #expect(answer["token"] == nil, "\(answer)")
    #expect(try await screen.displayed(becomes: 0, within: 4) == 0)
    #expect(try await screen.dunstctl("count", "history") == "1", "closed by the agent, not expired by dunst")
  }

  @Test func anAccountThatNeedsASignInIsShownWithItsSignInAction() async throws {
    let desk = try await AgentDBusTests.Desk(stubArguments: ["--access-token-seconds", "4"])
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada", expiresIn: 4)
    let screen = try await Screen(desk)
    defer { screen.stop() }
    #expect(try await desk.session.tokenctl("allow", "/usr/bin/python3", "gitlocal:ada").status == 0)
    // Asking once is what makes the agent keep the account fresh.
    await #expect(try desk.python("token", "", "ada", "0")["token"] as? String == ada.access)
    let revoked = try await TestProcess.run(
      "curl", ["-s", "-d", "token=\(ada.refresh)&client_id=git", desk.stub.baseURL + "/revoke"])
    #expect(revoked.status == 0)
    try await screen.waitForShown("Sign in again to gitlocal:ada")
    let shown = screen.shown
    #expect(shown.contains("\"sign-in\": \"Sign in\""), "\(shown)")
    #expect(shown.contains("urgency: CRITICAL"), "\(shown)")
    #expect(try await screen.displayed() == 1)
    #expect(!shown.contains(ada.access) && !shown.contains(ada.refresh))
  }
}
