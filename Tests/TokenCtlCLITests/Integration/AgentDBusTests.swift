import ApplicationConsent
import Foundation
import TestSupport
import Testing

/// The agent's D-Bus API (tokenctl-dbus(7)) as desktop programs meet it: a
/// session bus of the test's own that starts the agent on the first call (D-Bus
/// activation from a service file in the session's XDG_DATA_DIRS), the real keyring on
/// it, the stub authorization server, and two clients: `gdbus call` and a Python program
/// on dbus-python (Tests/Support/dbus-client.py). Notifications go to
/// Tests/Support/notification-server.py, whose header says why it stands in for a real one.
@Suite(.serialized) struct AgentDBusTests {
  init() throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
  }

  /// Python's executable as /proc names it, which is what a grant names.
  static let python = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path

  final class Desk {
    let session: PrivateSession
    let stub: StubServer
    let home: URL
    let group = "default"

    init(stubArguments: [String] = [], consentTimeout: Int = 10) async throws {
      let (baseURL, stubDirectory) = try await LoopbackService.start(
        "Tests/Support/stub-oauth-server.py", info: "stub.json", arguments: stubArguments, lifetime: 600)
      stub = StubServer(baseURL: baseURL, directory: stubDirectory)
      session = try await PrivateSession.started(
        .unlockedKeyring,
        services: [
          "org.tokenctl.Agent.service": """
          [D-BUS Service]
          Name=org.tokenctl.Agent
          Exec=\(TestProcess.tokenctl) agent run --consent-timeout \(consentTimeout)

          """
        ])
      home = URL(fileURLWithPath: session.environment["HOME"]!)
      try UserTypeFile(id: "gitlocal", displayName: "Git on this machine", issuer: stub.baseURL, clientID: "git")
        .write(configHome: home.appendingPathComponent(".config"))
    }

    /// Stores account `name` with a fresh family from the stub, expiring in `expiresIn`.
    @discardableResult
    func seed(name: String, expiresIn: Int = 7200) async throws -> (access: String, refresh: String, expires: Int) {
      let family = try await stub.admin("/_admin/issue?expires_in=\(expiresIn)", method: "POST")
      let access = try #require(family["access_token"] as? String)
      let refresh = try #require(family["refresh_token"] as? String)
      let now = Int(Date().timeIntervalSince1970)
      let expires = now + expiresIn
      let secret =
        #"{"version":1,"access_token":"\#(access)","token_type":"Bearer","expires_at":\#(expires),"issued_at":\#(now),"refresh_token":"\#(refresh)"}"#
      let stored = try await session.run(
        "secret-tool",
        [
          "store", "--label", "tokenctl test \(name)", "xdg:schema", "org.tokenctl.Account", "type", "gitlocal",
          "account", "id-\(name)", "group", group, "name", name, "scopes", "", "created", "\(now)", "updated",
          "\(now)", "expires", "\(expires)", "refreshable", "true", "issuer", stub.baseURL, "client-id", "git",
          "state", "ok",
        ], stdin: secret)
      try #require(stored.status == 0, "secret-tool: \(stored.stderr)")
      return (access, refresh, expires)
    }

    /// The Python program, on this session's bus.
    func python(_ arguments: String...) async throws -> [String: Any] {
      try await client(arguments)
    }

    /// The Python program, on this session's bus, waited for off Swift's thread pool.
    func client(_ arguments: [String], environment: [String: String]? = nil) async throws -> [String: Any] {
      try Self.decode(
        await TestProcess.run(
          "/usr/bin/python3", ["Tests/Support/dbus-client.py"] + arguments,
          environment: environment ?? session.environment), arguments)
    }

    /// What the Python program printed.
    static func decode(_ result: ProcessResult, _ arguments: [String]) throws -> [String: Any] {
      guard let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
        throw TestFailure("dbus-client.py \(arguments): \(result.stdout) \(result.stderr)")
      }
      return object
    }

    func gdbus(_ method: String, _ arguments: String...) async throws -> ProcessResult {
      try await TestProcess.run(
        "gdbus",
        [
          "call", "--session", "--dest", "org.tokenctl.Agent", "--object-path", "/org/tokenctl/Agent", "--method",
          "org.tokenctl.Agent1.\(method)",
        ] + arguments, environment: session.environment)
    }

    /// Tests/Support/notification-server.py on this session's bus, once it holds its name:
    /// `answers` are its arguments after the log it writes each notification to
    /// (`notifications.jsonl` in the home folder, returned). The caller stops it.
    func notificationServer(_ answers: String...) async throws -> (server: TestProcess, log: String) {
      let log = home.appendingPathComponent("notifications.jsonl").path
      let server = try TestProcess(
        "/usr/bin/python3", ["Tests/Support/notification-server.py", log] + answers, environment: session.environment)
      do { try await AgentDBusTests.waitForName("org.freedesktop.Notifications", self) } catch {
        kill(server.pid, SIGTERM)
        throw error
      }
      return (server, log)
    }

    var auditLog: String {
      (try? String(contentsOf: home.appendingPathComponent(".local/state/tokenctl/audit.log"), encoding: .utf8)) ?? ""
    }

    /// Stops the agent, then the bus, on a thread of its own: a test's `defer` cannot wait.
    func stop() {
      let session = session
      Thread.detachNewThread {
        _ = try? session.tokenctl("agent", "stop")
        session.stop()
      }
    }
  }

  /// The application is told on every call, never kept for a connection:
  /// a granted program that execs another keeps its bus connection, and the other
  /// program gets nothing on it (Tests/Support/dbus-exec-client.py).
  @Test func aProgramExecedOverAGrantedProgramsConnectionIsToldAnew() async throws {
    let desk = try await Desk()
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada")
    #expect(try await desk.session.tokenctl("allow", "/usr/bin/python3", "gitlocal:ada").status == 0)
    let scratch = try TemporaryDirectory()
    let other = scratch.path("another-program")
    // Copied by cp, not here: a descriptor open for writing in this process would be
    // inherited by a child another test spawns meanwhile, and exec would fail (ETXTBSY).
    #expect(try await TestProcess.run("/usr/bin/cp", [Self.python, other]).status == 0)
    let run = try await TestProcess.run(
      "/usr/bin/python3", ["Tests/Support/dbus-exec-client.py", "ada", other], environment: desk.session.environment)
    let answers = run.stdout.split(separator: "\n").map {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) ?? [:]
    }
    try #require(answers.count == 2, "\(run.stdout) \(run.stderr)")
    #expect(answers[0]["token"] as? String == ada.access, "the granted program: \(answers[0])")
    #expect(answers[1]["token"] == nil, "the program it execed got the token on its connection")
    #expect(answers[1]["error"] as? String == "org.tokenctl.Error.AccessDenied", "\(answers[1])")
    #expect(desk.auditLog.contains("refused app=\(AuditEvent.escape(other))"), "\(desk.auditLog)")
  }

  /// The same on the agent's socket, where a connection is a descriptor that a child can
  /// keep: a program allowed nothing connects, forks a child that keeps the connection, and
  /// execs an allowed program. The child, which writes the request, is the one judged
  /// (Tests/Support/socket-fork-exec-client.py), and the audit log names it.
  @Test(
    .disabled(
      if: ProcessInfo.processInfo.environment["TOKENCTL_TEST_AGENT"] == "1",
      "tests the agent's own socket, which the pass through an outside agent (Tests/Support/with-agent.sh) takes over"))
  func aConnectionKeptByAChildIsJudgedAsTheChildNotTheProgramItsOpenerExeced() async throws {
    let desk = try await Desk()
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada")
    #expect(try await desk.session.tokenctl("allow", "/usr/bin/python3", "gitlocal:ada").status == 0)
    // The first call starts the agent (D-Bus activation), and shows the grant works.
    await #expect(try desk.python("token", "", "ada", "60")["token"] as? String == ada.access)
    let scratch = try TemporaryDirectory()
    let other = scratch.path("allowed-nothing")
    #expect(try await TestProcess.run("/usr/bin/cp", [Self.python, other]).status == 0)
    let socket = try #require(desk.session.environment["XDG_RUNTIME_DIR"]) + "/tokenctl/agent.sock"
    let run = try await TestProcess.run(
      other, ["Tests/Support/socket-fork-exec-client.py", socket, "ada", "/usr/bin/python3"],
      environment: desk.session.environment)
    #expect(!run.stdout.contains(ada.access), "the child got the allowed program's token: \(run.stdout)")
    #expect(run.stdout.hasPrefix("tokenctl-agent/1 error"), "\(run.stdout) \(run.stderr)")
    #expect(desk.auditLog.contains("refused app=\(AuditEvent.escape(other))"), "\(desk.auditLog)")
  }

  /// A program that asks from many threads at once, each request waiting for the user's
  /// answer, gets an answer on every connection: the agent's bound of connections per
  /// process counts the idle ones, not those whose request came
  /// (Tests/Support/socket-threads-client.py).
  @Test(
    .disabled(
      if: ProcessInfo.processInfo.environment["TOKENCTL_TEST_AGENT"] == "1",
      "tests the agent's own socket, which the pass through an outside agent (Tests/Support/with-agent.sh) takes over"))
  func aProgramAskingFromManyThreadsGetsAnAnswerOnEveryConnection() async throws {
    let desk = try await Desk(consentTimeout: 3)
    defer { desk.stop() }
    try await desk.seed(name: "ada")
    // Starts the agent (D-Bus activation); gdbus is refused at once, with nobody to ask.
    _ = try await desk.gdbus("GetAccessToken", "", "ada", "60")
    let (server, _) = try await desk.notificationServer()
    defer { kill(server.pid, SIGTERM) }
    let socket = try #require(desk.session.environment["XDG_RUNTIME_DIR"]) + "/tokenctl/agent.sock"
    let run = try await TestProcess.run(
      "/usr/bin/python3", ["Tests/Support/socket-threads-client.py", socket, "ada", "40"],
      environment: desk.session.environment)
    let counts = try #require(
      try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Int], "\(run.stdout) \(run.stderr)")
    #expect(counts["frames"] == 40 && counts["closed"] == 0, "\(counts)")
  }

  @Test func aProgramIsRefusedThenAllowedThenDeniedAndGdbusIsRefused() async throws {
    let desk = try await Desk()
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada")
    // The first call starts the agent (D-Bus activation): there was none.
    let refused = try await desk.python("token", "", "ada", "60")
    #expect(refused["error"] as? String == "org.tokenctl.Error.AccessDenied")
    #expect((refused["message"] as? String)?.contains("tokenctl allow \(Self.python)") == true, "\(refused)")
    #expect(try await desk.session.tokenctl("agent", "status").status == 0, "activation started an agent")

    let allowed = try await desk.session.tokenctl("allow", "/usr/bin/python3", "gitlocal:ada")
    #expect(allowed.status == 0, "\(allowed.stderr)")
    let answer = try await desk.python("token", "", "ada", "60")
    #expect(answer["token"] as? String == ada.access, "\(answer)")
    #expect(answer["expires_at"] as? Int == ada.expires)
    let token = try #require(answer["token"] as? String)
    await #expect(try desk.stub.userinfoAccepts(token), "the token is active at the server")

    // gdbus is another application: nobody allowed it.
    let gdbus = try await desk.gdbus("GetAccessToken", "", "ada", "60")
    #expect(gdbus.status != 0)
    #expect(gdbus.stderr.contains("org.tokenctl.Error.AccessDenied"), "\(gdbus.stderr)")

    #expect(try await desk.session.tokenctl("deny", "/usr/bin/python3").status == 0)
    let denied = try await desk.python("token", "", "ada", "60")
    #expect(denied["error"] as? String == "org.tokenctl.Error.AccessDenied", "\(denied)")

    let audit = desk.auditLog
    for kind in ["refused", "allowed", "token", "denied"] {
      #expect(audit.contains("Z \(kind) app=\(AuditEvent.escape(Self.python))"), "no \(kind) line: \(audit)")
    }
    #expect(!audit.contains(ada.access) && !audit.contains(ada.refresh), "a token in the audit log")
  }

  @Test func listAccountsIsWhatTheCommandLineLists() async throws {
    let desk = try await Desk()
    defer { desk.stop() }
    try await desk.seed(name: "ada")
    try await desk.seed(name: "grace", expiresIn: 60)
    #expect(try await desk.session.tokenctl("allow", "/usr/bin/python3", "--all").status == 0)
    let listed = try await TestProcess.run(
      "/usr/bin/python3", ["Tests/Support/dbus-client.py", "list", ""], environment: desk.session.environment)
    let accounts = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
    let cli = try await desk.session.tokenctl("list", "--json")
    let document = try #require(try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? [String: Any])
    let expected = try #require(document["accounts"] as? [[String: Any]])
    func names(_ list: [[String: Any]]) -> [String] {
      list.map { "\($0["type"] ?? "?"):\($0["name"] ?? "?")@\($0["group"] ?? "?")" }.sorted()
    }
    #expect(names(accounts) == names(expected))
    #expect(names(accounts) == ["gitlocal:ada@default", "gitlocal:grace@default"])
    for account in accounts {
      #expect(account["refreshable"] as? Bool == true)
      #expect(account["needs_sign_in"] as? Bool == false)
      #expect((account["expires_at"] as? Int ?? 0) > Int(Date().timeIntervalSince1970))
      #expect(account.keys.sorted() == ["expires_at", "group", "id", "name", "needs_sign_in", "refreshable", "type"])
    }
  }

  @Test func answeringANotificationsAllowGrants() async throws {
    let desk = try await Desk()
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada")
    let (server, log) = try await desk.notificationServer("allow")
    defer { kill(server.pid, SIGTERM) }

    let answer = try await desk.python("token", "", "ada", "60")
    #expect(answer["token"] as? String == ada.access, "\(answer)")
    let shown = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
    #expect(shown.count == 1)
    #expect(shown.first?.contains("gitlocal:ada") == true && shown.first?.contains("\"allow\"") == true)
    let apps = try await desk.session.tokenctl("apps", "--json")
    #expect(apps.stdout.contains(Self.python), "\(apps.stdout)")
    // The grant holds: the next call asks nobody.
    await #expect(try desk.python("token", "", "ada", "60")["token"] as? String == ada.access)
    #expect(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count == 1)
    #expect(desk.auditLog.contains("allowed app=\(AuditEvent.escape(Self.python))"))
  }

  /// An answer counts only from the notification server that showed the
  /// question. Another connection that emits `ActionInvoked(id, "allow")`, to everyone and
  /// to the agent alone, before the user's *Deny*, grants nothing.
  @Test func anAnswerFromAnotherConnectionIsIgnored() async throws {
    let desk = try await Desk()
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada")
    // The user answers Deny once told to (SIGUSR1): after the forgeries below.
    let (server, log) = try await desk.notificationServer("deny", "usr1")
    defer { kill(server.pid, SIGTERM) }

    let environment = desk.session.environment
    let asking = Task {
      try await TestProcess.run(
        "/usr/bin/python3", ["Tests/Support/dbus-client.py", "token", "", "ada", "60"], environment: environment)
    }
    let id = try await Self.firstNotificationID(log)
    let agent = try await Self.owner(of: "org.tokenctl.Agent", desk)
    for destination in [[], ["--dest", agent]] {
      let forged = try await TestProcess.run(
        "gdbus",
        [
          "emit", "--session", "--object-path", "/org/freedesktop/Notifications", "--signal",
          "org.freedesktop.Notifications.ActionInvoked",
        ] + destination + ["uint32 \(id)", "'allow'"], environment: desk.session.environment)
      #expect(forged.status == 0, "gdbus emit: \(forged.stderr)")
    }
    // Both forgeries are on the bus before the server's answer is sent.
    kill(server.pid, SIGUSR1)
    let answer = try Desk.decode(try await asking.value, ["token"])
    #expect(answer["token"] == nil && answer["error"] as? String == "org.tokenctl.Error.AccessDenied", "\(answer)")
    #expect(try await Self.grantStates(desk) == [Self.python: "denied"])
    let audit = desk.auditLog
    #expect(audit.contains("denied app=\(AuditEvent.escape(Self.python)) group=default via=notification"), "\(audit)")
    #expect(!audit.contains("allowed app="), "\(audit)")
    #expect(!audit.contains(ada.access))
  }

  /// What `tokenctl apps --json` says of each application: allowed or denied.
  static func grantStates(_ desk: Desk) async throws -> [String: String] {
    let apps = try await TestProcess.run(
      TestProcess.tokenctl, ["apps", "--json"], environment: desk.session.environment)
    let document = try #require(try JSONSerialization.jsonObject(with: Data(apps.stdout.utf8)) as? [String: Any])
    let entries = try #require(document["applications"] as? [[String: Any]])
    var states: [String: String] = [:]
    for entry in entries {
      states[try #require(entry["application"] as? String)] = try #require(entry["state"] as? String)
    }
    return states
  }

  /// The unique name that owns `name` on the desk's bus.
  static func owner(of name: String, _ desk: Desk) async throws -> String {
    let owner = try await TestProcess.run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method",
        "org.freedesktop.DBus.GetNameOwner", name,
      ], environment: desk.session.environment)
    // `(':1.3',)`
    let quoted = owner.stdout.split(separator: "'")
    guard owner.status == 0, quoted.count >= 2 else { throw TestFailure("\(name) has no owner: \(owner.stderr)") }
    return String(quoted[1])
  }

  /// The id of the first notification in the notification server's log, once there is one.
  static func firstNotificationID(_ log: String) async throws -> Int {
    let deadline = Date().addingTimeInterval(startupLimit)
    while Date() < deadline {
      if let line = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").first,
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        let id = object["id"] as? Int
      {
        return id
      }
      try await Task.sleep(for: .milliseconds(20))
    }
    throw TestFailure("no notification was shown")
  }

  @Test func aRevokedGrantGivesOneNeedsSignInSignalAndOneNotification() async throws {
    let desk = try await Desk(stubArguments: ["--access-token-seconds", "4"])
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada", expiresIn: 4)
    let (server, log) = try await desk.notificationServer()
    defer { kill(server.pid, SIGTERM) }
    #expect(try await desk.session.tokenctl("allow", "/usr/bin/python3", "gitlocal:ada").status == 0)
    // Asking once is what makes the agent keep the account fresh.
    await #expect(try desk.python("token", "", "ada", "0")["token"] as? String == ada.access)
    let signals = desk.home.appendingPathComponent("signals.jsonl").path
    let watcher = try TestProcess(
      "/usr/bin/python3", ["Tests/Support/dbus-client.py", "watch", "12"], environment: desk.session.environment,
      stdout: signals, stderr: nil)
    // Another program, allowed nothing, listening as well (a copy of python is another
    // application): the agent's signals name accounts, and must not reach it.
    let other = desk.home.appendingPathComponent("other-python").path
    // Copied by a child process: a file this multi-threaded process wrote could still be
    // open in a child forked meanwhile, and exec would fail with ETXTBSY.
    let copied = try await TestProcess.run(
      "cp", [URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path, other])
    #expect(copied.status == 0)
    let overheard = desk.home.appendingPathComponent("overheard.jsonl").path
    let eavesdropper = try TestProcess(
      other, ["Tests/Support/dbus-client.py", "watch", "12"], environment: desk.session.environment,
      stdout: overheard, stderr: nil)
    try await Task.sleep(for: .milliseconds(500))
    // The server revokes the grant (RFC 7009, the refresh token's family).
    let revoked = try await TestProcess.run(
      "curl", ["-s", "-d", "token=\(ada.refresh)&client_id=git", desk.stub.baseURL + "/revoke"])
    #expect(revoked.status == 0)
    _ = await watcher.exitStatus(within: 20)
    _ = await eavesdropper.exitStatus(within: 20)
    let heard = try String(contentsOfFile: signals, encoding: .utf8).split(separator: "\n")
    let eavesdropped = try String(contentsOfFile: overheard, encoding: .utf8)
    #expect(eavesdropped.contains("watching"), "\(eavesdropped)")
    #expect(!eavesdropped.contains("gitlocal:ada"), "a program allowed nothing heard of the account: \(eavesdropped)")
    let needsSignIn = heard.filter { $0.contains("\"NeedsSignIn\"") }
    #expect(needsSignIn.count == 1, "\(heard)")
    #expect(needsSignIn.first?.contains("\"default\", \"gitlocal:ada\"") == true, "\(needsSignIn)")
    #expect(heard.contains { $0.contains("\"AccountChanged\"") }, "\(heard)")
    let shown = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
    #expect(shown.count == 1, "\(shown)")
    #expect(shown.first?.contains("\"sign-in\"") == true)
    for line in heard + shown { #expect(!line.contains(ada.access) && !line.contains(ada.refresh)) }
    let after = try await desk.python("token", "", "ada", "60")
    #expect(after["error"] as? String == "org.tokenctl.Error.NeedsSignIn", "\(after)")
  }

  @Test func hostileCallsGetAnErrorAndNothingElse() async throws {
    let desk = try await Desk()
    defer { desk.stop() }
    let ada = try await desk.seed(name: "ada")
    let allowed = try await desk.session.tokenctl("allow", "gdbus", "gitlocal:ada")
    #expect(allowed.status == 0, "\(allowed.stderr)")
    let cases: [(String, [String], String)] = [
      ("a huge account", ["", String(repeating: "a", count: 100_000), "60"], "org.freedesktop.DBus.Error.InvalidArgs"),
      ("control characters", ["", "ada\u{1b}[2J", "60"], "org.freedesktop.DBus.Error.InvalidArgs"),
      ("another group", ["work", "ada", "60"], "org.tokenctl.Error.AccessDenied"),
      ("a missing argument", ["", "ada"], "org.freedesktop.DBus.Error.InvalidArgs"),
    ]
    for (label, arguments, error) in cases {
      let result = try await TestProcess.run(
        "gdbus",
        [
          "call", "--session", "--dest", "org.tokenctl.Agent", "--object-path", "/org/tokenctl/Agent", "--method",
          "org.tokenctl.Agent1.GetAccessToken",
        ] + arguments, environment: desk.session.environment)
      #expect(result.status != 0, "\(label)")
      #expect(result.stderr.contains(error), "\(label): \(result.stderr)")
      #expect(!result.stdout.contains(ada.access), "\(label)")
    }
    let fine = try await desk.gdbus("GetAccessToken", "", "ada", "60")
    #expect(fine.stdout.contains(ada.access), "the agent still answers: \(fine.stderr)")
  }

  /// How long a helper the tests start may take to show up: under `make test`, with every
  /// suite running at once on two cores, Python with dbus and gi has taken over 10 s, and
  /// over 30 s on a machine busy with builds besides (CI once).
  static let startupLimit: TimeInterval = 90

  static func waitForName(_ name: String, _ desk: Desk) async throws {
    let deadline = Date().addingTimeInterval(startupLimit)
    while Date() < deadline {
      let owner = try await TestProcess.run(
        "gdbus",
        [
          "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method",
          "org.freedesktop.DBus.NameHasOwner", name,
        ], environment: desk.session.environment)
      if owner.stdout.contains("true") { return }
      try await Task.sleep(for: .milliseconds(50))
    }
    throw TestFailure("\(name) did not appear on the bus")
  }
}

extension StubServer {
  /// Whether the stub takes `accessToken` (its userinfo endpoint answers 200).
  func userinfoAccepts(_ accessToken: String) async throws -> Bool {
    let result = try await TestProcess.run(
      "curl",
      [
        "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(accessToken)",
        baseURL + "/userinfo",
      ])
    return result.stdout == "200"
  }
}
