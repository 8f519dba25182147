import Foundation
import TestSupport
import Testing
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The agent forwarded over real OpenSSH (`tokenctl ssh`): Debian's sshd with Debian's
/// sshd_config (AcceptEnv LANG LC_*, StreamLocalBindUnlink off) on 127.0.0.1 with a host key
/// of the test's own, and a second local user as the remote account, with no session bus,
/// no keyring and no XDG_RUNTIME_DIR, whose only tokenctl is the front end alone.
///
/// Needs root (to make the users) and openssh-server: `make test` runs it under
/// with-private-keyring.sh as root; anywhere else it is skipped.
@Suite(.serialized) struct ForwardingTests {
  static let remoteUser = "tokenctl-fwd"
  /// Another user of the remote side, who must not reach the forwarded socket.
  static let otherUser = "tokenctl-fwd-other"
  static let sshd = "/usr/sbin/sshd"

  /// Runs `command` with /bin/sh and requires it to succeed.
  @discardableResult
  static func shell(_ command: String, environment: [String: String] = [:]) async throws -> ProcessResult {
    var all = ProcessInfo.processInfo.environment
    all.merge(environment) { $1 }
    let result = try await TestProcess.run("/bin/sh", ["-c", command], environment: all)
    try #require(result.status == 0, "\(command): \(result.stderr)")
    return result
  }

  /// An sshd of the test's own: Debian's sshd_config as shipped, plus its port, address,
  /// host key and pid file, and the remote users (Tests/Support/forwarding-sshd.sh).
  final class SSHServer: Sendable {
    let process: TestProcess
    let port: Int
    let key: String

    init(directory: TemporaryDirectory) async throws {
      key = directory.path("client")
      port = 20_000 + Int(getpid() % 20_000)
      // The set-up `make bench` shares (its forwarding row).
      try await ForwardingTests.shell(
        "\(AuthServer.path("Tests/Support/forwarding-sshd.sh")) \(directory.url.path) \(port) \(TestProcess.frontEnd)")
      process = try TestProcess(
        ForwardingTests.sshd, ["-D", "-f", directory.path("sshd_config"), "-E", directory.path("sshd.log")])
      // Listening once a connection to its port succeeds.
      for _ in 0..<100 {
        if (try? await TestProcess.run("/bin/sh", ["-c", "exec 3<>/dev/tcp/127.0.0.1/\(port)"]).status) == 0 { break }
        if (try? await TestProcess.run("/bin/bash", ["-c", "exec 3<>/dev/tcp/127.0.0.1/\(port)"]).status) == 0 {
          break
        }
        try await Task.sleep(for: .milliseconds(100))
      }
    }

    /// ssh's options for this server, the key and no known-hosts file.
    var options: [String] {
      [
        "-F", "/dev/null", "-p", "\(port)", "-i", key, "-o", "StrictHostKeyChecking=no", "-o",
        "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
      ]
    }

    func stop() async {
      process.terminate()
      _ = await process.exitStatus()
    }
  }

  @Test func aForwardedHostGetsOnlyWhatItWasAllowedAndNothingAfterItsSession() async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    guard getuid() == 0, FileManager.default.isExecutableFile(atPath: Self.sshd) else { return }
    let setup = try await AgentIntegrationTests.Setup()
    defer { setup.cleanUp() }
    let ada = try await setup.seed(name: "ada", expiresIn: 7200)
    let bob = try await setup.seed(name: "bob", expiresIn: 7200)
    let agent = try await setup.startAgent()
    let server = try await SSHServer(directory: setup.directory)
    let destination = "\(Self.remoteUser)@127.0.0.1"
    let local = setup.viaAgent()
    let group = setup.group
    let forwardFolder = setup.directory.path("agent/forward")

    /// `remote` run over `tokenctl ssh`, the remote side's PATH starting at the front end.
    func overSSH(_ remote: String) async throws -> ProcessResult {
      try await TestProcess.run(
        TestProcess.tokenctl, ["ssh"] + server.options + [destination, "PATH=$HOME/bin:$PATH; \(remote)"],
        environment: local)
    }
    func token(_ account: String) async throws -> ProcessResult {
      try await overSSH("tokenctl token \(account) --group \(group)")
    }

    // Before any grant: refused (no one answers the prompt here), naming the command that allows.
    let before = try await token("gitlocal:ada")
    #expect(before.status == 12, "refused before allow --host: \(before.stderr)")
    #expect(before.stderr.contains("tokenctl allow --host 127.0.0.1 gitlocal:ada --group \(group)"))
    #expect(!before.stdout.contains(ada.tokens.accessToken))

