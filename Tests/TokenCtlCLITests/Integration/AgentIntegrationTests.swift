import AgentProtocol
import ApplicationConsent
import Crypto
import Foundation
import NativeAppSupport
import SecretServiceStore
import TestSupport
import Testing
import TokenAgent
import TokenKit
import TokenStoreTesting

/// The resident agent as its users meet it: the real `tokenctl agent run` on a
/// socket of each test's own, the real clients (`tokenctl token`, `list`, the git helper),
/// the real keyring and the stub authorization server. Every test starts its own agent
/// and stops or kills it; every wait is bounded, so a hang fails a test instead of the run.
///
/// Figures (timings, counts) are printed as `agent-figure<TAB>TEST<TAB>NAME<TAB>VALUE`.
@Suite(.serialized) struct AgentIntegrationTests {
  init() throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
  }

  static func figure(_ test: String, _ name: String, _ value: Any) {
    print("agent-figure\t\(test)\t\(name)\t\(value)")
  }

  /// A home with the loopback git type at a stub of the test's own, groups of its own in
  /// the shared test keyring, and a socket path in a folder the agent makes private.
  final class Setup: Sendable {
    let directory: TemporaryDirectory
    let group = TokenStoreConformance.freshGroup()
    let stub: StubServer
    var home: URL { directory.url.appendingPathComponent("home") }
    var socket: String { directory.path("agent/agent.sock") }
    var log: String { directory.path("agent.log") }

    init(stubArguments: [String] = []) async throws {
      directory = try TemporaryDirectory()
      let (baseURL, stubDirectory) = try await LoopbackService.start(
        "Tests/Support/stub-oauth-server.py", info: "stub.json", arguments: stubArguments, lifetime: 600)
      stub = StubServer(baseURL: baseURL, directory: stubDirectory)
      try GitCredentialTests.writeGitType(home: home, issuer: stub.baseURL, clientID: "git", host: "127.0.0.1")
    }

    func store(_ group: String? = nil) -> SecretServiceTokenStore {
      SecretServiceTokenStore(group: group ?? self.group)
    }

    /// The clients' world, whichever path they take.
    func environment(group: String? = nil) -> [String: String] {
      var environment = GitCredentialTests.environment(home: home, group: group ?? self.group)
      environment["TOKENCTL_AGENT_SOCKET"] = nil
      environment["TOKENCTL_LOG"] = nil
      return environment
    }

    /// Lets this test process, which is not tokenctl and so an application like any other
    /// to the agent, have the tokens of every account of the group (tokenctl allow).
    func allowTheTestProcess() throws {
      let grants = ApplicationGrants(directories: XDGDirectories(environment: environment()), warn: { _ in })
      let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
      try grants.allow(application: executable, group: group, accounts: nil, at: Date())
    }

    /// A client that never asks an agent.
    func direct(group: String? = nil) -> [String: String] {
      var environment = self.environment(group: group)
      environment["TOKENCTL_AGENT"] = "0"
      return environment
    }

    /// A client that asks this test's agent first.
    func viaAgent(group: String? = nil) -> [String: String] {
      TestAgent.clientEnvironment(environment(group: group), socket: socket)
    }

    func startAgent() async throws -> TestAgent {
      try await TestAgent.start(environment: environment(), socket: socket, log: log)
    }

    /// The start most tests share: ada, whose access token is `label` and a UUID and
    /// expires in `expiresIn` seconds, and an agent.
    func adaAndAgent(_ label: String, expiresIn: Double = 7200) async throws -> (StoredAccount, TestAgent) {
      let ada = try await seed(name: "ada", access: "\(label)-\(UUID().uuidString)", expiresIn: expiresIn)
      return (ada, try await startAgent())
    }

    /// Stores an account of the loopback type whose access token expires in `expiresIn`
    /// seconds, with a refresh token the stub issued (a family of its own).
    @discardableResult
    func seed(
      name: String, id: String? = nil, group: String? = nil, access: String? = nil, expiresIn: Double,
      needsSignIn: Bool = false
    ) async throws -> StoredAccount {
      let group = group ?? self.group
      let family = try await stub.admin("/_admin/issue", method: "POST")
      let account = Account(
        type: "gitlocal", id: id ?? "id-\(name)", name: name, group: group, createdAt: Date(), updatedAt: Date(),
        issuer: stub.baseURL, clientID: "git", needsSignIn: needsSignIn)
      let tokens = TokenSet(
        accessToken: access ?? (family["access_token"] as? String ?? "access-\(UUID().uuidString)"),
        refreshToken: try #require(family["refresh_token"] as? String), expiresAt: Date().addingTimeInterval(expiresIn),
        issuedAt: Date())
      try store(group).save(account, tokens: tokens)
      return StoredAccount(account: account, tokens: tokens)
    }

    func cleanUp(groups: [String] = []) {
      for group in [group] + groups {
        let store = store(group)
        for listing in (try? store.list(.all)) ?? [] { _ = try? store.remove(listing.account.key) }
      }
    }

    /// The file lock a refresh of `key` holds (FileAccountLocks, with XDG_RUNTIME_DIR unset).
    func lockPath(_ key: AccountKey, group: String? = nil) -> String {
      let digest = SHA256.hash(data: Array("\(group ?? self.group)\u{0}\(key.type)\u{0}\(key.id)".utf8))
      let name = digest.prefix(16).map { String(format: "%02x", $0) }.joined()
      return home.appendingPathComponent("cache/tokenctl/run/locks/\(name).lock").path
    }

    /// Waits until nobody holds `key`'s lock: a refresh that outlived its caller is done.
    func waitForLock(_ key: AccountKey, seconds: Double = 30) async throws {
      let path = lockPath(key)
      let fd = open(path, O_RDWR | O_CLOEXEC)
      guard fd >= 0 else { return }
      defer { close(fd) }
      let deadline = Date().addingTimeInterval(seconds)
      while flock(fd, LOCK_EX | LOCK_NB) != 0 {
        guard Date() < deadline else { throw TestFailure("the lock of \(key) was still held after \(seconds) s") }
        try await Task.sleep(for: .milliseconds(20))
      }
      flock(fd, LOCK_UN)
    }

    func stats() async throws -> [String: Any] { try await stub.admin("/_admin/stats") }

    static func refreshGrants(_ stats: [String: Any]) -> Int {
      (stats["grant_types"] as? [String: Int])?["refresh_token"] ?? 0
    }

    /// The stub's verdict on a refresh token: current, used, revoked or unknown.
    func check(refreshToken: String) async throws -> String {
      let escaped = refreshToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? refreshToken
      return try await stub.admin("/_admin/check?refresh_token=\(escaped)")["status"] as? String ?? "?"
    }

    /// Whether the stub takes `accessToken` (its userinfo endpoint answers 200).
    func stubAccepts(accessToken: String) async throws -> Bool {
      let result = try await TestProcess.run(
        "curl",
        [
          "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(accessToken)",
          stub.baseURL + "/userinfo",
        ])
      return result.stdout == "200"
    }
  }

  // MARK: Shared checks

  /// The session bus's socket path in `address` (`unix:path=…` or `unix:abstract=…`).
  static func busPath(_ address: String?) -> String? {
    guard let address, let range = address.range(of: "path=") ?? address.range(of: "abstract=") else { return nil }
    return String(address[range.upperBound...].prefix { $0 != "," })
  }

  /// One command run through the agent (under strace, to see whether the client itself
  /// went to the session bus) and then directly.
  struct Comparison {
    var label: String
    var agent: BoundedRun.Finished
    var direct: BoundedRun.Finished
    /// Requests the agent counted for the client (its `status` readings left out).
    var agentRequests: Int
    /// Whether the client connected to the session bus: the agent did not answer it all.
    var clientUsedBus: Bool
    var agentSeconds: Double
    var directSeconds: Double

    /// Equal outputs, but for the seconds left on a token: the two runs happen a moment
    /// apart, and `expires_in` or "valid for N min" may tick between them.
    var identical: Bool {
      agent.status == direct.status && Self.timeless(agent.stdout) == Self.timeless(direct.stdout)
        && Self.timeless(agent.stderr) == Self.timeless(direct.stderr)
    }

    static func timeless(_ text: String) -> String {
      text.replacing(/"expires_in" : \d+/, with: "\"expires_in\" : N")
        .replacing(/valid for [0-9hmins ]+,/, with: "valid for N,")
    }
  }

  static func compare(
    _ label: String, _ executable: String, _ arguments: [String], stdin: String = "", agent: TestAgent,
    viaAgent: [String: String], direct: [String: String]
  ) async throws -> Comparison {
    let trace = try TemporaryDirectory()
    let before = try await agent.requests()
    let traced = try await BoundedRun.run(
      "strace", ["-f", "-qq", "-e", "trace=connect", "-o", trace.path("trace"), executable] + arguments,
      environment: viaAgent, stdin: stdin)
    let after = try await agent.requests()
    let plain = try await BoundedRun.run(executable, arguments, environment: direct, stdin: stdin)
    guard let agentResult = traced.result, let directResult = plain.result else {
      throw TestFailure("\(label): a client did not finish within 60 s")
    }
    let connects = (try? String(contentsOfFile: trace.path("trace"), encoding: .utf8)) ?? ""
    // Without an address, GLib's socket in the runtime folder.
    let bus = busPath(viaAgent["DBUS_SESSION_BUS_ADDRESS"]) ?? viaAgent["XDG_RUNTIME_DIR"].map { $0 + "/bus" }
    return Comparison(
      label: label, agent: agentResult, direct: directResult, agentRequests: after - before - 1,
      clientUsedBus: bus.map { connects.contains($0) } ?? true, agentSeconds: traced.seconds,
      directSeconds: plain.seconds)
  }

  /// ``finish(_:secrets:sourceLocation:)`` for the tokens of `account`.
  static func finish(
    _ agent: TestAgent, keeping account: StoredAccount, sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    await finish(
      agent, secrets: [account.tokens.accessToken, account.tokens.refreshToken ?? ""], sourceLocation: sourceLocation)
  }

  /// Stops `agent` (SIGTERM, exit 0 within 60 s) and checks that neither its status nor
  /// its log ever showed one of `secrets`.
  static func finish(_ agent: TestAgent, secrets: [String], sourceLocation: SourceLocation = #_sourceLocation) async {
    let status = (try? await agent.statusText()) ?? ""
    let exit = await agent.stop()
    #expect(exit == 0, "the agent's exit on SIGTERM: \(exit.map(String.init) ?? "still running after 60 s")")
    let log = agent.log
    let leaked = secrets.filter { $0.count >= 8 && (log.contains($0) || status.contains($0)) }
    #expect(leaked.isEmpty, "\(leaked.count) secrets in the agent's log or status", sourceLocation: sourceLocation)
    #expect(!FileManager.default.fileExists(atPath: agent.socket), "SIGTERM removes the socket")
  }

  /// Every token the agent hands out is in the audit log, to tokenctl's own programs too:
  /// the application, group, account and channel, never the token.
  @Test func tokensHandedToTokenctlsOwnProgramsAreAudited() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let (ada, agent) = try await setup.adaAndAgent("agent-audit", expiresIn: 7230)
    let token = try await TestProcess.run(
      TestProcess.tokenctl, ["token", "gitlocal:ada"], environment: setup.viaAgent())
    #expect(token.status == 0 && token.stdout == ada.tokens.accessToken + "\n", "\(token.stderr)")
    let helper = try await TestProcess.run(
      GitCredentialTests.helper, ["get"], environment: setup.viaAgent(), stdin: "protocol=http\nhost=127.0.0.1\n\n")
    #expect(helper.status == 0 && helper.stdout.contains(ada.tokens.accessToken), "\(helper.stderr)")
    await Self.finish(agent, keeping: ada)
    let state = XDGDirectories(environment: setup.environment()).state
    let audit = (try? String(contentsOfFile: state + "/audit.log", encoding: .utf8)) ?? ""
    for program in [TestProcess.tokenctl, GitCredentialTests.helper] {
      let path = URL(fileURLWithPath: program).resolvingSymlinksInPath().path
      #expect(
        audit.contains(
          " token app=\(AuditEvent.escape(path)) group=\(AuditEvent.escape(setup.group)) account=gitlocal:ada via=socket"
        ), "no token line for \(path): \(audit)")
    }
    #expect(!audit.contains(ada.tokens.accessToken) && !audit.contains(ada.tokens.refreshToken ?? "-"))
  }

  /// A token from memory is answered before its audit line is written: another
  /// process holding the audit log's lock (one rotating it) does not hold the answer up,
  /// and the line is written once the lock is free. The client is the front end alone,
  /// with no full program to hand over to: only the agent's answer can print the token.
  @Test func anAuditLogHeldByAnotherProcessDoesNotHoldTheAnswerUp() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let (ada, agent) = try await setup.adaAndAgent("agent-audit-held", expiresIn: 7230)
    let environment = setup.viaAgent()
    let (alone, folder) = try ToolHelperFixture.frontEndAlone(named: "tokenctl")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let warm = try await TestProcess.run(alone, ["token", "gitlocal:ada"], environment: environment)
    #expect(warm.status == 0 && warm.stdout == ada.tokens.accessToken + "\n", "\(warm.stderr)")
    let path = XDGDirectories(environment: setup.environment()).state + "/audit.log"
    // The warm answer's own line is written after the answer: wait for it, so that the
    // file exists and the line below is the held-up request's.
    var before = ""
    for _ in 0..<300 where !before.contains(" token app=") {
      before = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
      if !before.contains(" token app=") { try await Task.sleep(for: .milliseconds(20)) }
    }
    #expect(before.contains(" token app="), "the warm request's line: \(before)")
    let fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
    #expect(fd >= 0 && flock(fd, LOCK_EX) == 0, "the test holds \(path)")
    let token = try await TestProcess.run(alone, ["token", "gitlocal:ada"], environment: environment)
    #expect(token.status == 0 && token.stdout == ada.tokens.accessToken + "\n", "\(token.stderr)")
    #expect(((try? String(contentsOfFile: path, encoding: .utf8)) ?? "") == before, "no line while the lock is held")
    close(fd)
    var lines = before
    for _ in 0..<300 where lines == before {
      try await Task.sleep(for: .milliseconds(100))
      lines = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
    #expect(
      lines.dropFirst(before.count).contains(" token app=") && lines.hasPrefix(before),
      "the held-up line is written once the lock is free: \(lines.dropFirst(before.count))")
    await Self.finish(agent, keeping: ada)
  }

  // MARK: (a) The same answers as the direct path

  /// The executables a user runs: the full program as built, or the front end as `make
  /// install` installs it, under the names `tokenctl` and `git-credential-tokenctl`.
  enum Clients: String, CaseIterable, Sendable {
    case fullProgram = "the full program"
    case frontEnd = "the front end"

    /// `tokenctl` and git's helper; the front end's are links to it in `folder`, by name.
    func executables(in folder: TemporaryDirectory) throws -> (tokenctl: String, helper: String) {
      switch self {
      case .fullProgram: return (TestProcess.tokenctl, GitCredentialTests.helper)
      case .frontEnd:
        for name in ["tokenctl", "git-credential-tokenctl"] {
          try FileManager.default.createSymbolicLink(
            atPath: folder.path(name), withDestinationPath: TestProcess.frontEnd)
        }
        return (folder.path("tokenctl"), folder.path("git-credential-tokenctl"))
      }
    }
  }

  /// Through the front end too: it prints only a full answer, hands every other
  /// to the full program, and the agent is asked once either way (`agentRequests`).
  @Test(arguments: Clients.allCases)
  func throughTheAgentEveryAnswerIsTheDirectPathsByteForByte(_ clients: Clients) async throws {
    let setup = try await Setup()
    let links = try TemporaryDirectory()
    let twins = TokenStoreConformance.freshGroup()
    let signIn = TokenStoreConformance.freshGroup()
    let empty = TokenStoreConformance.freshGroup()
    defer { setup.cleanUp(groups: [twins, signIn, empty]) }
    let ada = try await setup.seed(name: "ada", access: "agent-test-valid-\(UUID().uuidString)", expiresIn: 7230)
    try await setup.seed(name: "twin", id: "id-twin-1", group: twins, expiresIn: 7230)
    try await setup.seed(name: "twin", id: "id-twin-2", group: twins, expiresIn: 7230)
    let needing = try await setup.seed(name: "lapsed", group: signIn, expiresIn: -60, needsSignIn: true)
    let agent = try await setup.startAgent()
    let (tokenctl, helper) = try clients.executables(in: links)
    let served = "protocol=http\nhost=127.0.0.1\n\n", unserved = "protocol=https\nhost=git.unknown.example\n\n"
    let cases: [(String, String, [String], String, String, Int32?)] = [
      ("token, valid", tokenctl, ["token", "gitlocal:ada"], "", setup.group, 0),
      ("token by name, valid", tokenctl, ["token", "ada"], "", setup.group, 0),
      ("token --min-valid 60, valid", tokenctl, ["token", "--min-valid", "60", "ada"], "", setup.group, 0),
      ("token, unknown account", tokenctl, ["token", "gitlocal:nobody"], "", setup.group, 2),
      ("token, ambiguous name", tokenctl, ["token", "twin"], "", twins, 3),
      ("token, needs sign-in", tokenctl, ["token", "gitlocal:lapsed"], "", signIn, nil),
      ("list, non-empty", tokenctl, ["list"], "", setup.group, 0),
      ("list --json, non-empty", tokenctl, ["list", "--json"], "", setup.group, 0),
      ("list, empty", tokenctl, ["list"], "", empty, nil),
      ("list --json, empty", tokenctl, ["list", "--json"], "", empty, 0),
      ("git helper get, host served", helper, ["get"], served, setup.group, 0),
      ("git helper get, host not served", helper, ["get"], unserved, setup.group, 0),
      ("tokenctl credential get, host served", tokenctl, ["credential", "get"], served, setup.group, 0),
      ("git helper get, ambiguous", helper, ["get"], served, twins, nil),
      ("git helper get, needs sign-in", helper, ["get"], served, signIn, nil),
    ]
    var comparisons: [Comparison] = []
    for (label, executable, arguments, stdin, group, status) in cases {
      let comparison = try await Self.compare(
        label, executable, arguments, stdin: stdin, agent: agent, viaAgent: setup.viaAgent(group: group),
        direct: setup.direct(group: group))
      comparisons.append(comparison)
      #expect(
        comparison.identical,
        """
        \(label): through the agent \(comparison.agent.status) \(comparison.agent.stdout.debugDescription) \
        \(comparison.agent.stderr.debugDescription); direct \(comparison.direct.status) \
        \(comparison.direct.stdout.debugDescription) \(comparison.direct.stderr.debugDescription)
        """)
      if let status { #expect(comparison.direct.status == status, "\(label): \(comparison.direct.stderr)") }
      #expect(comparison.agentRequests == 1, "\(label): the agent counted \(comparison.agentRequests) requests")
      Self.figure(
        "a", label,
        "exit \(comparison.agent.status); agent answered: \(!comparison.clientUsedBus); "
          + String(
            format: "%.3f s via agent (strace), %.3f s direct", comparison.agentSeconds, comparison.directSeconds))
    }
    #expect(comparisons[0].agent.stdout == ada.tokens.accessToken + "\n")
    #expect(comparisons[10].agent.stdout.contains("password=\(ada.tokens.accessToken)\n"))
    // What the agent must answer itself, not leave to the client: the keyring answers.
    let answeredByAgent = [
      "token, valid", "token by name, valid", "token --min-valid 60, valid", "token, unknown account",
      "token, ambiguous name", "list, non-empty", "list --json, non-empty", "list, empty", "list --json, empty",
      "git helper get, host served", "tokenctl credential get, host served",
    ]
    for comparison in comparisons where answeredByAgent.contains(comparison.label) {
      #expect(!comparison.clientUsedBus, "\(comparison.label): the client went to the keyring itself")
    }
    await Self.finish(
      agent, secrets: [ada.tokens.accessToken, ada.tokens.refreshToken ?? "", needing.tokens.refreshToken ?? ""])
  }

  /// A keyring locked before the agent first reads it: the agent's answers are the direct
  /// path's `keyringLocked` (exit 7), word for word.
  @Test func aLockedKeyringGivesTheSameAnswersThroughTheAgent() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    let stored = try await session.run(
      "secret-tool", KeyringCommandTests.seededItem,
      stdin: #"{"version":1,"access_token":"SECRET-TOKEN-LOCKED-TEST","token_type":"Bearer"}"#)
    try #require(stored.status == 0, "\(stored.stderr)")
    try await session.lockLoginKeyring()
    // Not the session's `agent/`: under with-agent.sh the session runs an agent of its own there.
    let socket = session.directory.appendingPathComponent("agent-test/agent.sock").path
    let agent = try await TestAgent.start(
      environment: session.environment, socket: socket, log: session.directory.appendingPathComponent("agent.log").path)
    var direct = session.environment
    direct["TOKENCTL_AGENT"] = "0"
    for arguments in [["token", "graph:ada@contoso.com"], ["token", "graph:nobody"], ["list"], ["list", "--json"]] {
      let comparison = try await Self.compare(
        arguments.joined(separator: " "), TestProcess.tokenctl, arguments, agent: agent, viaAgent: agent.environment,
        direct: direct)
      #expect(comparison.direct.status == 7, "\(arguments): \(comparison.direct.stderr)")
      #expect(
        comparison.identical,
        "\(arguments): agent \(comparison.agent.status) \(comparison.agent.stderr.debugDescription); direct \(comparison.direct.stderr.debugDescription)"
      )
      #expect(!comparison.clientUsedBus, "\(arguments): the client went to the keyring itself")
      Self.figure(
        "a-locked", arguments.joined(separator: " "),
        "exit \(comparison.agent.status); agent answered: \(!comparison.clientUsedBus)")
    }
    await Self.finish(agent, secrets: ["SECRET-TOKEN-LOCKED-TEST"])
  }

  /// The keyring locked after the agent has read it: the direct path says locked (exit 7);
  /// so must the agent, not hand out what it remembers.
  @Test
  func aKeyringLockedAfterTheAgentReadItIsLockedThroughTheAgentToo() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    let stored = try await session.run(
      "secret-tool", KeyringCommandTests.seededItem,
      stdin: #"{"version":1,"access_token":"SECRET-TOKEN-LOCKED-TEST","token_type":"Bearer"}"#)
    try #require(stored.status == 0, "\(stored.stderr)")
    // Not the session's `agent/`: under with-agent.sh the session runs an agent of its own there.
    let socket = session.directory.appendingPathComponent("agent-test/agent.sock").path
    let agent = try await TestAgent.start(
      environment: session.environment, socket: socket, log: session.directory.appendingPathComponent("agent.log").path)
    let warm = try await BoundedRun.run(
      TestProcess.tokenctl, ["token", "graph:ada@contoso.com"], environment: agent.environment)
    #expect(warm.result?.stdout == "SECRET-TOKEN-LOCKED-TEST\n")
    try await session.lockLoginKeyring()
    var direct = session.environment
    direct["TOKENCTL_AGENT"] = "0"
    for arguments in [["token", "graph:ada@contoso.com"], ["list"]] {
      let comparison = try await Self.compare(
        arguments.joined(separator: " "), TestProcess.tokenctl, arguments, agent: agent, viaAgent: agent.environment,
        direct: direct)
      #expect(comparison.direct.status == 7)
      #expect(
        comparison.identical,
        "\(arguments): agent \(comparison.agent.status) \(comparison.agent.stdout.debugDescription)")
    }
    await Self.finish(agent, secrets: ["SECRET-TOKEN-LOCKED-TEST"])
  }

  /// The rest of what decides an answer: a refresh on the way (the agent refreshes, the
  /// direct run then finds the new token), `--group` and `TOKENCTL_ACCOUNT`, git's other
  /// fields, and the user's files: a type file that is skipped, a config.toml that is broken.
  @Test func refreshesFlagsAndTheUsersFilesGiveTheSameAnswersThroughTheAgent() async throws {
    let setup = try await Setup()
    let pair = TokenStoreConformance.freshGroup()
    // An account of its own: a second one in the main group would make git's choice ambiguous.
    let lapsingGroup = TokenStoreConformance.freshGroup()
    defer { setup.cleanUp(groups: [pair, lapsingGroup]) }
    let ada = try await setup.seed(name: "ada", access: "agent-test-valid-\(UUID().uuidString)", expiresIn: 7230)
    let lapsing = try await setup.seed(
      name: "lapsing", group: lapsingGroup, access: "expired-access-token", expiresIn: -60)
    let gitExpired = try await setup.seed(
      name: "gitexpired", group: pair, access: "expired-access-token", expiresIn: -60)
    let grace = try await setup.seed(
      name: "grace", group: pair, access: "agent-test-grace-\(UUID().uuidString)", expiresIn: 7230)
    let agent = try await setup.startAgent()
    let tokenctl = TestProcess.tokenctl, helper = GitCredentialTests.helper
    let served = "protocol=http\nhost=127.0.0.1\n\n"
    var noGroup = setup.environment()
    noGroup["TOKENCTL_GROUP"] = nil
    var chosen = setup.environment(group: pair)
    chosen["TOKENCTL_ACCOUNT"] = "gitlocal:grace"
    var chosenExpired = setup.environment(group: pair)
    chosenExpired["TOKENCTL_ACCOUNT"] = "gitlocal:gitexpired"
    func direct(_ environment: [String: String]) -> [String: String] {
      environment.merging(["TOKENCTL_AGENT": "0"]) { $1 }
    }
    func through(_ environment: [String: String]) -> [String: String] {
      TestAgent.clientEnvironment(environment, socket: setup.socket)
    }
    var failures: [String] = []
    func check(
      _ label: String, _ executable: String, _ arguments: [String], stdin: String = "",
      environment: [String: String], status: Int32? = nil, eachRefreshes: Bool = false
    ) async throws {
      let comparison = try await Self.compare(
        label, executable, arguments, stdin: stdin, agent: agent, viaAgent: through(environment),
        direct: direct(environment))
      // Where each run refreshes, each prints its own new token: the rest must agree.
      let same =
        eachRefreshes
        ? comparison.agent.status == comparison.direct.status && comparison.agent.stderr == comparison.direct.stderr
        : comparison.identical
      if !same || status.map({ $0 != comparison.direct.status }) == true {
        failures.append(
          """
          \(label): through the agent \(comparison.agent.status) \(comparison.agent.stdout.debugDescription) \
          \(comparison.agent.stderr.debugDescription); direct \(comparison.direct.status) \
          \(comparison.direct.stdout.debugDescription) \(comparison.direct.stderr.debugDescription)
          """)
      }
      Self.figure("a2", label, "exit \(comparison.agent.status); agent answered: \(!comparison.clientUsedBus)")
    }
    try await check(
      "token, expired: refreshes", tokenctl, ["token", "lapsing"], environment: setup.environment(group: lapsingGroup),
      status: 0)
    try await check(
      "token --group G", tokenctl, ["token", "--group", setup.group, "ada"], environment: noGroup, status: 0)
    try await check(
      "credential get --group G", tokenctl, ["credential", "get", "--group", setup.group], stdin: served,
      environment: noGroup, status: 0)
    try await check("git get, TOKENCTL_ACCOUNT", helper, ["get"], stdin: served, environment: chosen, status: 0)
    try await check(
      "git get, TOKENCTL_ACCOUNT, expired: refreshes", helper, ["get"], stdin: served, environment: chosenExpired,
      status: 0)
    try await check(
      "git get, path, username and wwwauth", helper, ["get"],
      stdin: "protocol=http\nhost=127.0.0.1\npath=repo.git\nusername=oauth2\nwwwauth[]=Bearer realm=\"x\"\n\n",
      environment: setup.environment(), status: 0)
    try await check(
      "git get, another user name", helper, ["get"], stdin: "protocol=http\nhost=127.0.0.1\nusername=someone\n\n",
      environment: setup.environment())
    try await check(
      "token --min-valid beyond any lifetime", tokenctl, ["token", "--min-valid", "999999", "ada"],
      environment: setup.environment(), eachRefreshes: true)

    let types = setup.home.appendingPathComponent("config/tokenctl/types")
    try "id = [\n".write(to: types.appendingPathComponent("broken.toml"), atomically: true, encoding: .utf8)
    try "id = \"gitlocal\"\n".write(to: types.appendingPathComponent("twin.toml"), atomically: true, encoding: .utf8)
    try await check(
      "token, a type file skipped", tokenctl, ["token", "ada"], environment: setup.environment(), status: 0)
    try await check("list, a type file skipped", tokenctl, ["list"], environment: setup.environment(), status: 0)
    try await check(
      "git get, a type file skipped", helper, ["get"], stdin: served, environment: setup.environment(), status: 0)
    try await check(
      "token, unknown account, a type file skipped", tokenctl, ["token", "gitlocal:nobody"],
      environment: setup.environment(), status: 2)

    let config = setup.home.appendingPathComponent("config/tokenctl/config.toml")
    try "[types.gitlocal\n".write(to: config, atomically: true, encoding: .utf8)
    try await check("token, config.toml broken", tokenctl, ["token", "ada"], environment: setup.environment())
    try await check("list, config.toml broken", tokenctl, ["list"], environment: setup.environment())
    try await check(
      "git get, config.toml broken", helper, ["get"], stdin: served, environment: setup.environment())
    try FileManager.default.removeItem(at: config)
    try await check("token, config.toml gone again", tokenctl, ["token", "ada"], environment: setup.environment())

    #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    var secrets = [ada, lapsing, gitExpired, grace].flatMap { [$0.tokens.accessToken, $0.tokens.refreshToken ?? ""] }
    for group in [setup.group, pair, lapsingGroup] {
      for stored in try setup.store(group).loadAll(.all) {
        secrets += [stored.tokens.accessToken, stored.tokens.refreshToken ?? ""]
      }
    }
    await Self.finish(agent, secrets: secrets.filter { $0 != "expired-access-token" })
  }

  /// `tokenctl list` printed by the front end itself (the full program is never run:
  /// strace sees one execve), byte for byte as the full program prints it, table and
  /// empty-group message, from one request. A name it cannot be sure to print as the full
  /// program would goes to the full program, which reports the agent's answer without
  /// asking again.
  @Test func theFrontEndListsTheAgentsAccountsItself() async throws {
    let setup = try await Setup()
    let empty = TokenStoreConformance.freshGroup()
    let accented = TokenStoreConformance.freshGroup()
    defer { setup.cleanUp(groups: [empty, accented]) }
    let ada = try await setup.seed(name: "ada", expiresIn: 7230)
    let grace = try await setup.seed(name: "grace-with-a-longer-name", expiresIn: -60)
    let cafe = try await setup.seed(name: "caf\u{E9}", group: accented, expiresIn: 7230)
    let agent = try await setup.startAgent()
    let links = try TemporaryDirectory()
    let tokenctl = try Clients.frontEnd.executables(in: links).tokenctl
    for (group, itself) in [(setup.group, true), (empty, true), (accented, false)] {
      let direct = try await TestProcess.run(TestProcess.tokenctl, ["list"], environment: setup.direct(group: group))
      let trace = try TemporaryDirectory()
      let before = try await agent.requests()
      let traced = try await TestProcess.run(
        "strace", ["-f", "-qq", "-e", "trace=execve", "-o", trace.path("trace"), tokenctl, "list"],
        environment: setup.viaAgent(group: group))
      #expect(try await agent.requests() - before - 1 == 1, "\(group): one request")
      let execs = try String(contentsOfFile: trace.path("trace"), encoding: .utf8).split(separator: "\n").filter {
        $0.contains("execve(")
      }
      #expect(execs.count == (itself ? 1 : 2), "\(group): \(execs)")
      #expect(
        traced.status == direct.status && traced.stdout == direct.stdout && traced.stderr == direct.stderr,
        "\(group): \(traced.stdout.debugDescription) \(traced.stderr.debugDescription)")
    }
    await Self.finish(
      agent, secrets: [ada, grace, cafe].flatMap { [$0.tokens.accessToken, $0.tokens.refreshToken ?? ""] })
  }

  // MARK: (b) One refresh for 32 clients

  @Test func thirtyTwoClientsOnAnExpiredTokenCostTheAgentOneRefresh() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let seeded = try await setup.seed(name: "race", access: "expired-access-token", expiresIn: -60)
    let agent = try await setup.startAgent()
    let before = try await setup.stats()
    let requestsBefore = try await agent.requests()
    let outputs = (0..<32).map { setup.directory.path("out-\($0)") }
    let errors = (0..<32).map { setup.directory.path("err-\($0)") }
    let started = Date()
    let processes = try (0..<32).map {
      try TestProcess(
        TestProcess.tokenctl, ["token", "gitlocal:race"], environment: setup.viaAgent(), stdout: outputs[$0],
        stderr: errors[$0])
    }
    var statuses: [Int32?] = []
    for process in processes {
      statuses.append(await process.exitStatus(within: max(1, 300 - Date().timeIntervalSince(started))))
    }
    let elapsed = Date().timeIntervalSince(started)
    for (process, status) in zip(processes, statuses) where status == nil { kill(process.pid, SIGKILL) }
    let requests = try await agent.requests() - requestsBefore - 1
    let printed = try outputs.map { try String(contentsOfFile: $0, encoding: .utf8) }
    let stored = try #require(try setup.store().load(seeded.account.key))
    let after = try await setup.stats()

    let errorTexts = errors.map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" }
    #expect(statuses.allSatisfy { $0 == 0 }, "\(statuses): \(errorTexts)")
    #expect(Set(printed) == [stored.tokens.accessToken + "\n"], "all 32 print the one token in the keyring")
    #expect(stored.tokens.accessToken != "expired-access-token")
    #expect(Setup.refreshGrants(after) - Setup.refreshGrants(before) == 1, "exactly one refresh request")
    #expect((after["reuse_detected"] as? Int ?? 0) == 0)
    #expect(requests == 32, "the agent answered all 32: it counted \(requests)")
    Self.figure("b", "32 clients, wall time", String(format: "%.3f s", elapsed))
    Self.figure("b", "refresh requests at the stub", Setup.refreshGrants(after) - Setup.refreshGrants(before))
    Self.figure("b", "requests the agent counted", requests)
    await Self.finish(
      agent, secrets: [seeded.tokens.refreshToken ?? "", stored.tokens.accessToken, stored.tokens.refreshToken ?? ""])
  }

  // MARK: (c) Writes by the direct path

  /// A revoke and a refresh made by the direct path while the agent runs: the agent's next
  /// answers are what the keyring now holds.
  @Test
  func writesByTheDirectPathAreSeenByTheAgentsNextAnswer() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let revoked = try await setup.seed(
      name: "revoked", access: "agent-test-revoked-\(UUID().uuidString)", expiresIn: 7200)
    let renewed = try await setup.seed(
      name: "renewed", access: "agent-test-renewed-\(UUID().uuidString)", expiresIn: 7200)
    let agent = try await setup.startAgent()
    for stored in [revoked, renewed] {
      let warm = try await BoundedRun.run(
        TestProcess.tokenctl, ["token", stored.account.qualifiedName], environment: setup.viaAgent())
      #expect(warm.result?.stdout == stored.tokens.accessToken + "\n")
    }

    let revoke = try await BoundedRun.run(
      TestProcess.tokenctl, ["revoke", "--local", "gitlocal:revoked"], environment: setup.direct())
    #expect(revoke.result?.status == 0, "\(revoke.result?.stderr ?? "hung")")
    let afterRevoke = try await Self.compare(
      "token after revoke", TestProcess.tokenctl, ["token", "gitlocal:revoked"], agent: agent,
      viaAgent: setup.viaAgent(), direct: setup.direct())
    #expect(afterRevoke.direct.status == 2)
    #expect(afterRevoke.identical, "after a revoke the agent printed \(afterRevoke.agent.stdout.debugDescription)")

    let refresh = try await BoundedRun.run(
      TestProcess.tokenctl, ["refresh", "gitlocal:renewed"], environment: setup.direct())
    #expect(refresh.result?.status == 0, "\(refresh.result?.stderr ?? "hung")")
    let stored = try #require(try setup.store().load(renewed.account.key))
    #expect(stored.tokens.accessToken != renewed.tokens.accessToken)
    let afterRefresh = try await BoundedRun.run(
      TestProcess.tokenctl, ["token", "gitlocal:renewed"], environment: setup.viaAgent())
    #expect(
      afterRefresh.result?.stdout == stored.tokens.accessToken + "\n", "the agent printed the token it remembered")
    await Self.finish(
      agent,
      secrets: [revoked.tokens.accessToken, renewed.tokens.accessToken, stored.tokens.accessToken]
        + [revoked, renewed].compactMap(\.tokens.refreshToken))
  }

  // MARK: (d) An agent killed under waiting clients

  /// SIGKILL as a crash would, and SIGTERM as `agent stop` does: either way the waiting
  /// clients fall back, and the refresh the agent started is finished and kept.
  @Test(arguments: [SIGKILL, SIGTERM])
  func clientsOfAnAgentKilledDuringASlowRefreshFallBackAndSucceed(signal: Int32) async throws {
    // The stub holds every token answer 6 s after it rotated the refresh token.
    let setup = try await Setup(stubArguments: ["--answer-delay", "6"])
    defer { setup.cleanUp() }
    let seeded = try await setup.seed(name: "slow", access: "expired-access-token", expiresIn: -60)
    let agent = try await setup.startAgent()
    let before = try await setup.stats()
    var statusReadings = 0
    let baseline = try await agent.requests()
    statusReadings += 1
    let outputs = (0..<8).map { setup.directory.path("out-\($0)") }
    let errors = (0..<8).map { setup.directory.path("err-\($0)") }
    let started = Date()
    let clients = try (0..<8).map {
      try TestProcess(
        TestProcess.tokenctl, ["token", "gitlocal:slow"], environment: setup.viaAgent(), stdout: outputs[$0],
        stderr: errors[$0])
    }
    // Kill once the refresh is at the server and all eight wait on the agent.
    var waiting = 0
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline {
      let inFlight = await (try setup.stats()["token_requests"] as? Int ?? 0) > (before["token_requests"] as? Int ?? 0)
      waiting = try await agent.requests() - baseline - statusReadings
      statusReadings += 1
      if inFlight && waiting >= 8 { break }
      try await Task.sleep(for: .milliseconds(50))
    }
    #expect(waiting >= 8, "only \(waiting) clients reached the agent")
    let killedAt = Date()
    kill(agent.process.pid, signal)
    let agentExit = await agent.process.exitStatus(within: 60)
    #expect(agentExit != nil, "the agent outlived signal \(signal) by 60 s")
    var statuses: [Int32?] = []
    for client in clients {
      statuses.append(await client.exitStatus(within: max(1, 300 - Date().timeIntervalSince(started))))
    }
    let lastDone = Date().timeIntervalSince(killedAt)
    for (client, status) in zip(clients, statuses) where status == nil { kill(client.pid, SIGKILL) }
    let printed = try outputs.map { try String(contentsOfFile: $0, encoding: .utf8) }
    let stored = try #require(try setup.store().load(seeded.account.key))
    let after = try await setup.stats()

    #expect(!statuses.contains(nil), "\(statuses.filter { $0 == nil }.count) clients hung past 300 s")
    let errorTexts = errors.map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" }
    #expect(statuses.allSatisfy { $0 == 0 }, "\(errorTexts)")
    #expect(Set(printed) == [stored.tokens.accessToken + "\n"])
    #expect((after["reuse_detected"] as? Int ?? 0) == 0)
    let test = "d signal \(signal)"
    Self.figure(test, "kill after start", String(format: "%.3f s", killedAt.timeIntervalSince(started)))
    Self.figure(test, "agent exit", agentExit.map(String.init) ?? "still running")
    Self.figure(test, "last client done after the kill", String(format: "%.3f s", lastDone))
    Self.figure(test, "refresh requests at the stub", Setup.refreshGrants(after) - Setup.refreshGrants(before))
    // The killed agent's log is checked too; it had no chance to write "stopping".
    let leaked = [seeded.tokens.refreshToken ?? "", stored.tokens.accessToken, stored.tokens.refreshToken ?? ""]
      .filter { !$0.isEmpty && agent.log.contains($0) }
    #expect(leaked.isEmpty)
  }

  // MARK: Other buses, edited files, many requests

  /// A client on another session bus (a private one, with its own keyring) gets `direct`
  /// from the agent and reads its own keyring: never the agent's.
  @Test func aClientOfAnotherSessionBusIsLeftToItsDirectPath() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let agent = try await setup.startAgent()
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    let stored = try await session.run(
      "secret-tool", KeyringCommandTests.seededItem,
      stdin: #"{"version":1,"access_token":"SECRET-TOKEN-OTHER-BUS","token_type":"Bearer"}"#)
    try #require(stored.status == 0, "\(stored.stderr)")
    var direct = session.environment
    direct["TOKENCTL_AGENT"] = "0"
    let comparison = try await Self.compare(
      "another bus", TestProcess.tokenctl, ["token", "graph:ada@contoso.com"], agent: agent,
      viaAgent: TestAgent.clientEnvironment(session.environment, socket: setup.socket), direct: direct)
    #expect(comparison.agent.stdout == "SECRET-TOKEN-OTHER-BUS\n", "\(comparison.agent.stderr)")
    #expect(comparison.identical)
    #expect(comparison.agentRequests == 1, "the client asked the agent first")
    #expect(comparison.clientUsedBus, "the client read its own keyring")
    await Self.finish(agent, secrets: ["SECRET-TOKEN-OTHER-BUS"])
  }

  /// Without DBUS_SESSION_BUS_ADDRESS, GLib finds the bus at $XDG_RUNTIME_DIR/bus. A client
  /// whose runtime folder has no bus cannot reach a keyring (exit 8); an agent that found
  /// one in its own runtime folder must not answer for it from that keyring.
  @Test func aClientWithoutABusAddressIsJudgedByTheBusItWouldFind() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let bus = try #require(
      ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"].flatMap {
        $0.hasPrefix("unix:path=") ? Self.busPath($0) : nil
      }, "needs a session bus at a unix:path= address")
    let ada = try await setup.seed(name: "ada", access: "agent-test-nobus-\(UUID().uuidString)", expiresIn: 7200)
    let agentRuntime = setup.directory.path("agent-runtime"), clientRuntime = setup.directory.path("client-runtime")
    for folder in [agentRuntime, clientRuntime] {
      try FileManager.default.createDirectory(
        atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    }
    // The agent finds the tests' bus in its runtime folder, as GLib would; the client none.
    try FileManager.default.createSymbolicLink(atPath: agentRuntime + "/bus", withDestinationPath: bus)
    var agentEnvironment = setup.environment()
    agentEnvironment["DBUS_SESSION_BUS_ADDRESS"] = nil
    agentEnvironment["XDG_RUNTIME_DIR"] = agentRuntime
    let agent = try await TestAgent.start(environment: agentEnvironment, socket: setup.socket, log: setup.log)
    var client = setup.environment()
    client["DBUS_SESSION_BUS_ADDRESS"] = nil
    client["XDG_RUNTIME_DIR"] = clientRuntime
    let comparison = try await Self.compare(
      "no bus address", TestProcess.tokenctl, ["token", "ada"], agent: agent,
      viaAgent: TestAgent.clientEnvironment(client, socket: setup.socket),
      direct: client.merging(["TOKENCTL_AGENT": "0"]) { $1 })
    #expect(comparison.direct.status == 8, "\(comparison.direct.stderr)")
    #expect(
      comparison.identical,
      "through the agent \(comparison.agent.status) \(comparison.agent.stdout.debugDescription)")
    // The client whose runtime folder holds the same bus is the agent's to answer.
    var sameBus = client
    sameBus["XDG_RUNTIME_DIR"] = agentRuntime
    let served = try await Self.compare(
      "the agent's bus, found the same way", TestProcess.tokenctl, ["token", "ada"], agent: agent,
      viaAgent: TestAgent.clientEnvironment(sameBus, socket: setup.socket),
      direct: sameBus.merging(["TOKENCTL_AGENT": "0"]) { $1 })
    #expect(served.agent.stdout == ada.tokens.accessToken + "\n", "\(served.agent.stderr)")
    #expect(served.identical)
    #expect(!served.clientUsedBus)
    await Self.finish(agent, keeping: ada)
  }

  /// A client the agent answers never opens the keyring's libraries (they load on first
  /// use): the loader's own trace (`LD_DEBUG=libs`) shows none of them. Nor does the same
  /// command on the direct path, whose ordinary read is made without GLib
  /// (SecretServiceWire).
  @Test func aClientTheAgentAnswersLoadsNoKeyringLibrary() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let (ada, agent) = try await setup.adaAndAgent("agent-test-libs")
    let served = "protocol=http\nhost=127.0.0.1\n\n"
    for (label, executable, arguments, stdin) in [
      ("token", TestProcess.tokenctl, ["token", "ada"], ""), ("list", TestProcess.tokenctl, ["list"], ""),
      ("git get", GitCredentialTests.helper, ["get"], served),
    ] {
      let through = try await BoundedRun.run(
        executable, arguments, environment: setup.viaAgent().merging(["LD_DEBUG": "libs"]) { $1 }, stdin: stdin)
      let direct = try await BoundedRun.run(
        executable, arguments, environment: setup.direct().merging(["LD_DEBUG": "libs"]) { $1 }, stdin: stdin)
      let agentLoaded = KeyringLibraryLoadingTests.keyringLibraries(in: through.result?.stderr ?? "")
      let directLoaded = KeyringLibraryLoadingTests.keyringLibraries(in: direct.result?.stderr ?? "")
      #expect(through.result?.status == 0 && direct.result?.status == 0, "\(label)")
      #expect(agentLoaded.isEmpty, "\(label) through the agent loaded \(agentLoaded)")
      // Directly, the ordinary read needs none either (SecretServiceWire); the loader's trace
      // is there all the same.
      #expect(directLoaded.isEmpty, "\(label) directly loaded \(directLoaded)")
      #expect(direct.result?.stderr.contains("libc.so.6") == true, "\(label): no loader trace")
      Self.figure(
        "libs", label, "through the agent \(agentLoaded.count) keyring libraries, directly \(directLoaded.count)")
    }
    await Self.finish(agent, keeping: ada)
  }

  /// The user edits a type file while the agent runs: the next answer follows the file.
  @Test func anEditedTypeFileIsSeenByTheNextAnswer() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let (ada, agent) = try await setup.adaAndAgent("agent-test-edited")
    let other = "protocol=http\nhost=localhost\n\n"
    let before = try await BoundedRun.run(
      GitCredentialTests.helper, ["get"], environment: setup.viaAgent(), stdin: other)
    #expect(before.result?.stdout == "", "localhost is not served yet")
    try GitCredentialTests.writeGitType(
      home: setup.home, issuer: setup.stub.baseURL, clientID: "git", host: "localhost")
    let comparison = try await Self.compare(
      "after the edit", GitCredentialTests.helper, ["get"], stdin: other, agent: agent, viaAgent: setup.viaAgent(),
      direct: setup.direct())
    #expect(comparison.agent.stdout.contains("password=\(ada.tokens.accessToken)\n"), "\(comparison.agent.stdout)")
    #expect(comparison.identical)
    #expect(!comparison.clientUsedBus)
    await Self.finish(agent, keeping: ada)
  }

  /// Many requests leave the agent as they found it: no descriptor or thread is kept per
  /// request. Sent raw, so that the figure is the agent's own cost per answer.
  @Test func threeHundredRequestsLeakNoDescriptorOrThread() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let ada = try await setup.seed(name: "ada", access: "agent-test-many-\(UUID().uuidString)", expiresIn: 7200)
    try setup.allowTheTestProcess()
    let agent = try await setup.startAgent()
    var request = "tokenctl-agent/1 token\ngroup=\(setup.group)\naccount=ada\n"
    let environment = setup.viaAgent()
    for name in [
      "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "TOKENCTL_CONFIG",
      "DBUS_SESSION_BUS_ADDRESS",
    ] {
      if let value = environment[name] { request += "env-\(name.lowercased().replacing("_", with: "-"))=\(value)\n" }
    }
    let bytes = RawAgentSocket.frame(Array(request.utf8))
    func counts() -> (descriptors: Int, threads: Int) {
      let descriptors =
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(agent.process.pid)/fd").count) ?? -1
      let threads =
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(agent.process.pid)/task").count) ?? -1
      return (descriptors, threads)
    }
    // The first answer reads the keyring and the files; the rest are from memory.
    let warm = try RawAgentSocket.exchange(path: setup.socket, bytes: bytes)
    #expect(warm == .frame(header: "tokenctl-agent/1 token", body: "access-token=\(ada.tokens.accessToken)\n"))
    try await Task.sleep(for: .milliseconds(200))
    let before = counts()
    let started = Date()
    var wrong = 0
    for _ in 0..<300 {
      let reply = try RawAgentSocket.exchange(path: setup.socket, bytes: bytes)
      if reply != warm { wrong += 1 }
    }
    let perRequest = Date().timeIntervalSince(started) / 300
    // Each connection's thread parks after its answer is written, or ends when enough are
    // parked (`ConnectionThreads`): give the last ones a moment.
    let threadsKept = before.threads + Agent.keptConnectionThreads
    var after = counts()
    let deadline = Date().addingTimeInterval(5)
    while (after.descriptors > before.descriptors || after.threads > threadsKept) && Date() < deadline {
      try await Task.sleep(for: .milliseconds(50))
      after = counts()
    }
    #expect(wrong == 0)
    #expect(after.descriptors <= before.descriptors, "descriptors \(before.descriptors) → \(after.descriptors)")
    #expect(after.threads <= threadsKept, "threads \(before.threads) → \(after.threads)")
    Self.figure("m", "per request (raw, sequential)", String(format: "%.2f ms", perRequest * 1000))
    Self.figure("m", "descriptors", "\(before.descriptors) → \(after.descriptors)")
    Self.figure("m", "threads", "\(before.threads) → \(after.threads)")
    await Self.finish(agent, keeping: ada)
  }

  /// Idle means idle: an agent that has answered, and keeps a token fresh that expires in
  /// two hours, is not woken at all until then. Every wake-up of any of its threads is a
  /// context switch in /proc; libdispatch's worker pool, once started, woke it every second.
  /// The threads that hear of keyring changes (GDBus's worker and the keyring monitor) are
  /// left out: other tests write to the same keyring meanwhile, and hearing of that is the
  /// monitor's job.
  @Test func anIdleAgentIsNeverWokenUp() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let (ada, agent) = try await setup.adaAndAgent("agent-test-idle")
    let first = try await BoundedRun.run(TestProcess.tokenctl, ["token", "ada"], environment: setup.viaAgent())
    #expect(first.result?.stdout == ada.tokens.accessToken + "\n")
    #expect((try await agent.status()["accounts"] as? [Any])?.count == 1, "ada is kept fresh")
    func switches() -> Int {
      let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(agent.process.pid)/task")) ?? []
      return tasks.reduce(0) { total, task in
        let name = (try? String(contentsOfFile: "/proc/\(agent.process.pid)/task/\(task)/comm", encoding: .utf8))?
          .trimmingCharacters(in: .whitespacesAndNewlines)
        if name == "gdbus" || name == "keyring-monitor" { return total }
        let status = (try? String(contentsOfFile: "/proc/\(agent.process.pid)/task/\(task)/status", encoding: .utf8))
        // voluntary_ctxt_switches and nonvoluntary_ctxt_switches
        let counts = (status ?? "").split(separator: "\n").filter { $0.contains("ctxt_switches:") }
          .compactMap { $0.split(separator: "\t").last.flatMap { Int($0) } }
        return total + counts.reduce(0, +)
      }
    }
    // The answer's own threads end within moments.
    try await Task.sleep(for: .milliseconds(500))
    let before = switches()
    try await Task.sleep(for: .seconds(3.5))
    let after = switches()
    #expect(before > 0, "the agent's threads were read")
    #expect(after == before, "the idle agent was woken \(after - before) times in 3.5 s")
    Self.figure("n", "wake-ups in 3.5 s idle", after - before)
    await Self.finish(agent, keeping: ada)
  }

  // MARK: (e) Kills at random points of refreshes

  @Test func killingTheAgentAtRandomPointsOfRefreshesLosesNoGrant() async throws {
    // Access tokens live 30 s, and clients ask for 60: every request refreshes.
    let setup = try await Setup(stubArguments: ["--access-token-seconds", "30", "--answer-delay", "0.03"])
    defer { setup.cleanUp() }
    let seeded = try await setup.seed(name: "crash", access: "expired-access-token", expiresIn: -60)
    let key = seeded.account.key
    let arguments = ["token", "--min-valid", "60", "gitlocal:crash"]
    var agent = try await setup.startAgent()
    var secrets = [seeded.tokens.refreshToken ?? ""]
    var durations: [Double] = []
    for _ in 0..<3 {
      let outcome = try await BoundedRun.run(TestProcess.tokenctl, arguments, environment: setup.viaAgent())
      try #require(outcome.result?.status == 0, "\(outcome.result?.stderr ?? "hung")")
      durations.append(outcome.seconds)
    }
    let median = durations.sorted()[1]
    var failures: [String] = []
    var delays: [String] = []
    var logs = agent.log
    for round in 0..<10 {
      let delay = Double.random(in: 0...(1.3 * median))
      delays.append(String(format: "%.3f", delay))
      let output = setup.directory.path("crash-\(round)")
      let client = try TestProcess(
        TestProcess.tokenctl, arguments, environment: setup.viaAgent(), stdout: output, stderr: output + ".err")
      try await Task.sleep(for: .milliseconds(Int64(delay * 1000)))
      await agent.killHard()
      logs += agent.log
      let status = await client.exitStatus(within: 60)
      if status == nil { kill(client.pid, SIGKILL) }
      if status != 0 {
        failures.append("round \(round): the client of the killed agent exited \(status.map(String.init) ?? "hung")")
      }
      try await setup.waitForLock(key)
      let stored = try #require(try setup.store().load(key))
      secrets += [stored.tokens.accessToken, stored.tokens.refreshToken ?? ""]
      let verdict = try await setup.check(refreshToken: stored.tokens.refreshToken ?? "")
      if verdict != "current" { failures.append("round \(round): the keyring's refresh token is \(verdict)") }
      let direct = try await BoundedRun.run(TestProcess.tokenctl, arguments, environment: setup.direct())
      if direct.result?.status != 0 {
        failures.append("round \(round): direct \(direct.result?.status ?? -1) \(direct.result?.stderr ?? "hung")")
      }
      try? FileManager.default.removeItem(atPath: setup.log)
      agent = try await setup.startAgent()
      let through = try await BoundedRun.run(TestProcess.tokenctl, arguments, environment: setup.viaAgent())
      let now = try #require(try setup.store().load(key))
      secrets += [now.tokens.accessToken, now.tokens.refreshToken ?? ""]
      if through.result?.status != 0 || through.result?.stdout != now.tokens.accessToken + "\n" {
        failures.append(
          "round \(round): restarted agent \(through.result?.status ?? -1) \(through.result?.stderr ?? "hung")")
      }
    }
    let stats = try await setup.stats()
    #expect(failures.isEmpty, "\(failures)")
    #expect((stats["reuse_detected"] as? Int ?? -1) == 0, "refresh-token reuse at the stub")
    Self.figure("e", "median refresh through the agent", String(format: "%.3f s", median))
    Self.figure("e", "kill delays", delays.joined(separator: " "))
    Self.figure("e", "refresh requests at the stub", Setup.refreshGrants(stats))
    Self.figure("e", "reuse detected", stats["reuse_detected"] ?? "?")
    let leaked = secrets.filter { $0.count >= 8 && logs.contains($0) }
    #expect(leaked.isEmpty)
    await Self.finish(agent, secrets: secrets)
  }

  // MARK: (f) Stale sockets and second agents

  @Test func aKilledAgentsSocketIsTakenOverAndASecondAgentIsRefused() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let ada = try await setup.seed(name: "ada", access: "agent-test-stale-\(UUID().uuidString)", expiresIn: 7200)
    let first = try await setup.startAgent()
    await first.killHard()
    #expect(FileManager.default.fileExists(atPath: setup.socket), "SIGKILL leaves the socket behind")
    let fallback = try await BoundedRun.run(TestProcess.tokenctl, ["token", "ada"], environment: setup.viaAgent())
    #expect(fallback.result?.stdout == ada.tokens.accessToken + "\n", "a stale socket: the client goes direct")

    let started = Date()
    let second = try await setup.startAgent()
    Self.figure(
      "f", "new agent on a stale socket answers after", String(format: "%.3f s", Date().timeIntervalSince(started)))
    let token = try await BoundedRun.run(TestProcess.tokenctl, ["token", "ada"], environment: setup.viaAgent())
    #expect(token.result?.stdout == ada.tokens.accessToken + "\n")

    let third = try await BoundedRun.run(
      TestProcess.tokenctl, ["agent", "run"], environment: second.environment, seconds: 20)
    #expect(third.result?.status == 19, "a second agent: \(third.result.map { "\($0.status)" } ?? "still running")")
    #expect(third.result?.stderr.contains("already running") == true, "\(third.result?.stderr ?? "")")
    #expect(third.result?.stderr.contains("pid \(second.process.pid)") == true, "\(third.result?.stderr ?? "")")
    Self.figure("f", "second agent says", third.result?.stderr.trimmingCharacters(in: .newlines) ?? "-")
    #expect(
      try await BoundedRun.run(TestProcess.tokenctl, ["token", "ada"], environment: setup.viaAgent()).result?.stdout
        == ada.tokens.accessToken + "\n", "the first agent still serves")
    await Self.finish(second, secrets: [ada.tokens.accessToken, ada.tokens.refreshToken ?? ""])
  }

  // MARK: (g) Another user

  @Test(.enabled(if: getuid() == 0, "needs root: setpriv switches to uid 65534 and opens the socket to it"))
  func aPeerOfAnotherUserGetsNoAnswer() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let (ada, agent) = try await setup.adaAndAgent("agent-test-uid")
    // The agent makes its folder 0700 and its socket 0600, so the kernel alone keeps other
    // users out; opened up here, the agent's own peer check is what refuses them.
    chmod(setup.directory.path("agent"), 0o711)
    chmod(setup.socket, 0o666)
    let before = try await agent.requests()
    let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]
    let client = try await BoundedRun.run(
      "setpriv", nobody + [TestProcess.tokenctl, "token", "gitlocal:ada"], environment: setup.viaAgent())
    let raw = try await BoundedRun.run(
      "setpriv",
      nobody + [
        // Debian's own: a python3 earlier on root's PATH may live where uid 65534 cannot go.
        "/usr/bin/python3", "-c",
        """
        import socket, sys
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect(sys.argv[1])
        p = b"tokenctl-agent/1 status\\n"
        try:
            s.sendall(len(p).to_bytes(4, "big") + p)
            data = s.recv(65536)
            print("closed" if not data else "answered %d bytes" % len(data))
        except (BrokenPipeError, ConnectionResetError):
            print("closed")
        except socket.timeout:
            print("silent")
        """, setup.socket,
      ], environment: setup.viaAgent())
    let requests = try await agent.requests() - before - 1
    let client65534 = try #require(client.result)
    #expect(!client65534.stdout.contains(ada.tokens.accessToken))
    #expect(client65534.status != 0 || client65534.stdout.isEmpty, "\(client65534)")
    #expect(
      raw.result?.stdout == "closed\n",
      "a raw request of uid 65534: \(raw.result?.stdout ?? "hung") \(raw.result?.stderr ?? "")")
    #expect(requests == 0, "the agent counted \(requests) requests from uid 65534")
    #expect(agent.log.contains("refused a connection from another user (uid 65534)"))
    Self.figure(
      "g", "uid 65534 client", "exit \(client65534.status), stderr \(client65534.stderr.prefix(120).debugDescription)")
    Self.figure("g", "uid 65534 raw request", raw.result?.stdout.trimmingCharacters(in: .newlines) ?? "hung")
    await Self.finish(agent, keeping: ada)
  }

  // MARK: (h) Bad requests

  @Test func oversizedAndMalformedRequestsAreRefusedAndTheNextClientIsServed() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let (ada, agent) = try await setup.adaAndAgent("agent-test-raw")
    let before = try await agent.requests()
    let marker = "raw-marker-\(UUID().uuidString)"
    func framed(_ text: String) -> [UInt8] { RawAgentSocket.frame(Array(text.utf8)) }
    let cases: [(String, [UInt8], Bool)] = [
      ("announces 200 KiB", [0, 3, 32, 0] + [UInt8](repeating: 65, count: 4096), true),
      ("announces 4 GiB", [255, 255, 255, 255] + Array(marker.utf8), true),
      ("128 KiB + 1 byte", RawAgentSocket.frame([UInt8](repeating: 10, count: 128 * 1024 + 1)), true),
      ("a field without '='", framed("tokenctl-agent/1 token\ngroup=g\n\(marker)\n"), true),
      ("version 2", framed("tokenctl-agent/2 status\n"), true),
      ("no final line break", framed("tokenctl-agent/1 status"), true),
      ("a bad % escape", framed("tokenctl-agent/1 token\naccount=%G1\(marker)\n"), true),
      (
        "a value that is not UTF-8",
        RawAgentSocket.frame(Array("tokenctl-agent/1 token\naccount=".utf8) + [0xff, 0xfe, 10]), true
      ),
      ("an upper-case key", framed("tokenctl-agent/1 token\nAccount=\(marker)\n"), true),
      ("not our protocol", framed("GET / HTTP/1.1\r\nHost: \(marker)\r\n\r\n"), true),
      ("a frame cut short", [0, 0, 1, 0] + Array("tokenctl-agent/1 status\n".utf8), true),
      ("a length cut short", [0, 0], true),
      ("nothing, then silence", [], false),
    ]
    for (label, bytes, halfClose) in cases {
      let started = Date()
      let reply = try RawAgentSocket.exchange(path: setup.socket, bytes: bytes, halfClose: halfClose)
      let seconds = Date().timeIntervalSince(started)
      let refused: Bool
      switch reply {
      case .frame(let header, let body):
        refused = header == "tokenctl-agent/1 refused" && !body.contains(marker)
      case .closed: refused = true
      case .silent: refused = false
      }
      #expect(refused, "\(label): \(reply)")
      #expect(await agent.process.exitStatus(within: 0) == nil, "\(label): the agent exited")
      Self.figure("h", label, "\(reply) in \(String(format: "%.3f", seconds)) s")
    }
    // A well-formed request of any kind but a token, from an application that is not
    // tokenctl's own (this test), is refused.
    let unknown = try RawAgentSocket.exchange(path: setup.socket, bytes: framed("tokenctl-agent/1 launch\n"))
    if case .frame(let header, let body) = unknown {
      #expect(header == "tokenctl-agent/1 error")
      #expect(body.contains("code=access-denied\n"), "\(body)")
    } else {
      Issue.record("an unknown kind: \(unknown)")
    }
    // A silent connection holds only its own thread: a client meanwhile is served at once.
    let silent = Task.detached { try RawAgentSocket.exchange(path: setup.socket, bytes: [], halfClose: false) }
    try await Task.sleep(for: .milliseconds(100))
    let next = try await BoundedRun.run(TestProcess.tokenctl, ["token", "ada"], environment: setup.viaAgent())
    #expect(next.result?.stdout == ada.tokens.accessToken + "\n")
    #expect(next.seconds < 3, "the client waited \(next.seconds) s behind a silent connection")
    Self.figure("h", "a client beside a silent connection", String(format: "%.3f s", next.seconds))
    _ = try await silent.value
    let counted = try await agent.requests() - before - 1
    #expect(
      counted == 1, "counted: the token (another application's request never reaches the service); got \(counted)")
    await Self.finish(agent, keeping: ada)
  }

  // MARK: (i) Socket activation

  @Test func anAgentStartedBySystemdSocketActivationServesAClient() async throws {
    let activate = try TestProcess.which("systemd-socket-activate")
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let ada = try await setup.seed(name: "ada", access: "agent-test-activated-\(UUID().uuidString)", expiresIn: 7200)
    try FileManager.default.createDirectory(
      atPath: setup.directory.path("agent"), withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    let environment = TestAgent.clientEnvironment(setup.environment(), socket: setup.socket)
    // systemd-socket-activate hands its child only the variables named with -E.
    let passed = [
      "PATH", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "DBUS_SESSION_BUS_ADDRESS",
      "TOKENCTL_AGENT_SOCKET", "GNOME_KEYRING_CONTROL",
    ].filter { environment[$0] != nil }.map { "-E\($0)" }
    let activator = try TestProcess(
      activate, ["-l", setup.socket] + passed + [TestProcess.tokenctl, "agent", "run"], environment: environment,
      stdout: setup.log, stderr: nil)
    defer { activator.terminate(signal: SIGKILL) }
    let deadline = Date().addingTimeInterval(60)
    while !FileManager.default.fileExists(atPath: setup.socket) && Date() < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    // The first connection starts the agent; the client waits for it, then is answered.
    let comparison = try await BoundedRun.run(
      "strace",
      ["-f", "-qq", "-e", "trace=connect", "-o", setup.directory.path("trace"), TestProcess.tokenctl, "token", "ada"],
      environment: environment)
    let connects = (try? String(contentsOfFile: setup.directory.path("trace"), encoding: .utf8)) ?? ""
    let usedBus = Self.busPath(environment["DBUS_SESSION_BUS_ADDRESS"]).map { connects.contains($0) } ?? true
    #expect(comparison.result?.stdout == ada.tokens.accessToken + "\n", "\(comparison.result?.stderr ?? "hung")")
    #expect(!usedBus, "the client read the keyring itself: the activated agent did not answer")
    let status = try await BoundedRun.run(
      TestProcess.tokenctl, ["agent", "status", "--json"], environment: environment)
    let document = try JSONSerialization.jsonObject(with: Data((status.result?.stdout ?? "").utf8)) as? [String: Any]
    #expect(document?["pid"] as? Int == Int(activator.pid), "the activator execs the agent in its place")
    #expect(document?["requests"] as? Int == 2)
    #expect(setup.logText.contains("listening on"), "\(setup.logText)")
    Self.figure("i", "first answer through an activated agent", String(format: "%.3f s", comparison.seconds))
    kill(activator.pid, SIGTERM)
    let exit = await activator.exitStatus(within: 10)
    #expect(exit == 0, "the activated agent on SIGTERM: \(exit.map(String.init) ?? "still running")")
    let leaked = [ada.tokens.accessToken, ada.tokens.refreshToken ?? ""].filter { setup.logText.contains($0) }
    #expect(leaked.isEmpty)
  }

  /// `agent start` daemonizes and returns once it answers, a second `start` says it runs,
  /// `status` exits 0 then, and `stop` ends it and waits; `status` then exits 1. Clients
  /// that ask for the direct path (TOKENCTL_AGENT=0, TOKENCTL_LOG=debug) never ask it.
  @Test func startStatusStopAndTheClientsThatOptOut() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let ada = try await setup.seed(name: "ada", access: "agent-test-daemon-\(UUID().uuidString)", expiresIn: 7200)
    let environment = setup.viaAgent()
    func tokenctl(_ arguments: String...) async throws -> BoundedRun.Finished {
      try #require(
        try await BoundedRun.run(TestProcess.tokenctl, arguments, environment: environment, seconds: 30).result)
    }
    let start = try await tokenctl("agent", "start")
    #expect(start.status == 0 && start.stdout.contains("started (pid"), "\(start)")
    let again = try await tokenctl("agent", "start")
    #expect(again.status == 0 && again.stdout.contains("already running"), "\(again)")
    let status = try await tokenctl("agent", "status", "--json")
    let document = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
    #expect(status.status == 0 && document?["running"] as? Bool == true, "\(status)")
    let pid = document?["pid"] as? Int ?? 0
    // A daemon outlives a failed test otherwise; after a clean stop this finds nobody (and
    // a pid reused meanwhile by another program is left alone).
    defer {
      let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
      if pid > 0, command.contains("tokenctl"), command.contains("agent") { kill(pid_t(pid), SIGTERM) }
    }
    Self.figure("daemon", "start", start.stdout.trimmingCharacters(in: .newlines))

    let requests = { try await self.requests(environment) }
    var before = try await requests()
    for (name, value) in [("TOKENCTL_AGENT", "0"), ("TOKENCTL_LOG", "debug")] {
      let optedOut = try await BoundedRun.run(
        TestProcess.tokenctl, ["token", "ada"], environment: environment.merging([name: value]) { $1 })
      #expect(optedOut.result?.stdout == ada.tokens.accessToken + "\n")
      let after = try await requests()
      #expect(after - before == 1, "\(name)=\(value): the agent counted \(after - before - 1) requests")
      before = after
    }
    let asked = try await BoundedRun.run(TestProcess.tokenctl, ["token", "ada"], environment: environment)
    #expect(asked.result?.stdout == ada.tokens.accessToken + "\n")
    #expect(try await requests() - before == 2, "a client without either asks the agent")

    let stop = try await tokenctl("agent", "stop")
    #expect(stop.status == 0 && stop.stdout.contains("stopped (pid \(pid))"), "\(stop)")
    #expect(kill(pid_t(pid), 0) != 0, "the agent is gone once stop returns")
    let gone = try await tokenctl("agent", "status")
    #expect(gone.status == 1 && gone.stdout.contains("not running"), "\(gone)")
    #expect(!FileManager.default.fileExists(atPath: setup.socket))
    let stoppedAgain = try await tokenctl("agent", "stop")
    #expect(stoppedAgain.status == 0 && stoppedAgain.stdout.contains("not running"), "\(stoppedAgain)")
  }

  private func requests(_ environment: [String: String]) async throws -> Int {
    let status = try await BoundedRun.run(
      TestProcess.tokenctl, ["agent", "status", "--json"], environment: environment, seconds: 20)
    let document = try JSONSerialization.jsonObject(with: Data((status.result?.stdout ?? "").utf8)) as? [String: Any]
    return try #require(document?["requests"] as? Int)
  }

  /// The server gone while the agent keeps a token fresh: the agent logs the failure and
  /// backs off, without a secret in the log or the status, and clients still get the token
  /// while it is valid. The token is overdue for its refresh ahead but valid for minutes, so
  /// that no pause of a busy machine outlasts it.
  @Test func aRefreshAheadThatFailsBacksOffAndKeepsServingTheValidToken() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let family = try await setup.stub.admin("/_admin/issue?expires_in=300", method: "POST")
    let account = Account(
      type: "gitlocal", id: "id-failing", name: "failing", group: setup.group, createdAt: Date(), updatedAt: Date(),
      issuer: setup.stub.baseURL, clientID: "git")
    // Issued 20 minutes ago, expiring in 5: due for its refresh ahead (at 75 %) since 1¼ min.
    let seeded = TokenSet(
      accessToken: try #require(family["access_token"] as? String), refreshToken: family["refresh_token"] as? String,
      expiresAt: Date().addingTimeInterval(300), issuedAt: Date().addingTimeInterval(-1200))
    try setup.store().save(account, tokens: seeded)
    // The server goes away before anyone asks.
    let info =
      try JSONSerialization.jsonObject(
        with: Data(contentsOf: setup.stub.directory.appendingPathComponent("stub.json"))) as? [String: Any]
    kill(pid_t(try #require(info?["pid"] as? Int)), SIGTERM)
    let agent = try await setup.startAgent()
    let first = try await BoundedRun.run(TestProcess.tokenctl, ["token", "failing"], environment: setup.viaAgent())
    #expect(first.result?.stdout == seeded.accessToken + "\n", "\(first.result?.stderr ?? "hung")")
    let deadline = Date().addingTimeInterval(120)
    while !agent.log.contains("could not refresh ahead") && Date() < deadline {
      try await Task.sleep(for: .milliseconds(100))
    }
    #expect(agent.log.contains("could not refresh ahead"), "\(agent.log)")
    let during = try await BoundedRun.run(TestProcess.tokenctl, ["token", "failing"], environment: setup.viaAgent())
    let stored = try #require(try setup.store().load(account.key))
    #expect(during.result?.status == 0, "the token is still valid: \(during.result?.stderr ?? "hung")")
    #expect(during.result?.stdout == stored.tokens.accessToken + "\n")
    let status = try await agent.status()
    let tracked = (status["accounts"] as? [[String: Any]])?.first
    #expect(tracked?["last_error"] != nil, "\(status)")
    Self.figure(
      "ahead-fails", "log", agent.log.split(separator: "\n").filter { $0.contains("ahead") }.joined(separator: " | "))
    Self.figure("ahead-fails", "status last_error", tracked?["last_error"] ?? "-")
    await Self.finish(
      agent, secrets: [seeded.accessToken, seeded.refreshToken ?? "", stored.tokens.refreshToken ?? ""])
  }

  // MARK: (j) No secret in the log or the status

  @Test func theAgentsLogAndStatusNeverShowATokenOrRefreshToken() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let expired = try await setup.seed(name: "ada", access: "expired-access-token-\(UUID().uuidString)", expiresIn: -60)
    let agent = try await setup.startAgent()
    var secrets = [expired.tokens.accessToken, expired.tokens.refreshToken ?? ""]
    let token = try await BoundedRun.run(TestProcess.tokenctl, ["token", "ada"], environment: setup.viaAgent())
    #expect(token.result?.status == 0, "\(token.result?.stderr ?? "hung")")
    let git = try await BoundedRun.run(
      GitCredentialTests.helper, ["get"], environment: setup.viaAgent(), stdin: "protocol=http\nhost=127.0.0.1\n\n")
    #expect(git.result?.status == 0)
    // A refresh the server refuses: its error goes to the log and the status.
    let refused = try await setup.seed(name: "refused", access: "refused-access-\(UUID().uuidString)", expiresIn: -60)
    _ = try await setup.stub.admin("/_admin/reset", method: "POST")
    let failing = try await BoundedRun.run(TestProcess.tokenctl, ["token", "refused"], environment: setup.viaAgent())
    #expect(failing.result?.status != 0)
    secrets += [refused.tokens.accessToken, refused.tokens.refreshToken ?? ""]
    for name in ["ada", "refused"] {
      if let stored = try setup.store().loadAll(AccountQuery(type: "gitlocal")).first(where: { $0.account.name == name }
      ) {
        secrets += [stored.tokens.accessToken, stored.tokens.refreshToken ?? ""]
      }
    }
    secrets.append(token.result?.stdout.trimmingCharacters(in: .newlines) ?? "")
    let status = try await agent.statusText()
    Self.figure("j", "secrets looked for", secrets.filter { $0.count >= 8 }.count)
    Self.figure("j", "log lines", agent.log.split(separator: "\n").count)
    #expect(!status.isEmpty)
    await Self.finish(agent, secrets: secrets)
  }

  // MARK: (k) Refresh ahead

  /// A smoke check of the refresh ahead in a real agent, against a real server: a token
  /// asked for once is replaced before it expires, with no client asking. When it is due,
  /// the backoff and `Retry-After` are the unit tests' (TokenAgentTests/RefreshAheadTests),
  /// on the injected clock; here nothing depends on how fast the machine is: the seeded
  /// token lives 6 s, its replacements an hour.
  @Test func aTokenAskedForOnceIsKeptFreshAheadOfExpiry() async throws {
    let setup = try await Setup(stubArguments: ["--access-token-seconds", "3600"])
    defer { setup.cleanUp() }
    let family = try await setup.stub.admin("/_admin/issue?expires_in=6", method: "POST")
    let account = Account(
      type: "gitlocal", id: "id-ahead", name: "ahead", group: setup.group, createdAt: Date(), updatedAt: Date(),
      issuer: setup.stub.baseURL, clientID: "git")
    let seeded = TokenSet(
      accessToken: try #require(family["access_token"] as? String), refreshToken: family["refresh_token"] as? String,
      expiresAt: Date().addingTimeInterval(6), issuedAt: Date())
    try setup.store().save(account, tokens: seeded)
    let agent = try await setup.startAgent()
    let before = try await setup.stats()
    let first = try await BoundedRun.run(TestProcess.tokenctl, ["token", "ahead"], environment: setup.viaAgent())
    #expect(first.result?.stdout == seeded.accessToken + "\n", "still valid: answered from memory")
    let requestsAfterFirst = try await agent.requests()
    // Due at 4.5 s; the wait's bound is only there to end a run whose agent never refreshes.
    let deadline = Date().addingTimeInterval(300)
    var middle = try await setup.stats()
    while Setup.refreshGrants(middle) == Setup.refreshGrants(before), Date() < deadline {
      try await Task.sleep(for: .milliseconds(200))
      middle = try await setup.stats()
    }
    let requestsBeforeLast = try await agent.requests()
    let last = try await BoundedRun.run(TestProcess.tokenctl, ["token", "ahead"], environment: setup.viaAgent())
    let after = try await setup.stats()
    let stored = try #require(try setup.store().load(account.key))
    let printed = last.result?.stdout.trimmingCharacters(in: .newlines) ?? ""

    let ahead = Setup.refreshGrants(middle) - Setup.refreshGrants(before)
    #expect(ahead == 1, "one refresh ahead, with no client asking")
    #expect(requestsBeforeLast - requestsAfterFirst == 1, "no client asked meanwhile, only the status reading")
    #expect(printed == stored.tokens.accessToken)
    #expect(printed != seeded.accessToken)
    await #expect(try setup.stubAccepts(accessToken: printed), "the printed token is valid at the server")
    #expect(Setup.refreshGrants(after) == Setup.refreshGrants(middle), "the last call did not refresh")
    Self.figure("k", "refreshes ahead", ahead)
    Self.figure("k", "token after the refresh ahead", String(format: "%.3f s", last.seconds))
    await Self.finish(
      agent, secrets: [seeded.accessToken, seeded.refreshToken ?? "", printed, stored.tokens.refreshToken ?? ""])
  }
}

