import Foundation
import TestSupport

/// A real `tokenctl agent run`, on a socket of the test's own, with its standard error in
/// a log file the test reads: the agent tests start one each, and stop or kill it.
final class TestAgent: Sendable {
  let process: TestProcess
  let socket: String
  let logPath: String
  /// The environment the agent runs in; clients that should reach it use it too.
  let environment: [String: String]

  private init(process: TestProcess, socket: String, logPath: String, environment: [String: String]) {
    self.process = process
    self.socket = socket
    self.logPath = logPath
    self.environment = environment
  }

  /// `environment` with `TOKENCTL_AGENT_SOCKET` at `socket`, and no variable that would
  /// send a client past the agent.
  static func clientEnvironment(_ environment: [String: String], socket: String) -> [String: String] {
    var environment = environment
    environment["TOKENCTL_AGENT_SOCKET"] = socket
    environment["TOKENCTL_AGENT"] = nil
    environment["TOKENCTL_LOG"] = nil
    return environment
  }

  /// Starts an agent with `environment` whose socket is `folder/agent/agent.sock`, in a
  /// folder only its user may enter (as the agent asks of its socket's folder), and whose
  /// log is `folder/agent.log`.
  static func start(environment: [String: String], in folder: URL) async throws -> TestAgent {
    let run = folder.appendingPathComponent("agent")
    try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: run.path)
    return try await start(
      environment: environment, socket: run.appendingPathComponent("agent.sock").path,
      log: folder.appendingPathComponent("agent.log").path)
  }

  /// Starts an agent with `environment` on `socket` and waits (60 s at most: a bound for a
  /// loaded CI machine, where each `agent status` is a debug binary's start) until it
  /// answers `status`. `log` is where its standard error goes (appended to by restarts
  /// only if the caller passes another path).
  static func start(environment: [String: String], socket: String, log: String) async throws -> TestAgent {
    let environment = clientEnvironment(environment, socket: socket)
    let process = try TestProcess(
      TestProcess.tokenctl, ["agent", "run"], environment: environment, stdout: log, stderr: nil)
    let agent = TestAgent(process: process, socket: socket, logPath: log, environment: environment)
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
      if let status = await process.exitStatus(within: 0) {
        throw TestFailure("the agent exited with \(status): \(agent.log)")
      }
      if FileManager.default.fileExists(atPath: socket), (try? await agent.status())?["running"] as? Bool == true {
        return agent
      }
      try await Task.sleep(for: .milliseconds(20))
    }
    kill(process.pid, SIGKILL)
    _ = await process.exitStatus(within: 5)
    throw TestFailure("the agent did not answer within 60 s: \(agent.log)")
  }

  /// What the agent wrote to standard error so far.
  var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

  /// `tokenctl agent status --json`, as text.
  func statusText() async throws -> String {
    let outcome = try await BoundedRun.run(
      TestProcess.tokenctl, ["agent", "status", "--json"], environment: environment, seconds: 20)
    guard let result = outcome.result else { throw TestFailure("agent status did not finish within 20 s") }
    return result.stdout
  }

  /// `tokenctl agent status --json`, parsed.
  func status() async throws -> [String: Any] {
    let text = try await statusText()
    guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
      throw TestFailure("agent status printed \(text)")
    }
    return object
  }

  /// The agent's request counter. The `status` request that reads it counts too: two
  /// readings with nothing between them differ by one.
  func requests() async throws -> Int {
    guard let requests = try await status()["requests"] as? Int else { throw TestFailure("no request counter") }
    return requests
  }

  /// SIGTERM, then the exit status; nil when the agent was still there after 60 s (it is
  /// killed then): it exits in milliseconds, and the bound only ends a hang.
  @discardableResult
  func stop() async -> Int32? {
    kill(process.pid, SIGTERM)
    if let status = await process.exitStatus(within: 60) { return status }
    kill(process.pid, SIGKILL)
    _ = await process.exitStatus(within: 10)
    return nil
  }

  /// SIGKILL, and the agent reaped.
  func killHard() async {
    kill(process.pid, SIGKILL)
    _ = await process.exitStatus(within: 10)
  }
}
