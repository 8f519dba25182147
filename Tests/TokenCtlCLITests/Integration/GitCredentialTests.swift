import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// Real git (`git credential fill` and `reject`) driving the real `git-credential-tokenctl`
/// against the real keyring and the stub authorization server.
@Suite(.serialized) struct GitCredentialTests {
  /// A private config with a loopback git type, a group of this test's own, and a git
  /// that reads no configuration but ours.
  struct Setup {
    let group = TokenStoreConformance.freshGroup()
    let home = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-git-\(UUID().uuidString)")
    let stub: StubServer
    var store: SecretServiceTokenStore { SecretServiceTokenStore(group: group) }

    init() async throws {
      stub = try await StubServer.start()
      try GitCredentialTests.writeGitType(home: home, issuer: stub.baseURL, clientID: "git", host: "127.0.0.1")
    }

    var environment: [String: String] { GitCredentialTests.environment(home: home, group: group) }

    /// An account of the loopback type whose access token expired a minute ago.
    @discardableResult
    func seed(name: String) async throws -> Account {
      let family = try await stub.admin("/_admin/issue", method: "POST")
      let account = Account(
        type: "gitlocal", id: "id-\(name)", name: name, group: group, createdAt: Date(), updatedAt: Date(),
        issuer: stub.baseURL, clientID: "git")
      try store.save(
        account,
        tokens: TokenSet(
          accessToken: "expired-access-token", refreshToken: try #require(family["refresh_token"] as? String),
          expiresAt: Date().addingTimeInterval(-60)))
      return account
    }

    func cleanUp() {
      for listing in (try? store.list(.all)) ?? [] { _ = try? store.remove(listing.account.key) }
    }

    /// `git credential OPERATION` with our helper, then `fallback` when given.
    func git(_ operation: String, _ input: String, fallback: Bool = false) async throws -> ProcessResult {
      var arguments = ["-c", "credential.helper=", "-c", "credential.helper=\(GitCredentialTests.helper)"]
      if fallback {
        arguments += ["-c", "credential.helper=!f() { echo username=other; echo password=fallback; }; f"]
      }
      return try await TestProcess.run(
        "git", arguments + ["credential", operation], environment: environment, stdin: input)
    }

    func helper(_ operation: String, _ input: String) async throws -> ProcessResult {
      try await TestProcess.run(GitCredentialTests.helper, [operation], environment: environment, stdin: input)
    }
  }

