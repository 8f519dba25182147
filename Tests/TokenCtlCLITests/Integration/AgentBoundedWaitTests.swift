import AgentFrontEnd
import AgentProtocol
import AgentWire
import Foundation
import Synchronization
import TestSupport
import Testing
import TokenCtlRuntime
import TokenKit

/// No client waits without bound for an agent that does not answer: one stopped with more
/// clients than its listen queue holds, one that sends half a frame, or says `working` and
/// then nothing, one stopped in the middle of a refresh. Each client is done in seconds,
/// where an unbounded one would wait 75 s, or in `connect` until the agent ran again; the
/// bounds below are generous, for a busy machine, and still far below those waits.
extension AgentIntegrationTests {
  /// More clients than the agent's listen queue holds (128): once it is full, a blocking
  /// `connect` waits until the agent runs again. Clients in this process, and then the
  /// front end as users run it, while the queue is full.
  @Test func aStoppedAgentsFullListenQueueCostsNoClientMoreThanSeconds() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let (ada, agent) = try await setup.adaAndAgent("agent-test-queue", expiresIn: 3600)
    kill(agent.process.pid, SIGSTOP)
    let asker = try #require(AgentAsk(environment: setup.viaAgent(), socket: setup.socket))
    let clients = 160
    let replies = Mutex<[(seconds: Double, answered: Bool)]>([])
    let done = DispatchGroup()
    for _ in 0..<clients {
      done.enter()
      Thread.detachNewThread { [group = setup.group] in
        let started = Date()
        let reply = asker.ask(AgentMessage.Request.token, group: group, [.init("account", "ada")])
        replies.withLock { $0.append((Date().timeIntervalSince(started), reply.answer != nil)) }
        done.leave()
      }
    }
    // Let the threads fill the queue, then ask as a user would.
    try await Task.sleep(for: .milliseconds(500))
    let links = try TemporaryDirectory()
    let (frontEnd, _) = try AgentIntegrationTests.Clients.frontEnd.executables(in: links)
    let user = try await BoundedRun.run(frontEnd, ["token", "ada"], environment: setup.viaAgent(), seconds: 20)
    let allDone = try await onOwnThread { done.wait(timeout: .now() + 20) == .success }
    let waiting = clients - replies.withLock { $0.count }
    kill(agent.process.pid, SIGCONT)
    if !allDone { _ = try await onOwnThread { done.wait(timeout: .now() + 60) } }