extension AgentIntegrationTests.Setup {
  var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
}

/// A client of a wedged agent, and of a busy one: the kernel queues
/// connections for a stopped agent, so only the answer's silence tells; a busy agent says
/// `working` first, and its client waits for the answer.
extension AgentIntegrationTests {
  /// Through the front end as well: it waits for the first frame, and the full program it
  /// hands over to does not ask the stopped agent again (a second wait).
  @Test(arguments: Clients.allCases)
  func aStoppedAgentCostsAClientSecondsThenTheDirectPathAnswers(_ clients: Clients) async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let links = try TemporaryDirectory()
    let (tokenctl, _) = try clients.executables(in: links)
    let (ada, agent) = try await setup.adaAndAgent("agent-test-wedged", expiresIn: 3600)
    let first = try await BoundedRun.run(tokenctl, ["token", "ada"], environment: setup.viaAgent())
    #expect(first.result?.stdout == ada.tokens.accessToken + "\n")
    kill(agent.process.pid, SIGSTOP)
    // Before: the client waited 75 s for the stopped agent's answer.
    let trace = try TemporaryDirectory()
    let wedged = try await BoundedRun.run(
      "strace", ["-f", "-qq", "-e", "trace=connect", "-o", trace.path("trace"), tokenctl, "token", "ada"],
      environment: setup.viaAgent(), seconds: 30)
    kill(agent.process.pid, SIGCONT)
    #expect(wedged.result?.status == 0, "\(wedged.result?.stderr ?? "still waiting after 30 s")")
    #expect(wedged.result?.stdout == ada.tokens.accessToken + "\n")
    let connects = ((try? String(contentsOfFile: trace.path("trace"), encoding: .utf8)) ?? "")
      .split(separator: "\n").filter { $0.contains(setup.socket) }
    #expect(connects.count == 1, "the stopped agent was asked \(connects.count) times")
    await Self.finish(agent, secrets: [ada.tokens.accessToken])
  }

  @Test func anAnswerThatWaitsForARefreshIsAnnouncedAsWorking() async throws {
    // Every answer of the token endpoint takes 1.5 s: the agent's refresh is slow.
    let setup = try await Setup(stubArguments: ["--answer-delay", "1.5"])
    defer { setup.cleanUp() }
    try await setup.seed(name: "ada", expiresIn: -10)
    try setup.allowTheTestProcess()
    let agent = try await setup.startAgent()
    var request = "tokenctl-agent/1 token\ngroup=\(setup.group)\naccount=ada\nprogress=1\n"
    for (name, value) in setup.viaAgent().sorted(by: { $0.key < $1.key })
    where AgentMessage.contextVariables.contains(name) {
      request += "\(AgentMessage.contextField(name))=\(value)\n"
    }
    let frames = try RawAgentSocket.frames(path: setup.socket, bytes: RawAgentSocket.frame(Array(request.utf8)))
    let stored = try #require(try setup.store().load(AccountKey(type: "gitlocal", id: "id-ada")))
    // `working` again every second while the refresh takes its 1.5 s and more.
    let working = frames.dropLast()
    #expect(!working.isEmpty, "\(frames)")
    #expect(working.allSatisfy { $0 == .frame(header: "tokenctl-agent/1 working", body: "") }, "\(frames)")
    #expect(
      frames.last == .frame(header: "tokenctl-agent/1 token", body: "access-token=\(stored.tokens.accessToken)\n"),
      "\(frames)")
    // Without `progress` (a client that would not understand `working`): as slow, but the
    // answer alone.
    try await setup.seed(name: "bob", expiresIn: -10)
    let plain = request.replacingOccurrences(of: "account=ada\nprogress=1\n", with: "account=bob\n")
    let again = try RawAgentSocket.frames(path: setup.socket, bytes: RawAgentSocket.frame(Array(plain.utf8)))
    #expect(again.count == 1 && again.first.map { "\($0)" }?.contains("tokenctl-agent/1 token") == true, "\(again)")
    await Self.finish(agent, secrets: [stored.tokens.accessToken])
  }
}

