import Foundation
import NativeAppSupport
import TestSupport
import Testing
import TokenCtlRuntime

/// No grant is lost to a fault between the server's answer and the keyring's write,
/// against django-oauth-toolkit as it ships, which spends a refresh token
/// the moment it answers: the keyring locked, its daemon killed, or the refreshing process
/// killed, through the command line's refresh child and through the agent's.
///
/// Each round holds the refresh at that very moment (`TOKENCTL_TEST_PAUSE`, see
/// ``RefreshTestPause``), strikes, lets it go on, repairs what it broke (the keyring
/// unlocked or back), and then asks for a token that needs a refresh: that refresh must
/// succeed, with no sign-in. No timing decides anything: the test waits for the process to
/// say it is held. Without the journal every round loses the grant (the refresh token in
/// the keyring is spent, and the next refresh is refused with invalid_grant).
@Suite(.serialized, .timeLimit(.minutes(10))) struct GrantJournalTests {
  enum Fault: String, CaseIterable, Sendable {
    case keyringLocked = "keyring locked"
    case keyringDaemonKilled = "keyring daemon killed"
    case refreshingProcessKilled = "refreshing process killed"
  }

  enum Path: String, CaseIterable, Sendable {
    case direct, agent
  }

  struct Case: Sendable, CustomStringConvertible {
    var path: Path
    var fault: Fault
    var description: String { "\(path.rawValue) × \(fault.rawValue)" }
  }

  static let cases = Path.allCases.flatMap { path in Fault.allCases.map { Case(path: path, fault: $0) } }

  /// One round in `make test`, more in `make hardening`.
  static let rounds = ProcessInfo.processInfo.environment["TOKENCTL_SOAK"] == "1" ? 25 : 1

  @Test(arguments: cases)
  func aFaultBetweenTheAnswerAndTheKeyringLosesNoGrant(_ test: Case) async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    let server = try await AuthServer.asShipped
    let session = try await PrivateSession.started(.unlockedKeyring, ownAgent: false)
    defer { session.stop() }
    let home = session.directory.appendingPathComponent("home")
    try server.writeType(
      id: "shipped", displayName: "django-oauth-toolkit as it ships", scopes: ["openid", "read"], home: home)
    let pause = session.directory.appendingPathComponent("pause")
    try FileManager.default.createDirectory(at: pause, withIntermediateDirectories: true)
    var environment = session.environment
    // tokenctl keeps a journal only in a runtime folder in memory (JournalPlacement), and
    // the temporary directory may be on a disk.
    let runtime = try MemoryFolder()
    environment["XDG_RUNTIME_DIR"] = runtime.path
    environment["XDG_CONFIG_HOME"] = home.appendingPathComponent("config").path
    environment["TOKENCTL_CONFIG"] = nil
    environment["TOKENCTL_LOG"] = nil
    environment["TOKENCTL_ACCOUNT"] = nil
    environment.merge(server.scriptedBrowser(in: session.directory)) { $1 }
    environment["DISPLAY"] = ":0"
    environment[RefreshTestPause.variable] = pause.path
    var direct = environment
    direct["TOKENCTL_AGENT"] = "0"
    let journal = try #require(XDGDirectories(environment: environment).journal)

    func signIn() async throws -> String {
      let login = try await TestProcess.run(
        TestProcess.tokenctl, ["login", "shipped", "--browser"], environment: direct)
      try #require(login.status == 0, "\(login.stderr)")
      let list = try await TestProcess.run(TestProcess.tokenctl, ["list", "--json"], environment: direct)
      let json = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any]
      let name = try #require((json?["accounts"] as? [[String: Any]])?.first?["name"] as? String, "\(list.stdout)")
      return "shipped:" + name
    }
    let account = try await signIn()
    var agent: TestAgent?
    if test.path == .agent {
      agent = try await TestAgent.start(environment: environment, in: session.directory)
    }
    defer { if let agent { Task { await agent.stop() } } }
    let client = agent?.environment ?? direct

    var lost = 0
    var problems: [String] = []
    for round in 1...Self.rounds {
      for name in ["paused", "resume"] { try? FileManager.default.removeItem(at: pause.appendingPathComponent(name)) }
      // More validity than the server's 4-second tokens have: this refreshes.
      let errors = session.directory.appendingPathComponent("client.err").path
      let asking = try TestProcess(
        TestProcess.tokenctl, ["token", "--min-valid", "60", account], environment: client, stderr: errors)
      let held = try await Self.awaitFile(pause.appendingPathComponent("paused").path)
      // The agent's refresh child is its own executable, which maps none of the commands.
      let heldPID = held.trimmingCharacters(in: .whitespacesAndNewlines)
      let program = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(heldPID)/exe")) ?? "?"
      if test.path == .agent, (program as NSString).lastPathComponent != "tokenctl-agent" {
        problems.append("round \(round): the agent's refresh ran in \(program), not tokenctl-agent")
      }
      // The answer is in the journal, private, under a name that says nothing.
      let entries = (try? FileManager.default.contentsOfDirectory(atPath: journal)) ?? []
      let hashed = entries.allSatisfy {
        $0.count == 37 && $0.hasSuffix(".json") && $0.dropLast(5).allSatisfy(\.isHexDigit)
      }
      if entries.count != 1 || !hashed {
        problems.append("round \(round): journal holds \(entries)")
      }
      for entry in entries {
        let mode = try FileManager.default.attributesOfItem(atPath: journal + "/" + entry)[.posixPermissions] as? Int
        if mode != 0o600 { problems.append("round \(round): journal entry mode \(String(mode ?? 0, radix: 8))") }
      }
      switch test.fault {
      case .keyringLocked: try await session.lockLoginKeyring()
      case .keyringDaemonKilled: try await session.stopKeyring(signal: SIGKILL)
      case .refreshingProcessKilled:
        if let pid = pid_t(heldPID) { kill(pid, SIGKILL) }
      }
      _ = FileManager.default.createFile(atPath: pause.appendingPathComponent("resume").path, contents: nil)
      let status = await asking.exitStatus(within: 120)
      if status == nil { kill(asking.pid, SIGKILL) }
      // Repaired as a user would: the keyring unlocked, its daemon started again.
      if test.fault != .refreshingProcessKilled { try await session.restartKeyring() }

      // Through the agent, its refresh ahead of these 4-second tokens can rotate the token
      // it just handed out before the server is asked about it (django-oauth-toolkit
      // deletes the access token beside a rotated refresh token), so a token the server no
      // longer holds is asked for again. A lost grant fails every ask (exit 5).
      var next = try await TestProcess.run(
        TestProcess.tokenctl, ["token", "--min-valid", "60", account], environment: client)
      var alive = false
      for _ in 1...3 {
        let token = next.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        alive = next.status == 0 ? try await server.issued(token).issued : false
        if alive || next.status != 0 || test.path == .direct { break }
        next = try await TestProcess.run(
          TestProcess.tokenctl, ["token", "--min-valid", "60", account], environment: client)
      }
      if !alive {
        lost += 1
        let first = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        problems.append(
          "round \(round): the grant was lost (first command \(status.map(String.init) ?? "hung"): \(first); "
            + "next \(next.status): \(next.stderr))")
        _ = try await signIn()
      }
      let left = (try? FileManager.default.contentsOfDirectory(atPath: journal)) ?? []
      if alive && !left.isEmpty { problems.append("round \(round): the journal kept \(left) after the replay") }
    }
    HardeningSummary.record("grant", test.path.rawValue, test.fault.rawValue, "\(lost)", "\(Self.rounds)")
    #expect(lost == 0, "\(lost) of \(Self.rounds) grants lost")
    #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(agent?.log ?? "")")
  }

  /// The content of `path` once it exists (written through a rename: never half of it).
  static func awaitFile(_ path: String, seconds: Double = 120) async throws -> String {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      if let text = try? String(contentsOfFile: path, encoding: .utf8) { return text }
      try await Task.sleep(for: .milliseconds(20))
    }
    throw TestFailure("no refresh reached the keyring write within \(Int(seconds)) s")
  }
}