    let finished = replies.withLock { $0 }
    let slowest = finished.map(\.seconds).max() ?? 0
    #expect(allDone, "\(waiting) of \(clients) clients still waited after 20 s")
    #expect(slowest < 10, "the slowest client took \(slowest) s")
    #expect(finished.allSatisfy { !$0.answered }, "a stopped agent answered")
    #expect(user.result?.status == 0, "\(user.result?.stderr ?? "still waiting after 20 s")")
    #expect(user.result?.stdout == ada.tokens.accessToken + "\n", "the direct path answered")
    #expect(user.seconds < 10, "the front end took \(user.seconds) s")
    Self.figure("queue", "slowest of \(clients) clients", String(format: "%.2f s", slowest))
    Self.figure("queue", "the front end with the queue full", String(format: "%.2f s", user.seconds))
    Self.recordWait(.stopped, "\(clients) clients, its listen queue full", seconds: slowest, inProcess: true)
    Self.recordWait(.stopped, "the front end, the queue full", seconds: user.seconds, inProcess: false)
    await Self.finish(agent, keeping: ada)
  }

  /// What a fake agent sends before it goes silent, keeping the connection open.
  enum SilentAgent: String, CaseIterable, Sendable {
    case halfAFrame = "half a frame"
    case workingThenNothing = "working, then nothing"

    var bytes: [UInt8] {
      switch self {
      case .halfAFrame:
        let frame = RawAgentSocket.frame(Array("tokenctl-agent/1 token\naccess-token=not-a-real-token\n".utf8))
        return Array(frame.prefix(frame.count / 2))
      case .workingThenNothing: return RawAgentSocket.frame(Array("tokenctl-agent/1 working\n".utf8))
      }
    }
  }

  struct SilentCase: Sendable, CustomStringConvertible {
    var agent: SilentAgent
    var clients: Clients
    var description: String { "\(agent.rawValue), \(clients.rawValue)" }
  }

  static let silentCases = SilentAgent.allCases.flatMap { agent in
    Clients.allCases.map { SilentCase(agent: agent, clients: $0) }
  }

  /// Half a frame is a first frame that did not come: the direct path answers. `working`
  /// and then nothing is an agent that went silent at work, where it may hold the
  /// account's refresh lock: the client says so rather than wait for the lock.
  @Test(arguments: silentCases)
  func anAgentThatGoesSilentMidFrameOrAfterWorkingCostsSeconds(_ test: SilentCase) async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let ada = try await setup.seed(name: "ada", access: "agent-test-silent-\(UUID().uuidString)", expiresIn: 3600)
    let fake = try FakeAgent(path: setup.directory.path("fake.sock"), reply: test.agent.bytes)
    defer { fake.stop() }
    let links = try TemporaryDirectory()
    let (tokenctl, _) = try test.clients.executables(in: links)
    var environment = setup.viaAgent()
    environment["TOKENCTL_AGENT_SOCKET"] = fake.path
    // Before: 75 s, the whole answer's wait.
    let outcome = try await BoundedRun.run(tokenctl, ["token", "ada"], environment: environment, seconds: 40)
    let result = try #require(outcome.result, "still waiting after 40 s")
    #expect(outcome.seconds < 15, "took \(outcome.seconds) s")
    #expect(fake.connections == 1, "the silent agent was asked \(fake.connections) times")
    Self.recordWait(
      test.agent == .halfAFrame ? .stopped : .silentMidRefresh, test.description, seconds: outcome.seconds,
      inProcess: false)
    switch test.agent {
    case .halfAFrame:
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdout == ada.tokens.accessToken + "\n")
    case .workingThenNothing:
      #expect(result.status == 19, "\(result.stderr)")
      #expect(result.stdout.isEmpty)
      #expect(result.stderr.contains("said it was refreshing, then nothing"), "\(result.stderr)")
      #expect(result.stderr.contains("kill -CONT \(getpid())"), "\(result.stderr)")
    }
  }

  /// A real agent stopped while its refresh is held between the server's answer and the
  /// keyring (`TOKENCTL_TEST_PAUSE`): before, its client waited 75 s for the answer, then
  /// 65 s for the account's refresh lock, and failed. Now the agent's `working`, said
  /// every second, stops, and the client says what happened within seconds.
  @Test(arguments: Clients.allCases)
  func anAgentStoppedInTheMiddleOfARefreshIsReportedInSeconds(_ clients: Clients) async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let ada = try await setup.seed(name: "ada", expiresIn: -10)
    let pause = try TemporaryDirectory()
    var environment = setup.environment()
    environment[RefreshTestPause.variable] = pause.url.path
    let agent = try await TestAgent.start(environment: environment, socket: setup.socket, log: setup.log)
    let links = try TemporaryDirectory()
    let (tokenctl, _) = try clients.executables(in: links)
    let client = setup.viaAgent()
    let asking = Task { try await BoundedRun.run(tokenctl, ["token", "ada"], environment: client, seconds: 60) }
    _ = try await GrantJournalTests.awaitFile(pause.path("paused"), seconds: 60)
    // Past the agent's first `working`, and a few more.
    try await Task.sleep(for: .seconds(2))
    kill(agent.process.pid, SIGSTOP)
    let stopped = Date()
    let outcome = try await asking.value
    let waited = Date().timeIntervalSince(stopped)
    _ = FileManager.default.createFile(atPath: pause.path("resume"), contents: nil)
    kill(agent.process.pid, SIGCONT)

    let result = try #require(outcome.result, "still waiting after 60 s")
    #expect(waited < 15, "the client waited \(waited) s after the agent stopped")
    #expect(result.status == 19, "\(result.stderr)")
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("kill -CONT \(agent.process.pid)"), "\(result.stderr)")
    Self.figure("stopped-mid-refresh", clients.rawValue, String(format: "%.2f s after the stop", waited))
    Self.recordWait(.silentMidRefresh, "SIGSTOP mid-refresh, \(clients.rawValue)", seconds: waited, inProcess: true)
    try await setup.waitForLock(ada.account.key)
    let stored = try #require(try setup.store().load(ada.account.key))
    await Self.finish(agent, secrets: [stored.tokens.accessToken, stored.tokens.refreshToken ?? ""])
  }
}

