import Foundation
import TestSupport
import Testing

/// The agent's life follows its session's: started by
/// the session bus itself it keeps none of the bus daemon's standard streams, and it
/// leaves when the bus goes away, when its socket's folder is removed, and on SIGHUP.
/// Against a real dbus-daemon of the test's own, with D-Bus activation from a service
/// file as `make install` writes it.
@Suite(.serialized, .timeLimit(.minutes(2))) struct AgentLifecycleTests {
  let directory: TemporaryDirectory
  let runtime: URL

  init() throws {
    directory = try TemporaryDirectory()
    runtime = directory.url.appendingPathComponent("runtime")
    try FileManager.default.createDirectory(
      at: runtime.appendingPathComponent("tokenctl"), withIntermediateDirectories: true)
    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtime.path)
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o700], ofItemAtPath: runtime.appendingPathComponent("tokenctl").path)
  }

  var socket: String { runtime.appendingPathComponent("tokenctl/agent.sock").path }

  var environment: [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["HOME"] = directory.path("home")
    environment["XDG_RUNTIME_DIR"] = runtime.path
    environment["XDG_CONFIG_HOME"] = directory.path("config")
    environment["XDG_STATE_HOME"] = directory.path("state")
    environment["XDG_CACHE_HOME"] = directory.path("cache")
    environment["TOKENCTL_AGENT_SOCKET"] = nil
    environment["TOKENCTL_AGENT"] = nil
    return environment
  }

  /// A session bus of our own that activates `tokenctl agent run` as the installed
  /// org.tokenctl.Agent.service does (without systemd). The bus daemon's standard streams
  /// go to `output`, which an activated service inherits.
  func startBus(output: String) async throws -> PrivateSession {
    let template = try String(
      contentsOfFile: AuthServer.path("Sources/tokenctl/dbus/org.tokenctl.Agent.service.in"), encoding: .utf8)
    let bindir = URL(fileURLWithPath: TestProcess.tokenctl).deletingLastPathComponent().path
    let service = template.replacingOccurrences(of: "@BINDIR@", with: bindir)
      .replacingOccurrences(of: "SystemdService=tokenctl-agent.service\n", with: "")
    return try await PrivateSession.started(
      .busWithoutSecretService, services: ["org.tokenctl.Agent.service": service], busOutput: output, ownAgent: false)
  }

  /// The pid the agent on `socket` reports, once it answers.
  func agentPID(_ environment: [String: String]) async throws -> pid_t {
    for _ in 0..<400 {
      let status = try await TestProcess.run(
        TestProcess.tokenctl, ["agent", "status", "--json"], environment: environment)
      if let object = try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any],
        let pid = object["pid"] as? Int
      {
        return pid_t(pid)
      }
      try await Task.sleep(for: .milliseconds(50))
    }
    throw TestFailure("no agent answered on \(socket)")
  }

  static func isRunning(_ pid: pid_t) -> Bool {
    // A zombie has no executable any more: it has left.
    kill(pid, 0) == 0 && (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) != nil
  }

  static func waitUntilGone(_ pid: pid_t, seconds: Double = 10) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      if !isRunning(pid) { return true }
      try await Task.sleep(for: .milliseconds(50))
    }
    return !isRunning(pid)
  }

  /// The session's bus goes, and so does an agent on it (started as systemd or a user
  /// would: `tokenctl agent run` on that bus).
  @Test func anAgentLeavesWithItsSessionBus() async throws {
    let session = try await PrivateSession.started(.busWithoutSecretService, ownAgent: false)
    defer { session.stop() }
    let agent = try TestProcess(
      TestProcess.tokenctl, ["agent", "run"], environment: session.environment, stderr: directory.path("agent.err"))
    defer { agent.terminate() }
    let pid = try await agentPID(session.environment)
    #expect(pid == agent.pid)
    session.stop()
    #expect(try await Self.waitUntilGone(pid), "the agent outlived its session bus")
  }

  /// `tokenctl agent run` runs the agent's own executable, beside it, in its place: the
  /// same process, which systemd's socket and the session bus know by its pid, with the
  /// options as given.
  @Test func theAgentRunsAsItsOwnExecutableInTheCommandsPlace() async throws {
    var environment = self.environment
    environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(directory.path("no-bus"))"
    let agent = try TestProcess(
      TestProcess.tokenctl, ["agent", "run", "--no-dbus", "--consent-timeout", "5"], environment: environment,
      stderr: directory.path("agent.err"))
    defer { agent.terminate() }
    let pid = try await agentPID(environment)
    #expect(pid == agent.pid)
    // Beside the full program, as /proc names it: the build folder is a link, and the
    // front end (TOKENCTL_BIN) may be reached through it.
    let program = URL(fileURLWithPath: TestProcess.tokenctl).resolvingSymlinksInPath().deletingLastPathComponent()
      .appendingPathComponent("tokenctl-agent").path
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe") == program)
    let commandLine = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")).split(separator: 0).map {
      String(decoding: $0, as: UTF8.self)
    }
    #expect(commandLine == [program, "--no-dbus", "--consent-timeout", "5"])
  }

  /// Started by the bus (D-Bus activation, no systemd), the agent keeps none of the bus
  /// daemon's streams and leaves with the bus. In `make hardening` (TOKENCTL_SOAK=1) only:
  /// in CI's `make test`, under the load of the whole suite, the activated agent once did
  /// not answer within 68 s, for a reason not yet understood; alone it answers at once.
  @Test(.enabled(if: ProcessInfo.processInfo.environment["TOKENCTL_SOAK"] == "1"))
  func anAgentTheBusStartedKeepsNoneOfItsStreamsAndLeavesWithTheBus() async throws {
    let output = directory.path("bus.out")
    let session = try await startBus(output: output)
    defer { session.stop() }
    let environment = session.environment
    // The first call starts the agent (D-Bus activation); what it answers does not matter.
    _ = try await TestProcess.run(
      "gdbus",
      [
        "call", "--session", "--timeout", "120", "--dest", "org.tokenctl.Agent", "--object-path",
        "/org/tokenctl/Agent", "--method", "org.tokenctl.Agent1.ListAccounts", "",
      ], environment: environment)
    let pid = try await agentPID(environment)
    for stream in 0...2 {
      let target = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(stream)")
      #expect(target == "/dev/null", "stream \(stream) is \(target), not /dev/null (the bus's is \(output))")
    }
    // The session ends: its bus goes, and so does the agent.
    session.stop()
    #expect(try await Self.waitUntilGone(pid), "the agent outlived its session bus")
  }

  @Test func anAgentLeavesWhenItsRuntimeFolderIsRemovedOrOnSIGHUP() async throws {
    var environment = self.environment
    environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(directory.path("no-bus"))"
    let first = try TestProcess(
      TestProcess.tokenctl, ["agent", "run", "--no-dbus"], environment: environment, stderr: directory.path("a.err"))
    defer { first.terminate() }
    let pid = try await agentPID(environment)
    #expect(pid == first.pid)
    try FileManager.default.removeItem(at: runtime.appendingPathComponent("tokenctl"))
    #expect(try await Self.waitUntilGone(pid), "the agent ran on without its socket")

    try FileManager.default.createDirectory(
      at: runtime.appendingPathComponent("tokenctl"), withIntermediateDirectories: true)
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o700], ofItemAtPath: runtime.appendingPathComponent("tokenctl").path)
    let second = try TestProcess(
      TestProcess.tokenctl, ["agent", "run", "--no-dbus"], environment: environment, stderr: directory.path("b.err"))
    defer { second.terminate() }
    let again = try await agentPID(environment)
    kill(again, SIGHUP)
    #expect(try await Self.waitUntilGone(again), "the agent ignored SIGHUP")
  }
}