  /// The environment of a git that reads no configuration but ours and never prompts,
  /// and of a tokenctl whose configuration, cache and group are the test's own.
  static func environment(home: URL, group: String) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["TOKENCTL_GROUP"] = group
    environment["TOKENCTL_ACCOUNT"] = nil
    environment["HOME"] = home.path
    environment["XDG_CONFIG_HOME"] = home.appendingPathComponent("config").path
    environment["XDG_CACHE_HOME"] = home.appendingPathComponent("cache").path
    environment["XDG_RUNTIME_DIR"] = nil
    environment["GIT_CONFIG_NOSYSTEM"] = "1"
    environment["GIT_CONFIG_GLOBAL"] = "/dev/null"
    environment["GIT_TERMINAL_PROMPT"] = "0"
    return environment
  }

  /// Writes the user type `gitlocal` (tokenctl-types(5)) under `home`'s config: the
  /// issuer's tokens serve git at `host`, with `oauth2` as the username, in the hosts table
  /// under the name `table` (`git`, or its general name `credentials`).
  static func writeGitType(
    home: URL, issuer: String, clientID: String, host: String, scopes: [String] = [], table: String = "git"
  ) throws {
    try UserTypeFile(
      id: "gitlocal", displayName: "Git on this machine", issuer: issuer, clientID: clientID, scopes: scopes,
      more: "[\(table)]\nhosts = [\"\(host)\"]\nusername = \"oauth2\""
    ).write(configHome: home.appendingPathComponent("config"))
  }

  /// `environment` with `git-credential-tokenctl` as git's only credential helper.
  static func withHelper(_ environment: [String: String]) -> [String: String] {
    var git = environment
    git["GIT_CONFIG_COUNT"] = "1"
    git["GIT_CONFIG_KEY_0"] = "credential.helper"
    git["GIT_CONFIG_VALUE_0"] = helper
    return git
  }

  /// `git-credential-tokenctl`, built beside `tokenctl`.
  static var helper: String {
    URL(fileURLWithPath: TestProcess.tokenctl).deletingLastPathComponent()
      .appendingPathComponent("git-credential-tokenctl").path
  }

  init() throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
  }

  @Test func theFirstFillAfterExpiryGetsAFreshToken() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let account = try await setup.seed(name: "ada")
    let result = try await setup.git("fill", "protocol=http\nhost=127.0.0.1\n\n")
    #expect(result.status == 0, "\(result.stderr)")
    let stored = try #require(try setup.store.load(account.key))
    #expect(stored.tokens.accessToken != "expired-access-token")
    #expect(result.stdout.contains("username=oauth2\n"))
    #expect(result.stdout.contains("password=\(stored.tokens.accessToken)\n"))
    #expect(!result.stderr.contains(stored.tokens.accessToken))
  }

  @Test func aHostNoTypeServesFallsThroughToTheNextHelper() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    try await setup.seed(name: "ada")
    let result = try await setup.git("fill", "protocol=https\nhost=git.unknown.example\n\n", fallback: true)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("username=other\npassword=fallback\n"))
  }

  @Test func twoAccountsAreListedAndGitGoesOn() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    try await setup.seed(name: "ada")
    try await setup.seed(name: "grace")
    let direct = try await setup.helper("get", "protocol=http\nhost=127.0.0.1\n\n")
    #expect(direct.status == 0)
    #expect(direct.stdout == "")
    #expect(direct.stderr.contains("gitlocal:ada") && direct.stderr.contains("gitlocal:grace"))
    #expect(direct.stderr.contains("TOKENCTL_ACCOUNT"))
    let viaGit = try await setup.git("fill", "protocol=http\nhost=127.0.0.1\n\n", fallback: true)
    #expect(viaGit.stdout.contains("password=fallback\n"))
    #expect(viaGit.stderr.contains("gitlocal:grace"))
  }

  @Test func rejectMarksTheAccessTokenExpiredAndKeepsTheRefreshToken() async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    let account = try await setup.seed(name: "ada")
    _ = try await setup.git("fill", "protocol=http\nhost=127.0.0.1\n\n")
    let before = try #require(try setup.store.load(account.key)).tokens
    #expect(before.expiresAt.map { $0 > Date() } == true)
    let result = try await setup.git(
      "reject", "protocol=http\nhost=127.0.0.1\nusername=oauth2\npassword=\(before.accessToken)\n\n")
    #expect(result.status == 0, "\(result.stderr)")
    let after = try #require(try setup.store.load(account.key)).tokens
    #expect(after.expiresAt.map { $0 <= Date() } == true)
    #expect(after.refreshToken == before.refreshToken)
    #expect(after.refreshToken != nil)
  }

  @Test(
    arguments: [
      ("protocol=http\nhost=127.0.0.1\0\n\n", "NUL"),
      ("protocol=http\r\nhost=127.0.0.1\n\n", "carriage return"),
      ("protocol=http\n\n", "no 'host'"),
      // URLs whose host tools read otherwise than tokenctl: a Mercurial key whose user
      // name held a URL, and urllib3's end of the host at a backslash.
      ("url=http://127.0.0.1/@@http://evil.example/repo\nusername=oauth2\n\n", "a URL inside the URL"),
      ("url=http://evil.example\\@127.0.0.1/simple/\n\n", "a backslash"),
    ])
  func hostileInputIsRefused(input: String, reason: String) async throws {
    let setup = try await Setup()
    defer { setup.cleanUp() }
    try await setup.seed(name: "ada")
    let result = try await setup.helper("get", input)
    #expect(result.status != 0)
    #expect(result.stdout == "")
    #expect(result.stderr.contains("refused the request") && result.stderr.contains(reason))
  }
}