extension AgentIntegrationTests {
  /// The rows of `make hardening`'s table these waits fill (Tests/Hardening/report.py).
  enum AgentWait: String {
    /// No client waits past its first frame's 3 s for a stopped agent.
    case stopped = "agent-stopped"
    /// A client of an agent silent mid-refresh says so after 5 s without a word.
    case silentMidRefresh = "agent-silent"

    /// The bound a client keeps to: the first frame's, or the silence's after `working`.
    var seconds: Double {
      Double(self == .stopped ? AgentConnection.firstFrameMilliseconds : AgentConnection.silenceMilliseconds) / 1000
    }
  }

  /// Records how long a client waited (`inProcess`: measured inside the client, else around
  /// a process, whose start and direct path count too: up to two seconds more on a loaded
  /// machine), and whether that kept to the row's bound.
  static func recordWait(_ row: AgentWait, _ what: String, seconds: Double, inProcess: Bool) {
    let limit = row.seconds + (inProcess ? 0.5 : 2)
    HardeningSummary.record(row.rawValue, what, String(format: "%.2f", seconds), seconds <= limit ? "pass" : "fail")
  }
}

/// A socket that takes connections as the agent would, reads what the client sends, writes
/// `reply`, and then says nothing more, keeping each connection open until `stop()`.
final class FakeAgent: Sendable {
  let path: String
  private let listener: Int32
  private let held = Mutex<[Int32]>([])
  private let requests = Mutex<[[UInt8]]>([])

  init(path: String, reply: [UInt8]) throws {
    self.path = path
    listener = try RawAgentSocket.listen(path)
    Thread.detachNewThread { [self] in
      while true {
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else {
          if errno == EINTR { continue }
          return
        }
        requests.withLock { $0.append(Self.request(fd)) }
        _ = reply.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        held.withLock { $0.append(fd) }
      }
    }
  }

  /// How many connections it took.
  var connections: Int { held.withLock { $0.count } }

  /// The bytes of each request it read, in order.
  var received: [[UInt8]] { requests.withLock { $0 } }

  /// One request's frame, as far as it came within a second.
  private static func request(_ fd: Int32) -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    let deadline = Date().addingTimeInterval(1)
    while Date() < deadline {
      if bytes.count >= 4, bytes.count >= 4 + bytes.prefix(4).reduce(0, { $0 << 8 | Int($1) }) { break }
      var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&entry, 1, 100) >= 0 else { break }
      let count = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
      if count > 0 { bytes += chunk[..<count] } else if count == 0 { break }
    }
    return bytes
  }

  func stop() {
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
    held.withLock { fds in
      for fd in fds { close(fd) }
      fds = []
    }
    unlink(path)
  }
}

extension RawAgentSocket {
  /// A listening socket at `path`, as the agent's.
  static func listen(_ path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
      let bytes = Array(path.utf8)
      buffer.copyBytes(from: bytes)
      buffer[bytes.count] = 0
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0, Glibc.listen(fd, 16) == 0 else {
      close(fd)
      throw TestFailure("bind or listen \(path): \(String(cString: strerror(errno)))")
    }
    return fd
  }
}