    let allow = try await TestProcess.run(
      TestProcess.tokenctl, ["allow", "--host", "127.0.0.1", "gitlocal:ada", "--group", group],
      environment: setup.environment())
    #expect(allow.status == 0, "\(allow.stderr)")
    let after = try await token("gitlocal:ada")
    #expect(after.status == 0, "live after allow --host: \(after.stderr)")
    #expect(after.stdout == ada.tokens.accessToken + "\n")
    // An account the host was not given stays refused.
    let other = try await token("gitlocal:bob")
    #expect(other.status == 12, "\(other.stderr)")
    #expect(!other.stdout.contains(bob.tokens.accessToken))
    // git's helper, the front end under its name, gets the allowed account's token, not
    // another's (TOKENCTL_ACCOUNT names it, as git's users do for a host several serve).
    func helper(_ account: String) async throws -> ProcessResult {
      try await overSSH(
        "printf 'protocol=http\\nhost=127.0.0.1\\n\\n' | TOKENCTL_ACCOUNT=\(account) TOKENCTL_GROUP=\(group) "
          + "git-credential-tokenctl get")
    }
    let gitAda = try await helper("gitlocal:ada")
    #expect(gitAda.status == 0, "\(gitAda.stderr)")
    #expect(gitAda.stdout.contains("password=\(ada.tokens.accessToken)\n"))
    let gitBob = try await helper("gitlocal:bob")
    #expect(gitBob.status == 12, "\(gitBob.stderr)")
    #expect(!gitBob.stdout.contains(bob.tokens.accessToken))
    // Signing in is the local machine's: the front end alone says where to run it.
    let login = try await overSSH("tokenctl login gitlocal")
    #expect(login.status != 0)
    #expect(login.stderr.contains("run it on the machine the agent runs on"))

    // During a session: the remote socket is the remote user's alone, in a private folder.
    let pathFile = setup.directory.path("remote-socket")
    let session = try TestProcess(
      TestProcess.tokenctl,
      ["ssh"] + server.options + [destination, "echo \"$TOKENCTL_AGENT_SOCKET\"; sleep 4"],
      environment: local, stdout: pathFile)
    var remoteSocket = ""
    for _ in 0..<100 {
      remoteSocket = ((try? String(contentsOfFile: pathFile, encoding: .utf8)) ?? "")
        .trimmingCharacters(in: .whitespacesAndNewlines)
      if !remoteSocket.isEmpty { break }
      try await Task.sleep(for: .milliseconds(50))
    }
    #expect(remoteSocket.hasPrefix("/tmp/tokenctl-forward-"), "the remote socket: \(remoteSocket)")
    let folder = try FileManager.default.attributesOfItem(atPath: (remoteSocket as NSString).deletingLastPathComponent)
    #expect((folder[.posixPermissions] as? Int) == 0o700)
    let intruder = try await TestProcess.run(
      "runuser",
      [
        "-u", Self.otherUser, "--", "python3", "-c",
        "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])", remoteSocket,
      ])
    #expect(intruder.status != 0, "another remote user connected to the forwarded socket")
    let open = try FileManager.default.contentsOfDirectory(atPath: forwardFolder).filter { $0.hasSuffix(".sock") }
    #expect(open.count == 1, "the agent's socket for the host while the session lasts: \(open)")
    #expect(await session.exitStatus() == 0)
    // After the session: the agent's socket for it is gone, and so is the remote one.
    var left = open
    for _ in 0..<100 {
      left =
        (try? FileManager.default.contentsOfDirectory(atPath: forwardFolder).filter { $0.hasSuffix(".sock") }) ?? []
      if left.isEmpty { break }
      try await Task.sleep(for: .milliseconds(50))
    }
    #expect(left.isEmpty, "the agent's socket for the host after the session: \(left)")
    #expect(!FileManager.default.fileExists(atPath: remoteSocket))
    if let stale = open.first {
      let late = try await TestProcess.run(
        "python3",
        [
          "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])",
          "\(forwardFolder)/\(stale)",
        ])
      #expect(late.status != 0, "the old socket answered after the session")
    }

    // Denied: refused again.
    let deny = try await TestProcess.run(
      TestProcess.tokenctl, ["deny", "--host", "127.0.0.1"], environment: setup.environment())
    #expect(deny.status == 0, "\(deny.stderr)")
    let denied = try await token("gitlocal:ada")
    #expect(denied.status == 12, "refused after deny --host: \(denied.stderr)")
    #expect(!denied.stdout.contains(ada.tokens.accessToken))

    // Nothing at rest on the remote side, and every answer to the host is audited by name.
    let grep = try await TestProcess.run(
      "grep", ["-rlF", ada.tokens.accessToken, "/home/\(Self.remoteUser)"] + Self.remoteFolders())
    #expect(grep.status == 1, "a token on the remote side's disk: \(grep.stdout)")
    let audit =
      (try? String(
        contentsOfFile: setup.home.appendingPathComponent(".local/state/tokenctl/audit.log").path, encoding: .utf8))
      ?? ""
    #expect(audit.contains("token app=host:127.0.0.1 group=\(group) account=gitlocal:ada via=ssh"))
    #expect(audit.contains("refused app=host:127.0.0.1 group=\(group) account=gitlocal:bob via=ssh"))

    await server.stop()
    await AgentIntegrationTests.finish(agent, keeping: ada)
  }

  /// The remote user's folders of forwarded sockets in /tmp.
  static func remoteFolders() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []).filter {
      $0.hasPrefix("tokenctl-forward-")
    }.map { "/tmp/" + $0 }
  }
}
