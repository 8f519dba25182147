import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// `docker-credential-tokenctl` and `tokenctl setup-docker` with a real skopeo (Debian's)
/// pulling from a registry stand-in (`Tests/Support/docker-registry-server.py`) that takes
/// only access tokens the real authorization server says are active. The account is
/// signed in through the browser flow, so every token skopeo sends is one tokenctl got.
@Suite(.serialized) struct DockerCredentialTests {
  static let skopeoPath = "/usr/bin/skopeo"
  static let hasSkopeo = FileManager.default.isExecutableFile(atPath: skopeoPath)

  let fixture: ToolHelperFixture
  var store: SecretServiceTokenStore { fixture.store }
  var home: URL { fixture.home }
  var host: String { fixture.host }
  var directory: TemporaryDirectory { fixture.directory }
  var image: String { "docker://\(host)/tools/hello:1" }

  init() async throws {
    fixture = try await ToolHelperFixture.started(registry: "Tests/Support/docker-registry-server.py")
  }

  /// The fixture's environment, with no Docker or containers setting from outside.
  var environment: [String: String] {
    var environment = fixture.environment
    environment["DOCKER_CONFIG"] = nil
    environment["REGISTRY_AUTH_FILE"] = nil
    return environment
  }

  var helper: String { ToolHelperFixture.binaries + "/docker-credential-tokenctl" }

  func skopeo(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> ProcessResult {
    try await TestProcess.run(Self.skopeoPath, arguments, environment: environment.merging(extra) { $1 })
  }

  func json(_ path: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
  }

  func mode(_ path: String) throws -> Int {
    try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
  }

  @Test(.enabled(if: hasSkopeo, "skopeo is not installed (make deps installs Debian's)"))
  func setupDockerThenSkopeoInspectsAndCopiesWithTheAccountsToken() async throws {
    defer { fixture.cleanUp() }
    let account = try await fixture.signIn(user: "ada")
    // A Docker config of the user's own, whose other settings must survive.
    let dockerConfig = home.appendingPathComponent(".docker/config.json").path
    try FileManager.default.createDirectory(
      atPath: home.appendingPathComponent(".docker").path, withIntermediateDirectories: true)
    try #"{"auths": {"other.example": {"auth": "b3RoZXI6c2VjcmV0"}}, "detachKeys": "ctrl-p"}"#.write(
      toFile: dockerConfig, atomically: true, encoding: .utf8)

    let setup = try await TestProcess.run(
      TestProcess.tokenctl, ["setup-docker", "--host", host], environment: environment)
    #expect(setup.status == 0, "\(setup.stderr)")
    let authFile = home.appendingPathComponent("config/containers/auth.json").path
    for path in [dockerConfig, authFile] {
      #expect(setup.stderr.contains("\(path) names tokenctl for \(host)."), "\(setup.stderr)")
      #expect((try json(path)["credHelpers"] as? [String: String]) == [host: "tokenctl"])
      #expect(try mode(path) == 0o600)
    }
    let docker = try json(dockerConfig)
    #expect(docker["detachKeys"] as? String == "ctrl-p")
    #expect((docker["auths"] as? [String: Any])?["other.example"] != nil)

    // Only the containers file names the helper for skopeo: Docker's is read after it.
    let inspect = try await skopeo(["inspect", "--tls-verify=false", image])
    #expect(inspect.status == 0, "\(inspect.stderr)")
    #expect(inspect.stdout.contains("\"Architecture\": \"amd64\""), "\(inspect.stdout)")
    let token = try #require(try store.load(account.key)).tokens.accessToken
    #expect(try await fixture.server.introspect(token).active)
    #expect(fixture.tokensSent() == [fixture.fingerprint(token)], "skopeo sent the account's token and no other")
    #expect(
      fixture.requests().contains { ($0["path"] as? String) == "/token" && ($0["username"] as? String) == "oauth2" })
    #expect(!fixture.requests().contains { ($0["status"] as? Int) == 401 && ($0["credential"] as? String) != "none" })

    let copy = try await skopeo([
      "copy", "--src-tls-verify=false", image, "dir:" + directory.path("copied"),
    ])
    #expect(copy.status == 0, "\(copy.stderr)")
    #expect(FileManager.default.fileExists(atPath: directory.path("copied/manifest.json")))