/// A failing server, and many refreshes at once.
extension AgentIntegrationTests {
  /// The server answers 503 with `Retry-After`: the agent's clients share one pause
  /// instead of each sending its own requests (before: three per client call, the core's
  /// retries included).
  @Test func clientsOfAFailingServerShareOnePause() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let types = setup.home.appendingPathComponent("config/tokenctl/types")
    try """
    id = "gitlocal"
    display_name = "Git on this machine"
    client_id = "git"

    [endpoints]
    issuer = "\(setup.stub.baseURL)"
    authorization = "\(setup.stub.baseURL)/authorize"
    token = "\(setup.stub.baseURL)/fault/503-retry-after/token"
    """.write(to: types.appendingPathComponent("gitlocal.toml"), atomically: true, encoding: .utf8)
    try await setup.seed(name: "ada", expiresIn: -10)
    let agent = try await setup.startAgent()
    var statuses: [Int32?] = []
    for _ in 0..<20 {
      let run = try await BoundedRun.run(TestProcess.tokenctl, ["token", "ada"], environment: setup.viaAgent())
      statuses.append(run.result?.status)
    }
    let stats = try await setup.stub.admin("/_admin/stats")
    let asked = (stats["requests"] as? [String: Int])?["/fault/503-retry-after/token"] ?? 0
    #expect(Set(statuses).count == 1 && statuses.first != 0, "\(statuses)")
    #expect(asked > 0 && asked < 20, "the server was asked \(asked) times for 20 client calls")
    await Self.finish(agent, secrets: [])
  }

  /// Eight accounts whose tokens have expired, asked for at once while the server takes a
  /// second to answer: the agent runs a few refreshes at a time, not eight children.
  @Test func manyRefreshesAtOnceRunAFewAtATime() async throws {
    let setup = try await Setup(stubArguments: ["--answer-delay", "1"])
    defer { setup.cleanUp() }
    let names = (1...8).map { "user\($0)" }
    for name in names { try await setup.seed(name: name, expiresIn: -10) }
    let agent = try await setup.startAgent()
    let children = { () -> Int in
      let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(agent.process.pid)/task")) ?? []
      return tasks.reduce(0) { count, task in
        let list = (try? String(contentsOfFile: "/proc/\(agent.process.pid)/task/\(task)/children", encoding: .utf8))
        return count + (list ?? "").split(separator: " ").count
      }
    }
    let clients = try names.map { name in
      try TestProcess(
        TestProcess.tokenctl, ["token", name], environment: setup.viaAgent(),
        stdout: setup.directory.path("\(name).out"), stderr: setup.directory.path("\(name).err"))
    }
    var most = 0
    var statuses: [Int: Int32] = [:]
    let deadline = Date().addingTimeInterval(120)
    while statuses.count < clients.count, Date() < deadline {
      most = max(most, children())
      try await Task.sleep(for: .milliseconds(20))
      for (index, client) in clients.enumerated() where statuses[index] == nil {
        statuses[index] = await client.exitStatus(within: 0)
      }
    }
    for (index, name) in names.enumerated() {
      let error = (try? String(contentsOfFile: setup.directory.path("\(name).err"), encoding: .utf8)) ?? ""
      #expect(statuses[index] == 0, "\(name): \(error)")
    }
    #expect(most > 0 && most <= 4, "\(most) refresh children at once")
    await Self.finish(agent, secrets: [])
  }
}

