import Foundation
import TestSupport
import Testing

@testable import TokenCtlCLI

/// A client that finds no agent starts one where nothing else would ("fast by
/// default"): no systemd user manager, tokenctl installed (its D-Bus service file).
@Suite struct AgentOnDemandTests {
  static let service = "[D-BUS Service]\nName=org.tokenctl.Agent\nExec=/bin/false\n"

  init() throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
  }

  /// The session's environment, with the default socket (no test's own).
  static func environment(_ session: PrivateSession) -> [String: String] {
    var environment = session.environment
    environment["TOKENCTL_AGENT_SOCKET"] = nil
    environment["TOKENCTL_AGENT"] = nil
    return environment
  }

  @Test(arguments: AgentIntegrationTests.Clients.allCases)
  func aClientThatFindsNoAgentStartsOne(_ clients: AgentIntegrationTests.Clients) async throws {
    let session = try await PrivateSession.started(
      .unlockedKeyring, services: ["org.tokenctl.Agent.service": Self.service], ownAgent: false)
    defer { session.stop() }
    let environment = Self.environment(session)
    let links = try TemporaryDirectory()
    let (tokenctl, _) = try clients.executables(in: links)
    let first = try await TestProcess.run(tokenctl, ["token", "nobody"], environment: environment)
    #expect(first.status == 2, "\(first.stderr)")
    // The client answered itself; the agent it started answers from now on.
    var running = false
    for _ in 0..<300 where !running {
      running =
        try await TestProcess.run(TestProcess.tokenctl, ["agent", "status"], environment: environment).status
        == 0
      if !running { try await Task.sleep(for: .milliseconds(100)) }
    }
    #expect(running, "no agent answers after the client found none")
    _ = try await TestProcess.run(TestProcess.tokenctl, ["agent", "stop"], environment: environment)
  }

  /// Nowhere else: where systemd runs the session (its socket unit starts the agent, and a
  /// user who masked it turned it off), from a build folder (no service file installed), on
  /// a socket of the user's own choosing, or with `TOKENCTL_AGENT=0`.
  @Test func notWhereAnythingElseDecides() async throws {
    let directory = try TemporaryDirectory()
    let runtime = directory.path("runtime"), data = directory.path("share")
    try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: data + "/dbus-1/services", withIntermediateDirectories: true)
    try Self.service.write(
      toFile: data + "/dbus-1/services/org.tokenctl.Agent.service", atomically: true, encoding: .utf8)
    let environment = [
      "HOME": directory.path("home"), "XDG_RUNTIME_DIR": runtime, "XDG_DATA_DIRS": data,
      "XDG_DATA_HOME": directory.path("data-home"),
    ]
    #expect(AgentOnDemand.startReason(environment: environment) != nil)
    var own = environment
    own["TOKENCTL_AGENT_SOCKET"] = directory.path("agent.sock")
    #expect(AgentOnDemand.startReason(environment: own) == nil)
    var off = environment
    off["TOKENCTL_AGENT"] = "0"
    #expect(AgentOnDemand.startReason(environment: off) == nil)
    var build = environment
    build["XDG_DATA_DIRS"] = directory.path("nothing")
    #expect(AgentOnDemand.startReason(environment: build) == nil)
    try FileManager.default.createDirectory(atPath: runtime + "/systemd", withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: runtime + "/systemd/private", contents: nil)
    #expect(AgentOnDemand.startReason(environment: environment) == nil)
  }
}
