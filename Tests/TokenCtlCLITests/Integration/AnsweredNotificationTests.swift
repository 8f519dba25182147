import Foundation
import TestSupport
import Testing

/// A consent question comes off the screen once it is answered, however it is answered:
/// through the notification (the stand-in told to leave it up after the action, as dunst
/// 1.9 does), or with `tokenctl allow` in a terminal. Each close is a `CloseNotification`
/// from the agent, which the stand-in writes down (Tests/Support/notification-server.py).
/// The same against dunst itself: DesktopNotificationDaemonTests.
@Suite(.serialized) struct AnsweredNotificationTests {
  init() throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
  }

  /// The ids the agent closed, once `id` is among them; what it closed by then otherwise.
  static func closed(_ log: String, including id: Int, within seconds: TimeInterval = 10) async throws -> [Int] {
    let deadline = Date().addingTimeInterval(seconds)
    var ids: [Int] = []
    repeat {
      ids = ((try? String(contentsOfFile: log + ".closed", encoding: .utf8)) ?? "").split(separator: "\n")
        .compactMap { Int($0) }
      if ids.contains(id) { break }
      try await Task.sleep(for: .milliseconds(20))
    } while Date() < deadline
    return ids
  }

  @Test func aQuestionAnsweredThroughTheNotificationIsClosed() async throws {
    let desk = try await AgentDBusTests.Desk()
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada")
    let (server, log) = try await desk.notificationServer("allow", "100", "keep")
    defer { kill(server.pid, SIGTERM) }

    let answer = try await desk.python("token", "", "ada", "60")
    #expect(answer["token"] as? String == ada.access, "\(answer)")
    let id = try await AgentDBusTests.firstNotificationID(log)
    #expect(try await Self.closed(log, including: id) == [id], "the answered question was closed")
  }

  @Test func aQuestionAnsweredWithTokenctlAllowIsWithdrawnAndTheTokenHandedOut() async throws {
    // A minute to answer: the answer must come from the grant, long before that.
    let desk = try await AgentDBusTests.Desk(consentTimeout: 60)
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada")
    let (server, log) = try await desk.notificationServer()
    defer { kill(server.pid, SIGTERM) }

    let environment = desk.session.environment
    let asking = Task {
      try await TestProcess.run(
        "/usr/bin/python3", ["Tests/Support/dbus-client.py", "token", "", "ada", "60"], environment: environment)
    }
    let id = try await AgentDBusTests.firstNotificationID(log)
    let started = Date()
    let allowed = try await desk.session.tokenctl("allow", "/usr/bin/python3", "gitlocal:ada")
    #expect(allowed.status == 0, "\(allowed.stderr)")
    let answer = try AgentDBusTests.Desk.decode(try await asking.value, ["token"])
    #expect(answer["token"] as? String == ada.access, "\(answer)")
    #expect(Date().timeIntervalSince(started) < 30, "answered by the grant, not at the question's timeout")
    #expect(try await Self.closed(log, including: id) == [id], "the question was withdrawn")
  }
}