/// What a client tells the agent of git's request: only what the agent reads to answer
/// (AgentFrontEnd's `CredentialInput`). Whatever listens on `TOKENCTL_AGENT_SOCKET` is only
/// known to run as this user.
extension AgentIntegrationTests {
  @Test(arguments: Clients.allCases)
  func gitsPasswordAndChallengesNeverReachTheAgent(_ clients: Clients) async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let direct = RawAgentSocket.frame(Array("tokenctl-agent/1 direct\nreason=test\n".utf8))
    let fake = try FakeAgent(path: setup.directory.path("fake.sock"), reply: direct)
    defer { fake.stop() }
    let links = try TemporaryDirectory()
    let (_, helper) = try clients.executables(in: links)
    var environment = setup.viaAgent()
    environment["TOKENCTL_AGENT_SOCKET"] = fake.path
    let secrets = ["git-password-\(UUID().uuidString)", "challenge-\(UUID().uuidString)", "state-\(UUID().uuidString)"]
    let request =
      "capability[]=authtype\nprotocol=http\nhost=127.0.0.1\nusername=ada\npassword=\(secrets[0])\n"
      + "wwwauth[]=Bearer realm=\"\(secrets[1])\"\nstate[]=other:\(secrets[2])\n\n"
    let outcome = try await BoundedRun.run(helper, ["get"], environment: environment, stdin: request, seconds: 60)
    #expect(outcome.result != nil, "still running after 60 s")
    let received = fake.received.map { String(decoding: $0, as: UTF8.self) }
    #expect(received.count == 1, "\(received.count) requests")
    let sent = received.first ?? ""
    #expect(sent.contains("host=127.0.0.1") && sent.contains("capability[]=authtype"), "\(sent.debugDescription)")
    let leaked = secrets.filter { sent.contains($0) }
    #expect(leaked.isEmpty, "the agent was sent \(leaked.count) of git's secrets: \(sent.debugDescription)")
  }
}

