import Crypto
import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// What the tests of the helpers for tools other than git share: a registry stand-in from
/// `Tests/Support` that checks every token at the real authorization server, a user type
/// `gitlocal` whose `[credentials] hosts` (the hosts table's general name) names that
/// registry, a home of the test's own, and accounts signed in through the browser flow,
/// so every token a tool sends is one tokenctl got.
struct ToolHelperFixture {
  let server: AuthServer
  let group = TokenStoreConformance.freshGroup()
  let directory: TemporaryDirectory
  /// The registry's base URL, and the directory of its log.
  let registry: String
  let registryState: URL
  var store: SecretServiceTokenStore { SecretServiceTokenStore(group: group) }
  var home: URL { directory.url.appendingPathComponent("home") }
  /// The registry as the tools name it: host and port.
  var host: String { Self.host(of: registry) }

  static func host(of url: String) -> String { String(url.split(separator: "://").last ?? "") }

  /// Starts `script` (publishing `registry.json`) against the shared authorization server,
  /// waiting for both without holding a thread of Swift's cooperative pool.
  static func started(registry script: String) async throws -> ToolHelperFixture {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    let server = try await AuthServer.shared
    let (registry, registryState) = try await LoopbackService.start(
      script, info: "registry.json", arguments: try registryArguments(server))
    return try ToolHelperFixture(server: server, registry: registry, registryState: registryState)
  }

  private init(server: AuthServer, registry: String, registryState: URL) throws {
    self.server = server
    directory = try TemporaryDirectory()
    self.registry = registry
    self.registryState = registryState
    try GitCredentialTests.writeGitType(
      home: home, issuer: server.issuer, clientID: server.nativeClientID,
      host: Self.host(of: registry), scopes: ["openid", "profile", "offline_access"], table: "credentials")
  }

  /// The registry checks every token it is sent at `server`'s introspection endpoint.
  private static func registryArguments(_ server: AuthServer) throws -> [String] {
    let endpoints = try GraphEndToEndTests.endpoints(server)
    return [
      "--introspect", try #require(endpoints["introspection"]),
      "--introspect-client", "\(server.serviceClientID):\(server.serviceClientSecret)",
    ]
  }

  /// The git tests' environment, with tokenctl's executables first on PATH (as `make
  /// install` puts them side by side), the scripted browser, no agent unless a test starts
  /// one, and the tools' files under `home`.
  var environment: [String: String] {
    var environment = GitCredentialTests.environment(home: home, group: group)
    environment["PATH"] = Self.binaries + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    environment["BROWSER"] = AuthServer.path("Tests/Support/scripted-browser.sh")
    environment["DISPLAY"] = ":0"
    environment["SCRIPTED_BROWSER_SERVER_JSON"] = server.serverJSON
    environment["TOKENCTL_AGENT_SOCKET"] = directory.path("no-agent.sock")
    environment["XDG_RUNTIME_DIR"] = directory.path("runtime")
    return environment
  }

  /// The folder of the tokenctl under test and its sibling executables.
  /// A hard link of the front end named `name`, alone in a folder of its own beside the
  /// build's (on the build's file system): the agent allows tokenctl's own files only, by
  /// identity, and with no full program beside it the front end can hand nothing over, so
  /// whatever it prints, it answered alone. Remove `folder` when done.
  static func frontEndAlone(named name: String) throws -> (path: String, folder: String) {
    let folder = URL(fileURLWithPath: TestProcess.frontEnd).deletingLastPathComponent()
      .appendingPathComponent("front-end-alone-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    try FileManager.default.linkItem(atPath: TestProcess.frontEnd, toPath: folder + "/" + name)
    return (folder + "/" + name, folder)
  }

  static var binaries: String { URL(fileURLWithPath: TestProcess.tokenctl).deletingLastPathComponent().path }

  /// Signs in as `user`, waiting for the browser flow on a thread of its own.
  @discardableResult
  func signIn(user: String) async throws -> Account {
    try await Self.signIn(user: user, environment: environment, store: store)
  }

  /// Signs in to `gitlocal` through the scripted browser as `user`, with `environment`
  /// (which names the browser), waiting on a thread of its own; returns the account as
  /// `store` holds it.
  static func signIn(user: String, environment: [String: String], store: any TokenStore) async throws -> Account {
    let result = try await TestProcess.run(
      TestProcess.tokenctl, ["login", "gitlocal", "--browser"],
      environment: environment.merging(["SCRIPTED_BROWSER_USER": user]) { $1 })
    return try signedIn(user, result, store: store)
  }

  /// The account `user` signed in as, after the login that gave `result`.
  private static func signedIn(_ user: String, _ result: ProcessResult, store: any TokenStore) throws -> Account {
    try #require(result.status == 0, "login as \(user): \(result.stderr)")
    return try #require(try store.list(AccountQuery(type: "gitlocal")).first { $0.account.name == user }).account
  }

  /// The stored access token of `account`.
  func token(_ account: Account) throws -> String {
    try #require(try store.load(account.key)).tokens.accessToken
  }

  /// Marks the stored access token expired, as time would.
  func expire(_ account: Account) throws {
    var stored = try #require(try store.load(account.key))
    stored.tokens.expiresAt = Date().addingTimeInterval(-60)
    try store.save(stored.account, tokens: stored.tokens)
  }

  func cleanUp() {
    for listing in (try? store.list(.all)) ?? [] { _ = try? store.remove(listing.account.key) }
  }

  /// The registry's log: one object per request.
  func requests() -> [[String: Any]] {
    guard let text = try? String(contentsOf: registryState.appendingPathComponent("requests.log"), encoding: .utf8)
    else { return [] }
    return text.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
  }

  /// The tokens (by fingerprint) the registry was sent.
  func tokensSent() -> Set<String> { Set(requests().compactMap { $0["token_sha256"] as? String }) }

  /// How the registries' logs name a token.
  func fingerprint(_ token: String) -> String {
    String(SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined().prefix(16))
  }
}