extension AgentIntegrationTests {
  /// Two `agent start` at once: one agent runs, and both say which,
  /// with its pid; before, the start whose agent lost the race reported its dead pid.
  @Test func twoStartsAtOnceBothNameTheAgentThatRuns() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let environment = setup.viaAgent()
    async let first = BoundedRun.run(TestProcess.tokenctl, ["agent", "start"], environment: environment, seconds: 30)
    async let second = BoundedRun.run(TestProcess.tokenctl, ["agent", "start"], environment: environment, seconds: 30)
    let starts = try await [first, second].map { try #require($0.result) }
    let status = try #require(
      try await BoundedRun.run(TestProcess.tokenctl, ["agent", "status", "--json"], environment: environment).result)
    let document = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
    let pid = try #require(document?["pid"] as? Int)
    defer { kill(pid_t(pid), SIGTERM) }
    for start in starts {
      #expect(start.status == 0, "\(start)")
      #expect(start.stdout.contains("(pid \(pid),"), "\(start.stdout) names another agent than pid \(pid)")
    }
    #expect(starts.filter { $0.stdout.contains("started (pid") }.count <= 1, "\(starts.map(\.stdout))")
  }
}

extension AgentIntegrationTests {
  /// An account the server declared in need of a new sign-in gets exit 5 and no token, on
  /// both paths, whatever its stored token's expiry says.
  @Test func anAccountThatNeedsSignInGetsNoTokenOnEitherPath() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let lapsed = try await setup.seed(
      name: "lapsed", access: "agent-test-lapsed-\(UUID().uuidString)", expiresIn: 3600, needsSignIn: true)
    let agent = try await setup.startAgent()
    for environment in [setup.direct(), setup.viaAgent()] {
      let run = try #require(
        try await BoundedRun.run(TestProcess.tokenctl, ["token", "lapsed"], environment: environment).result)
      #expect(run.status == 5, "\(run)")
      #expect(run.stdout.isEmpty)
      #expect(run.stderr.contains("tokenctl login"), "\(run.stderr)")
    }
    await Self.finish(agent, secrets: [lapsed.tokens.accessToken])
  }
}
