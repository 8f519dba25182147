import Foundation
import TestSupport
import Testing
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// What the remote side of a forwarding runs, over the same sshd and second user as
/// ``ForwardingTests`` (one suite, so that one sshd at a time holds its port): real git
/// cloning over HTTP through the forwarded agent, `doctor` there, and many idle
/// connections on the host's socket.
extension ForwardingTests {
  /// An agent with ada, the sshd and the `tokenctl ssh` that reaches the remote user.
  struct Forwarded {
    let setup: AgentIntegrationTests.Setup
    let ada: StoredAccount
    let agent: TestAgent
    let server: SSHServer
    var destination: String { "\(ForwardingTests.remoteUser)@127.0.0.1" }

    /// `prepare` runs before the agent starts (it may write the agent's config).
    static func start(prepare: (AgentIntegrationTests.Setup) async throws -> Void = { _ in }) async throws -> Forwarded
    {
      let setup = try await AgentIntegrationTests.Setup()
      try await prepare(setup)
      let ada = try await setup.seed(name: "ada", expiresIn: 7200)
      let agent = try await setup.startAgent()
      let server = try await SSHServer(directory: setup.directory)
      return Forwarded(setup: setup, ada: ada, agent: agent, server: server)
    }

    /// `remote` run over `tokenctl ssh`, the remote side's PATH starting at the front end.
    func overSSH(_ remote: String) async throws -> ProcessResult {
      try await TestProcess.run(
        TestProcess.tokenctl, ["ssh"] + server.options + [destination, "PATH=$HOME/bin:$PATH; \(remote)"],
        environment: setup.viaAgent())
    }

    func tokenctl(_ arguments: [String]) async throws -> ProcessResult {
      try await TestProcess.run(TestProcess.tokenctl, arguments, environment: setup.environment())
    }

    func finish() async {
      await server.stop()
      await AgentIntegrationTests.finish(agent, keeping: ada)
      setup.cleanUp()
    }
  }

  /// Whether this run can make the users and start sshd (`make test`, as root).
  static var canForward: Bool {
    ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1" && getuid() == 0
      && FileManager.default.isExecutableFile(atPath: sshd)
  }

  @Test func gitOnTheRemoteSideClonesOverHTTPOnlyWhileTheHostIsAllowed() async throws {
    guard Self.canForward else { return }
    var gitServer = ""
    let forwarded = try await Forwarded.start { setup in
      // The test git server, which lets through only tokens the stub says are active.
      let repositories = setup.directory.path("repositories")
      try FileManager.default.createDirectory(atPath: repositories, withIntermediateDirectories: true)
      let seed = setup.directory.path("seed")
      for arguments in [
        ["init", "-q", "-b", "main", seed],
        [
          "-c", "user.name=Ada", "-c", "user.email=ada@example.org", "-C", seed, "commit", "-q", "--allow-empty", "-m",
          "first",
        ],
        ["clone", "-q", "--bare", seed, repositories + "/project.git"],
      ] {
        try #require(try await TestProcess.run("git", arguments).status == 0)
      }
      (gitServer, _) = try await LoopbackService.start(
        "Tests/Support/git-http-server.py", info: "git-server.json",
        arguments: [
          "--root", repositories, "--introspect", setup.stub.baseURL + "/introspect", "--introspect-client", "git:x",
        ])
      // The local config's rule that chooses the account for that server: the remote side has none.
      try GitCredentialTests.writeGitType(
        home: setup.home, issuer: setup.stub.baseURL, clientID: "git",
        host: String(gitServer.dropFirst("http://".count)))
    }
    let group = forwarded.setup.group
    func clone(_ name: String) async throws -> ProcessResult {
      try await forwarded.overSSH(
        "rm -rf $HOME/\(name); TOKENCTL_GROUP=\(group) GIT_TERMINAL_PROMPT=0 git -c credential.helper= "
          + "-c credential.helper=tokenctl clone -q \(gitServer)/project.git $HOME/\(name) && git -C $HOME/\(name) log --oneline"
      )
    }

    let before = try await clone("before")
    #expect(before.status != 0, "cloned before allow --host: \(before.stdout)")
    #expect(before.stderr.contains("tokenctl allow --host 127.0.0.1 gitlocal:ada --group \(group)"), "\(before.stderr)")

    #expect(
      try await forwarded.tokenctl(["allow", "--host", "127.0.0.1", "gitlocal:ada", "--group", group]).status == 0)
    let allowed = try await clone("allowed")
    #expect(allowed.status == 0, "no clone after allow --host: \(allowed.stderr)")
    #expect(allowed.stdout.contains("first"))

    #expect(try await forwarded.tokenctl(["deny", "--host", "127.0.0.1"]).status == 0)
    let denied = try await clone("denied")
    #expect(denied.status != 0, "cloned after deny --host: \(denied.stdout)")

