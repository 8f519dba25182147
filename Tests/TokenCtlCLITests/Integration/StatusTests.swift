import Foundation
import TestSupport
import Testing
import TokenKit

/// `tokenctl status` and `whoami`: the accounts, which one
/// each tool would use for the hosts the types serve and the remotes of the repository
/// here, and the agent; the real binary and keyring.
@Suite(.serialized) struct StatusTests {
  let fixture: ToolHelperFixture

  init() async throws {
    fixture = try await ToolHelperFixture.started(registry: "Tests/Support/docker-registry-server.py")
  }

  /// Runs `tokenctl ARGUMENTS` in `directory`, as a user in a repository would.
  func tokenctl(_ arguments: [String], in directory: String? = nil) async throws -> ProcessResult {
    let command = (["exec", "tokenctl"] + arguments).joined(separator: " ")
    return try await TestProcess.run(
      "/bin/sh", ["-c", directory.map { "cd '\($0)' && \(command)" } ?? command], environment: fixture.environment)
  }

  @Test func statusSaysWhoIsSignedInWhichAccountEachToolWouldUseAndWhetherTheAgentRuns() async throws {
    defer { fixture.cleanUp() }
    let served = "https://\(fixture.host)"
    let empty = try await tokenctl(["status"])
    #expect(empty.status == 0, "\(empty.stderr)")
    #expect(empty.stdout.contains("none. Run `tokenctl types`"), "\(empty.stdout)")
    #expect(empty.stdout.contains("\(served): none; no account for \(fixture.host)"), "\(empty.stdout)")
    #expect(empty.stdout.contains("Agent: not running"))

    let ada = try await fixture.signIn(user: "ada")
    // A repository here whose remote has a password in its URL (and names a user with no
    // account, so the host's one account answers, as git's helper would).
    let repository = fixture.directory.path("repository")
    let git = try await TestProcess.run(
      "/bin/sh",
      [
        "-c",
        "git init -q '\(repository)' && git -C '\(repository)' remote add origin '\(served.replacingOccurrences(of: "://", with: "://grace:hunter2@"))/x.git'",
      ],
      environment: fixture.environment)
    try #require(git.status == 0, "\(git.stderr)")
    let status = try await tokenctl(["whoami"], in: repository)
    #expect(status.status == 0, "\(status.stderr)")
    #expect(status.stdout.contains("gitlocal:ada: valid for"), "\(status.stdout)")
    #expect(status.stdout.contains("\(served): gitlocal:ada\n"), "\(status.stdout)")
    #expect(status.stdout.contains("https://grace@\(fixture.host)/x.git: gitlocal:ada\n"), "\(status.stdout)")
    let token = try fixture.token(ada)
    #expect(!status.stdout.contains("hunter2") && !status.stdout.contains(token))

    // `token --json`, from the keyring or, under Tests/Support/with-agent.sh, from
    // the agent's answer: the same document.
    let tokenJSON = try await tokenctl(["token", "gitlocal:ada", "--json"])
    #expect(tokenJSON.status == 0, "\(tokenJSON.stderr)")
    let tokenDocument = try #require(
      try JSONSerialization.jsonObject(with: Data(tokenJSON.stdout.utf8)) as? [String: Any])
    #expect(tokenDocument["access_token"] as? String == token)
    #expect((tokenDocument["expires_at"] as? String)?.hasSuffix("Z") == true, "\(tokenDocument)")
    #expect((tokenDocument["scopes"] as? [String])?.contains("openid") == true, "\(tokenDocument)")

    let json = try await tokenctl(["status", "--json"])
    let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    #expect(document["format"] as? Int == 1)
    let hosts = try #require(document["hosts"] as? [[String: Any]])
    #expect(hosts.first { $0["url"] as? String == served }?["account"] as? String == "gitlocal:ada")
    #expect((document["agent"] as? [String: Any])?["running"] as? Bool == false)
    #expect((document["accounts"] as? [[String: Any]])?.count == 1)

    // With the agent: status says it runs, and `token --json` comes from its answer.
    let agentDirectory = fixture.directory.path("agent")
    try FileManager.default.createDirectory(
      atPath: agentDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    let socket = agentDirectory + "/agent.sock"
    let agent = try await TestAgent.start(
      environment: fixture.environment, socket: socket, log: agentDirectory + "/agent.log")
    let running = try await TestProcess.run(TestProcess.tokenctl, ["status"], environment: agent.environment)
    #expect(running.stdout.contains("Agent: running (pid "), "\(running.stdout)")
    let fromAgent = try await TestProcess.run(
      TestProcess.tokenctl, ["token", "gitlocal:ada", "--json"], environment: agent.environment)
    #expect(fromAgent.status == 0, "\(fromAgent.stderr)")
    let agentDocument = try #require(
      try JSONSerialization.jsonObject(with: Data(fromAgent.stdout.utf8)) as? [String: Any])
    #expect(agentDocument["access_token"] as? String == token)
    #expect(agentDocument["expires_at"] as? String == tokenDocument["expires_at"] as? String, "\(agentDocument)")
    #expect(agentDocument["scopes"] as? [String] == tokenDocument["scopes"] as? [String], "\(agentDocument)")
    #expect(try await agent.status()["requests"] as? Int ?? 0 > 0, "the agent answered")
    _ = await agent.stop()
  }
}
