import ApplicationConsent
import Foundation
import TestSupport
import Testing

/// Consent for sandboxed apps, against real parts: xdg-dbus-proxy and
/// bubblewrap from Debian, set up as `flatpak run` sets them up (Tests/Support/flatpak-run.py:
/// the proxy with `--filter --talk=org.tokenctl.Agent` in a sandbox of its own holding
/// the app's `/.flatpak-info`, the app in another), the agent started by D-Bus activation
/// on the session bus of `AgentDBusTests.Desk`.
@Suite(.serialized) struct AgentSandboxTests {
  typealias Desk = AgentDBusTests.Desk

  init() throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
  }

  static let appA = "org.example.A"
  static let appB = "org.example.B"

  /// The Python program run as Flatpak app `app` (through its proxy, or with
  /// `--socket=session-bus` on the bus itself).
  static func asApp(
    _ app: String, _ desk: Desk, ownBus: Bool = false, _ arguments: String...
  ) async throws
    -> [String: Any]
  {
    let result = try await TestProcess.run(
      "/usr/bin/python3",
      ["Tests/Support/flatpak-run.py"] + (ownBus ? ["--socket=session-bus"] : []) + [
        app, "/usr/bin/python3", "/app/bin/dbus-client.py",
      ] + arguments, environment: desk.session.environment)
    return try Desk.decode(result, [app] + arguments)
  }

  /// The agent, started by D-Bus activation as a desktop program's first call starts it.
  static func activate(_ desk: Desk) async throws {
    _ = try await TestProcess.run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.tokenctl.Agent", "--object-path", "/org/tokenctl/Agent", "--method",
        "org.freedesktop.DBus.Peer.Ping",
      ], environment: desk.session.environment)
    try await AgentDBusTests.waitForName("org.tokenctl.Agent", desk)
  }

  /// The bug: every app behind a proxy was /usr/bin/xdg-dbus-proxy, so the user's Allow
  /// for app A let app B in without a question. Now each is asked for by its app id.
  @Test func eachFlatpakAppIsAskedForByItsAppID() async throws {
    let desk = try await Desk()
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada")
    let (server, log) = try await desk.notificationServer("allow")
    defer { kill(server.pid, SIGTERM) }

    let a = try await Self.asApp(Self.appA, desk, "token", "", "ada", "60")
    #expect(a["token"] as? String == ada.access, "\(a)")
    let b = try await Self.asApp(Self.appB, desk, "token", "", "ada", "60")
    #expect(b["token"] as? String == ada.access, "\(b)")
    let shown = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
    #expect(shown.count == 2, "B was not asked for: \(shown)")
    #expect(shown.first?.contains("org.example.A asks for a token of gitlocal:ada") == true, "\(shown)")
    #expect(shown.first?.contains("The Flatpak app org.example.A (flatpak:org.example.A)") == true, "\(shown)")
    #expect(shown.last?.contains("org.example.B asks for a token of gitlocal:ada") == true, "\(shown)")
    #expect(
      try await AgentDBusTests.grantStates(desk) == [
        "flatpak:\(Self.appA)": "allowed", "flatpak:\(Self.appB)": "allowed",
      ])
    let audit = desk.auditLog
    for app in [Self.appA, Self.appB] {
      #expect(audit.contains("token app=flatpak:\(app) group=default account=gitlocal:ada via=dbus"), "\(audit)")
    }
    #expect(!audit.contains("xdg-dbus-proxy"), "\(audit)")
  }

  /// `tokenctl allow flatpak:APP_ID` lets that app in, through its proxy or on the bus
  /// itself, and no other app.
  @Test func aGrantToOneFlatpakAppLetsNoOtherIn() async throws {
    let desk = try await Desk()
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada")
    try await Self.activate(desk)
    let refused = try await Self.asApp(Self.appA, desk, "token", "", "ada", "60")
    #expect(refused["error"] as? String == "org.tokenctl.Error.AccessDenied", "\(refused)")
    #expect(
      refused["message"] as? String
        == "flatpak:org.example.A may not have gitlocal:ada. If you trust it, run: "
        + "tokenctl allow flatpak:org.example.A gitlocal:ada --group default", "\(refused)")

    let allow = try await TestProcess.run(
      TestProcess.tokenctl, ["allow", "flatpak:\(Self.appA)", "gitlocal:ada"], environment: desk.session.environment)
    #expect(allow.status == 0, "\(allow.stderr)")
    #expect(allow.stdout == "Allowed flatpak:org.example.A to get tokens of gitlocal:ada in group default.\n")
    #expect(try await Self.asApp(Self.appA, desk, "token", "", "ada", "60")["token"] as? String == ada.access)
    #expect(
      try await Self.asApp(Self.appA, desk, ownBus: true, "token", "", "ada", "60")["token"] as? String == ada.access)

    for ownBus in [false, true] {
      let other = try await Self.asApp(Self.appB, desk, ownBus: ownBus, "token", "", "ada", "60")
      #expect(other["token"] == nil, "B got A's token (own bus: \(ownBus))")
      #expect(other["error"] as? String == "org.tokenctl.Error.AccessDenied", "\(other)")
      #expect((other["message"] as? String)?.hasPrefix("flatpak:org.example.B may not have") == true, "\(other)")
    }
    let apps = try await TestProcess.run(TestProcess.tokenctl, ["apps"], environment: desk.session.environment)
    #expect(apps.stdout.contains("flatpak:org.example.A  default  gitlocal:ada  allowed"), "\(apps.stdout)")
    let audit = desk.auditLog
    #expect(audit.contains("allowed app=flatpak:org.example.A group=default account=gitlocal:ada via=cli"))
    #expect(audit.contains("token app=flatpak:org.example.A group=default account=gitlocal:ada via=dbus"))
    #expect(audit.contains("refused app=flatpak:org.example.B group=default account=gitlocal:ada via=dbus"))

    let deny = try await TestProcess.run(
      TestProcess.tokenctl, ["deny", "flatpak:\(Self.appA)"], environment: desk.session.environment)
    #expect(deny.status == 0, "\(deny.stderr)")
    #expect(try await Self.asApp(Self.appA, desk, "token", "", "ada", "60")["token"] == nil)
  }

  /// Behind a proxy that is not Flatpak's, or in a mount namespace that is no Flatpak
  /// sandbox, the agent cannot tell one program from another: such callers are refused,
  /// whatever was allowed, and told why.
  @Test func proxiesAndOtherNamespacesAreRefusedAndSaySo() async throws {
    let desk = try await Desk()
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada")
    try await Self.activate(desk)
    // Python may have every account: only the way it comes in is refused.
    let allowPython = try await TestProcess.run(
      TestProcess.tokenctl, ["allow", "/usr/bin/python3", "--all"], environment: desk.session.environment)
    #expect(allowPython.status == 0, "\(allowPython.stderr)")
    #expect(try await desk.client(["token", "", "ada", "60"])["token"] as? String == ada.access)

    let socket = desk.session.directory.appendingPathComponent("runtime/proxy").path
    let proxy = try TestProcess(
      "/usr/bin/xdg-dbus-proxy",
      [desk.session.environment["DBUS_SESSION_BUS_ADDRESS"]!, socket, "--filter", "--talk=org.tokenctl.Agent"],
      environment: desk.session.environment)
    defer { proxy.terminate() }
    let deadline = Date().addingTimeInterval(AgentDBusTests.startupLimit)
    while !FileManager.default.fileExists(atPath: socket) && Date() < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    var proxied = desk.session.environment
    proxied["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(socket)"
    let behindProxy = try await desk.client(["token", "", "ada", "60"], environment: proxied)
    #expect(behindProxy["token"] == nil && behindProxy["error"] as? String == "org.tokenctl.Error.AccessDenied")
    #expect(
      (behindProxy["message"] as? String)?.hasPrefix(
        "/usr/bin/xdg-dbus-proxy is a D-Bus proxy outside any Flatpak sandbox: tokenctl cannot tell which program "
          + "is behind it, so none may have gitlocal:ada.") == true, "\(behindProxy)")

    let unshared = try await TestProcess.run(
      "/usr/bin/unshare", ["-Urm", "/usr/bin/python3", "Tests/Support/dbus-client.py", "token", "", "ada", "60"],
      environment: desk.session.environment)
    let elsewhere = try Desk.decode(unshared, ["unshare"])
    #expect(elsewhere["token"] == nil && elsewhere["error"] as? String == "org.tokenctl.Error.AccessDenied")
    #expect(
      (elsewhere["message"] as? String)?.hasPrefix(
        "\(AgentDBusTests.python) runs in another mount namespace that is not a Flatpak sandbox") == true,
      "\(elsewhere)")

    let audit = desk.auditLog
    #expect(
      audit.contains(
        "refused app=/usr/bin/xdg-dbus-proxy group=default account=gitlocal:ada via=dbus "
          + "reason=a%20D-Bus%20proxy%20outside%20a%20Flatpak%20sandbox"), "\(audit)")
    #expect(
      audit.contains(
        "refused app=\(AuditEvent.escape(AgentDBusTests.python)) group=default account=gitlocal:ada via=dbus "
          + "reason=another%20mount%20namespace,%20not%20a%20Flatpak%20sandbox"), "\(audit)")

    // Nor can the proxy be allowed: that would let every program behind it in.
    let allowProxy = try await TestProcess.run(
      TestProcess.tokenctl, ["allow", "xdg-dbus-proxy", "--all"], environment: desk.session.environment)
    #expect(allowProxy.status == 64)
    #expect(allowProxy.stderr.contains("/usr/bin/xdg-dbus-proxy is a D-Bus proxy: the agent refuses it"))
    #expect(allowProxy.stderr.contains("flatpak:org.example.App"))
  }
}