/// A keyring that does not answer (gnome-keyring-daemon stopped with SIGSTOP), on a session
/// bus of the test's own, as tokenctl-agent(1) says it costs a client of the agent.
extension AgentIntegrationTests {
  /// An agent that waits for the keyring is at no work and says nothing: its client takes
  /// the direct path once its first frame's 3 s are up, and meets the keyring there as it
  /// would without an agent.
  @Test func aStoppedKeyringCostsAClientOfTheAgentTheDirectPathsWaitAndSeconds() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let keyring = try await StoppableKeyring(setup)
    defer { keyring.session.stop() }
    let agent = try await keyring.startAgent()
    kill(keyring.pid, SIGSTOP)
    async let withoutAgent = BoundedRun.run(
      TestProcess.tokenctl, ["token", "ada"], environment: keyring.direct, seconds: 200)
    async let throughAgent = BoundedRun.run(
      TestProcess.tokenctl, ["token", "ada"], environment: agent.environment, seconds: 200)
    let (plain, asked) = try await (withoutAgent, throughAgent)
    kill(keyring.pid, SIGCONT)
    #expect(asked.result != nil, "still waiting after 200 s")
    #expect(asked.result?.status == 8, "\(asked.result?.stderr ?? "")")
    #expect(asked.result?.status == plain.result?.status)
    #expect(
      asked.seconds < plain.seconds + 10,
      "through the agent \(asked.seconds) s, the direct path alone \(plain.seconds) s")
    Self.figure("stopped-keyring", "through the agent", String(format: "%.1f s", asked.seconds))
    Self.figure("stopped-keyring", "the direct path", String(format: "%.1f s", plain.seconds))
    await agent.stop()
  }

  /// A refresh that meets the stopped keyring waits for it (its limit, D-Bus's 25 s), and
  /// the client then tries the keyring itself: twice that limit, and no more.
  @Test func aKeyringStoppedUnderARefreshCostsAClientTwiceTheKeyringsLimit() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let keyring = try await StoppableKeyring(setup)
    defer { keyring.session.stop() }
    try await keyring.seedExpiredAda()
    let agent = try await keyring.startAgent()
    let first = try await BoundedRun.run(TestProcess.tokenctl, ["token", "ada"], environment: agent.environment)
    try #require(first.result?.status == 0, "\(first.result?.stderr ?? "still waiting")")
    kill(keyring.pid, SIGSTOP)
    // More validity than the token has: the agent refreshes, in a child that meets the keyring.
    let asked = try await BoundedRun.run(
      TestProcess.tokenctl, ["token", "ada", "--min-valid", "86400"], environment: agent.environment, seconds: 200)
    kill(keyring.pid, SIGCONT)
    #expect(asked.result?.status == 8, "\(asked.result?.stderr ?? "still waiting after 200 s")")
    #expect(asked.seconds < 75, "took \(asked.seconds) s")
    Self.figure("stopped-keyring-refresh", "through the agent", String(format: "%.1f s", asked.seconds))
    await agent.stop()
  }

  /// A private session with its own gnome-keyring-daemon, and `setup`'s account type.
  struct StoppableKeyring {
    let setup: Setup
    let session: PrivateSession
    /// The clients' environment (with the agent's socket once one runs).
    let environment: [String: String]
    /// gnome-keyring-daemon's pid.
    let pid: pid_t

    init(_ setup: Setup) async throws {
      self.setup = setup
      session = try await PrivateSession.started(.unlockedKeyring, ownAgent: false)
      var environment = session.environment
      for name in ["TOKENCTL_LOG", "TOKENCTL_ACCOUNT", "TOKENCTL_AGENT_SOCKET", "TOKENCTL_AGENT"] {
        environment[name] = nil
      }
      environment["XDG_CONFIG_HOME"] = setup.home.appendingPathComponent("config").path
      environment["TOKENCTL_GROUP"] = setup.group
      self.environment = environment
      let session = session
      let owner = try #require(try await onOwnThread { try session.secretServiceOwner() })
      let answer = try await session.run(
        "gdbus",
        [
          "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
          "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", owner,
        ])
      // `(uint32 1234,)`
      pid = try #require(pid_t(answer.stdout.split(separator: " ").last?.prefix(while: \.isNumber) ?? ""))
    }

    var direct: [String: String] {
      var direct = environment
      direct["TOKENCTL_AGENT"] = "0"
      return direct
    }

    func startAgent() async throws -> TestAgent {
      let folder = session.directory.appendingPathComponent("agent")
      try FileManager.default.createDirectory(
        at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      return try await TestAgent.start(
        environment: environment, socket: folder.appendingPathComponent("agent.sock").path,
        log: session.directory.appendingPathComponent("agent.log").path)
    }

    /// ada of the loopback type, with an expired access token and a refresh token the stub
    /// issued, stored as tokenctl stores it (tokenctl-keyring(5)).
    func seedExpiredAda() async throws {
      let family = try await setup.stub.admin("/_admin/issue", method: "POST")
      let refresh = try #require(family["refresh_token"] as? String)
      let now = Int(Date().timeIntervalSince1970)
      let secret: [String: Any] = [
        "version": 1, "access_token": "expired-\(UUID().uuidString)", "refresh_token": refresh,
        "token_type": "Bearer", "expires_at": now - 10, "issued_at": now - 3600,
      ]
      let text = String(decoding: try JSONSerialization.data(withJSONObject: secret), as: UTF8.self)
      let attributes = [
        "xdg:schema", "org.tokenctl.Account", "type", "gitlocal", "account", "id-ada", "group", setup.group, "name",
        "ada", "scopes", "", "created", "\(now)", "updated", "\(now)", "expires", "\(now - 10)", "refreshable",
        "true", "client-id", "git", "state", "ok", "issuer", setup.stub.baseURL,
      ]
      let stored = try await session.run(
        "secret-tool", ["store", "--label", "tokenctl: gitlocal — ada"] + attributes, stdin: text)
      try #require(stored.status == 0, "\(stored.stderr)")
    }
  }
}