    // --unset takes out tokenctl's entries and nothing else.
    let unset = try await TestProcess.run(
      TestProcess.tokenctl, ["setup-docker", "--unset", "--host", host], environment: environment)
    #expect(unset.status == 0, "\(unset.stderr)")
    #expect(try json(dockerConfig)["credHelpers"] == nil)
    #expect(try json(dockerConfig)["detachKeys"] as? String == "ctrl-p")
  }

  @Test func getAnswersWithTheAccountsTokenAndNothingForAHostNotOurs() async throws {
    defer { fixture.cleanUp() }
    let account = try await fixture.signIn(user: "ada")
    let old = try fixture.token(account)
    // Expired by our clock: `get` refreshes it first, as git's helper does.
    try fixture.expire(account)

    let get = try await TestProcess.run(helper, ["get"], environment: environment, stdin: host + "\n")
    #expect(get.status == 0, "\(get.stderr)")
    let answer = try #require(try JSONSerialization.jsonObject(with: Data(get.stdout.utf8)) as? [String: String])
    let token = try #require(try store.load(account.key)).tokens.accessToken
    #expect(token != old)
    #expect(answer == ["ServerURL": host, "Username": "oauth2", "Secret": token])
    #expect(try await fixture.server.introspect(token).active)
    #expect(!get.stderr.contains(token))

    // With a scheme, as Docker names some registries, it is the same host.
    let withScheme = try await TestProcess.run(helper, ["get"], environment: environment, stdin: "https://\(host)/v1/")
    #expect(withScheme.status == 0 && withScheme.stdout.contains(token), "\(withScheme.stderr)")

    // Not ours: the words the protocol's clients match, exit 1, and nothing on stderr.
    let other = try await TestProcess.run(helper, ["get"], environment: environment, stdin: "registry.example.org\n")
    #expect(other.status == 1)
    #expect(other.stdout == "credentials not found in native keychain\n")
    #expect(other.stderr.isEmpty, "\(other.stderr)")

    let list = try await TestProcess.run(helper, ["list"], environment: environment)
    #expect(list.status == 0, "\(list.stderr)")
    #expect(list.stdout == "{\"\(host)\":\"oauth2\"}\n")

    // store and erase change nothing and say so, where the tools show it.
    let store = try await TestProcess.run(
      helper, ["store"], environment: environment,
      stdin: #"{"ServerURL":"\#(host)","Username":"u","Secret":"s"}"#)
    #expect(store.status == 1)
    #expect(store.stdout.contains("tokenctl keeps no registry passwords"))
    let erase = try await TestProcess.run(helper, ["erase"], environment: environment, stdin: host)
    #expect(erase.status == 1)
    #expect(erase.stdout.contains("'tokenctl revoke'"))
    #expect(try self.store.load(account.key)?.tokens.accessToken == token)
  }

  @Test func withoutAnAccountGetSaysWhichLoginToRunAndTheToolGoesOnWithout() async throws {
    let get = try await TestProcess.run(helper, ["get"], environment: environment, stdin: host + "\n")
    #expect(get.status == 1)
    #expect(get.stdout == "credentials not found in native keychain\n")
    #expect(
      get.stderr.contains("docker-credential-tokenctl: no account for \(host): run 'tokenctl login gitlocal'"),
      "\(get.stderr)")
  }

  /// The front end, installed as `docker-credential-tokenctl`, answers `get` from the agent
  /// alone (`make bench`, row 15): with no full program beside it to hand over to, it
  /// prints the same bytes as the full program.
  @Test func theFrontEndAloneAnswersGetThroughTheAgent() async throws {
    defer { fixture.cleanUp() }
    _ = try await fixture.signIn(user: "ada")
    let socket = directory.path("agent/agent.sock")
    let agent = try await TestAgent.start(
      environment: environment, socket: socket, log: directory.path("agent.log"))
    let client = TestAgent.clientEnvironment(environment, socket: socket)
    let (alone, folder) = try ToolHelperFixture.frontEndAlone(named: "docker-credential-tokenctl")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let full = try await TestProcess.run(helper, ["get"], environment: client, stdin: "https://\(host)/v2/\n")
    #expect(full.status == 0, "\(full.stderr)")
    let before = try await agent.requests()
    let get = try await TestProcess.run(alone, ["get"], environment: client, stdin: "https://\(host)/v2/\n")
    #expect(get.status == 0, "\(get.stderr)")
    #expect(get.stdout == full.stdout && get.stderr.isEmpty)
    #expect(get.stdout.hasPrefix(#"{"Secret":""#) && get.stdout.contains(#""ServerURL":"https://\#(host)/v2/""#))
    // Its request and the status request that reads the counter.
    #expect(try await agent.requests() == before + 2)
    #expect(await agent.stop() == 0)
  }

  @Test func getThroughTheAgent() async throws {
    defer { fixture.cleanUp() }
    let account = try await fixture.signIn(user: "ada")
    let socket = directory.path("agent/agent.sock")
    let agent = try await TestAgent.start(
      environment: environment, socket: socket, log: directory.path("agent.log"))
    let client = TestAgent.clientEnvironment(environment, socket: socket)
    let before = try await agent.requests()
    let get = try await TestProcess.run(helper, ["get"], environment: client, stdin: host)
    // The helper's request and the status request that reads the counter.
    #expect(try await agent.requests() == before + 2, "the helper asked the agent")
    #expect(get.status == 0, "\(get.stderr)")
    let token = try #require(try store.load(account.key)).tokens.accessToken
    #expect(get.stdout.contains("\"Secret\":\"\(token)\""))
    // A host not ours, through the agent too: the words the tools match, and exit 1.
    let other = try await TestProcess.run(helper, ["get"], environment: client, stdin: "registry.example.org")
    #expect(other.status == 1)
    #expect(other.stdout == "credentials not found in native keychain\n")
    #expect(other.stderr.isEmpty, "\(other.stderr)")
    #expect(await agent.stop() == 0)
    #expect(!agent.log.contains(token))
  }
}