    // git kept nothing of the token on the remote side's disk.
    let grep = try await TestProcess.run(
      "grep", ["-rlF", forwarded.ada.tokens.accessToken, "/home/\(Self.remoteUser)"] + Self.remoteFolders())
    #expect(grep.status == 1, "a token on the remote side's disk: \(grep.stdout)")
    await forwarded.finish()
  }

  @Test func skopeoOnTheRemoteSideReadsTheRegistryThroughTheDockerHelperWhileTheHostIsAllowed() async throws {
    guard Self.canForward, DockerCredentialTests.hasSkopeo else { return }
    var registry = ""
    let forwarded = try await Forwarded.start { setup in
      (registry, _) = try await LoopbackService.start(
        "Tests/Support/docker-registry-server.py", info: "registry.json",
        arguments: ["--introspect", setup.stub.baseURL + "/introspect", "--introspect-client", "git:x"])
      try GitCredentialTests.writeGitType(
        home: setup.home, issuer: setup.stub.baseURL, clientID: "git",
        host: String(registry.dropFirst("http://".count)), table: "credentials")
    }
    let group = forwarded.setup.group
    let host = String(registry.dropFirst("http://".count))
    // The remote user's containers file names the helper for the registry, as
    // `tokenctl setup-docker` writes it; nothing else is configured there.
    func inspect() async throws -> ProcessResult {
      try await forwarded.overSSH(
        "printf '{\"credHelpers\": {\"\(host)\": \"tokenctl\"}}' > $HOME/auth.json; "
          + "REGISTRY_AUTH_FILE=$HOME/auth.json TOKENCTL_GROUP=\(group) "
          + "skopeo inspect --tls-verify=false docker://\(host)/tools/hello:1")
    }

    let before = try await inspect()
    #expect(before.status != 0, "skopeo read the registry before allow --host: \(before.stdout)")
    #expect(
      try await forwarded.tokenctl(["allow", "--host", "127.0.0.1", "gitlocal:ada", "--group", group]).status == 0)
    let allowed = try await inspect()
    #expect(allowed.status == 0, "skopeo after allow --host: \(allowed.stderr)")
    #expect(allowed.stdout.contains("\"Digest\""), "\(allowed.stdout)")
    #expect(try await forwarded.tokenctl(["deny", "--host", "127.0.0.1"]).status == 0)
    let denied = try await inspect()
    #expect(denied.status != 0, "skopeo read the registry after deny --host: \(denied.stdout)")
    await forwarded.finish()
  }

  @Test func doctorOnTheRemoteSideCallsTheForwardedAgentForwardedNotGone() async throws {
    guard Self.canForward else { return }
    let forwarded = try await Forwarded.start()
    // The full program, as a host where tokenctl is installed in full has it.
    let doctor = try await forwarded.overSSH("\(TestProcess.tokenctl) doctor")
    #expect(doctor.stdout.contains("forwarded over ssh"), "\(doctor.stdout)")
    #expect(doctor.stdout.contains("knows this host as 127.0.0.1"), "\(doctor.stdout)")
    #expect(!doctor.stdout.contains("gone"), "\(doctor.stdout)")
    #expect(!doctor.stdout.contains("rm "), "doctor suggests removing a live socket: \(doctor.stdout)")
    await forwarded.finish()
  }

  /// The main socket's bound of idle connections holds on a host's socket too: beyond a
  /// few (16 served, `Agent.connectionsPerProcess`, and 256 held for their request without
  /// a thread, `Agent.heldPerHost`), idle ones are closed at once, not after a second each;
  /// the host's own client meanwhile gets its token, and so does each of many asking at
  /// once, whose connections ssh opens a round trip before their requests come.
  @Test func idleConnectionsOnAHostsSocketAreBoundedAndDoNotStallItsClient() async throws {
    guard Self.canForward else { return }
    let forwarded = try await Forwarded.start()
    let group = forwarded.setup.group
    #expect(
      try await forwarded.tokenctl(["allow", "--host", "127.0.0.1", "gitlocal:ada", "--group", group]).status == 0)
    let folder = forwarded.setup.directory.path("agent/forward")
    // A session held open, whose socket the idle connections go to.
    let session = try TestProcess(
      TestProcess.tokenctl, ["ssh"] + forwarded.server.options + [forwarded.destination, "sleep 30"],
      environment: forwarded.setup.viaAgent())
    var socket: String?
    for _ in 0..<200 where socket == nil {
      socket = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.first { $0.hasSuffix(".sock") }
      if socket == nil { try await Task.sleep(for: .milliseconds(50)) }
    }
    let path = folder + "/" + (try #require(socket, "no socket for the host"))
    let held = try AgentFloodTests.holdIdle(2000, path: path)
    defer { for fd in held { close(fd) } }
    #expect(held.count >= 1000, "could open only \(held.count) connections")
    // Well within the second an idle connection may wait for its request.
    try await Task.sleep(for: .milliseconds(400))
    let closed = held.filter(AgentFloodTests.isClosedByPeer).count
    #expect(
      closed >= held.count - 16 - 256 - 16,
      "\(held.count - closed) idle connections are held by the agent after 0.4 s")
    let client = try await forwarded.overSSH("tokenctl token gitlocal:ada --group \(group)")
    // Many programs of the host asking at once, each connection idle until ssh brings its
    // request: every one is answered.
    let many = try await forwarded.overSSH(
      "for i in $(seq 100); do tokenctl token gitlocal:ada --group \(group) > $HOME/many.$i 2>&1 & done; wait; "
        + "cat $HOME/many.*; rm -f $HOME/many.*")
    #expect(
      many.stdout == String(repeating: forwarded.ada.tokens.accessToken + "\n", count: 100),
      "\(many.stdout) \(many.stderr)")
    #expect(client.stdout == forwarded.ada.tokens.accessToken + "\n", "\(client.stderr)")
    session.terminate()
    _ = await session.exitStatus()
    await forwarded.finish()
  }
}
