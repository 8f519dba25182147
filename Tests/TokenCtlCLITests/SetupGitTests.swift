import Foundation
import TestSupport
import Testing
import TokenCtlCLI
import TokenKit
import TokenStoreTesting

/// `tokenctl setup-git` against real git, in a throw-away global configuration.
@Suite struct SetupGitTests {
  let home = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-setup-git-\(UUID().uuidString)")
  var config: String { home.appendingPathComponent("gitconfig").path }
  var environment: [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["HOME"] = home.path
    environment["GIT_CONFIG_GLOBAL"] = config
    environment["GIT_CONFIG_NOSYSTEM"] = "1"
    environment["XDG_CONFIG_HOME"] = home.appendingPathComponent("xdg").path
    return environment
  }

  init() throws {
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
  }

  let backing = InMemoryTokenStore.Backing()

  func tokenctl(_ arguments: String...) async throws -> (status: Int32, stderr: String) {
    let run = try await runInMemory(arguments, backing: backing, clock: SystemClock(), environment: environment)
    return (run.status, run.stderr)
  }

  func helpers(_ host: String, scheme: String = "https") async throws -> [String] {
    let result = try await TestProcess.run(
      "git", ["config", "--global", "--get-all", "credential.\(scheme)://\(host).helper"], environment: environment)
    return result.stdout.split(separator: "\n").map(String.init)
  }

  /// An account type of the user's whose git host and authorization server are both on
  /// this machine, as in the tests: the helper answers its host over plain http too.
  func writeLoopbackForgeType() throws {
    try UserTypeFile(
      id: "forge", displayName: "Loopback forge", issuer: "http://127.0.0.1:9", clientID: "forge-app",
      gitHosts: ["127.0.0.1:3000"]
    ).write(configHome: home.appendingPathComponent("xdg"))
  }

  /// Which helpers real git runs for `get` on `url`, from its trace: what it will ask.
  func helpersGitRuns(for url: String) async throws -> [String] {
    var environment = environment
    environment["GIT_TRACE"] = "1"
    environment["GIT_TERMINAL_PROMPT"] = "0"
    // No helper program is on PATH: the trace shows git trying, and nothing answers.
    environment["PATH"] = "/usr/bin:/bin"
    let parts = url.split(separator: "://")
    let result = try await TestProcess.run(
      "git", ["credential", "fill"], environment: environment,
      stdin: "protocol=\(parts[0])\nhost=\(parts[1])\n\n")
    return result.stderr.split(separator: "\n").compactMap { line in
      line.range(of: "run_command: 'git credential-").map { String(line[$0.upperBound...].prefix { $0 != " " }) }
    }
  }

  /// A host no type serves is still configured, as asked, but not without a word: git
  /// would ask tokenctl for it in vain.
  @Test func aHostNothingServesIsConfiguredWithAWarning() async throws {
    let added = try await tokenctl("setup-git", "--host", "git.example.org")
    #expect(added.status == 0, "\(added.stderr)")
    #expect(
      added.stderr.contains(
        "tokenctl: warning: no account type serves git.example.org, so git will ask tokenctl for it in vain"),
      "\(added.stderr)")
    let served = try await tokenctl("setup-git", "--host", "github.com")
    #expect(!served.stderr.contains("warning"), "\(served.stderr)")
  }

  /// `--json` and `--quiet`: the URLs configured as a
  /// document on standard output, or nothing at all when all went well.
  @Test func setupGitSaysWhatItConfiguredAsJSONOrNothing() async throws {
    let output = CapturedOutput()
    let backing = backing
    let context = CLIContext(
      registry: try BuiltinPlugins.registry(), makeStore: { InMemoryTokenStore(group: $0, backing: backing) },
      clock: SystemClock(), environment: environment, output: output)
    let status = await TokenCtl.main(arguments: ["setup-git", "--host", "github.com", "--json"], context: context)
    #expect(status == 0, "\(output.stderr)")
    let document = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
    #expect(document["format"] as? Int == 1)
    #expect(document["urls"] as? [String] == ["https://github.com"])
    #expect(document["scope"] as? String == "global" && document["unset"] as? Bool == false)
    #expect(output.stderr.isEmpty, "\(output.stderr)")
    #expect(try await helpers("github.com") == ["tokenctl"])

    let quiet = try await tokenctl("--quiet", "setup-git", "--host", "gitlab.com")
    #expect(quiet.status == 0)
    #expect(quiet.stderr.isEmpty, "\(quiet.stderr)")
    #expect(try await helpers("gitlab.com") == ["tokenctl"])
  }

  @Test func aLoopbackHostIsConfiguredForEverySchemeTheHelperAnswers() async throws {
    try writeLoopbackForgeType()
    let added = try await tokenctl("setup-git", "--host", "127.0.0.1:3000")
    #expect(added.status == 0, "\(added.stderr)")
    #expect(added.stderr.contains("git asks tokenctl for http://127.0.0.1:3000"), "\(added.stderr)")
    #expect(try await helpers("127.0.0.1:3000") == ["tokenctl"])
    #expect(try await helpers("127.0.0.1:3000", scheme: "http") == ["tokenctl"])
    // Real git asks tokenctl about a plain http remote there, as about an https one.
    #expect(try await helpersGitRuns(for: "http://127.0.0.1:3000") == ["tokenctl"])
    #expect(try await helpersGitRuns(for: "https://127.0.0.1:3000") == ["tokenctl"])

    #expect(try await tokenctl("setup-git", "--host", "127.0.0.1:3000", "--unset").status == 0)
    #expect(try await helpers("127.0.0.1:3000") == [])
    #expect(try await helpers("127.0.0.1:3000", scheme: "http") == [])
  }

  @Test func everyKnownHostIncludesTheLoopbackForgeOverBothSchemes() async throws {
    try writeLoopbackForgeType()
    #expect(try await tokenctl("setup-git").status == 0)
    #expect(try await helpers("127.0.0.1:3000", scheme: "http") == ["tokenctl"])
    #expect(try await helpers("127.0.0.1:3000") == ["tokenctl"])
    // A host elsewhere is never answered over plain http, so it is not configured.
    #expect(try await helpers("github.com", scheme: "http") == [])
  }

  @Test(arguments: [("https://127.0.0.1:3001/", false), ("http://127.0.0.1:3002/", true)])
  func aForgeInstanceOnLoopbackGetsHttpOnlyWhenItsIssuerIsHttp(issuer: String, http: Bool) async throws {
    try seedGitea(issuer: issuer)
    let host = String(issuer.split(separator: "/")[1])
    #expect(try await tokenctl("setup-git", "--host", host).status == 0)
    #expect(try await helpers(host) == ["tokenctl"])
    #expect(try await helpers(host, scheme: "http") == (http ? ["tokenctl"] : []))
  }

  @Test func addsTokenctlOnceBesideOtherHelpersAndUnsetRemovesOnlyIt() async throws {
    _ = try await TestProcess.run(
      "git", ["config", "--global", "--add", "credential.https://git.example.org.helper", "cache"],
      environment: environment)
    #expect(try await tokenctl("setup-git", "--host", "git.example.org").status == 0)
    #expect(try await tokenctl("setup-git", "--host", "git.example.org").status == 0)
    #expect(try await helpers("git.example.org") == ["cache", "tokenctl"])

    let removed = try await tokenctl("setup-git", "--host", "git.example.org", "--unset")
    #expect(removed.status == 0 && removed.stderr.contains("no longer asks tokenctl"))
    #expect(try await helpers("git.example.org") == ["cache"])
    #expect(try await tokenctl("setup-git", "--host", "git.example.org", "--unset").status == 0)
  }

  @Test func withoutHostsEveryKnownGitHostIsConfigured() async throws {
    #expect(try await tokenctl("setup-git").status == 0)
    for host in ["github.com", "gitlab.com", "bitbucket.org"] {
      #expect(try await helpers(host) == ["tokenctl"], "\(host)")
    }
  }

  /// A Gitea account of `group` signed in at `issuer`: the instance's only trace.
  func seedGitea(group: String = "default", issuer: String) throws {
    try InMemoryTokenStore(group: group, backing: backing).save(
      Account(
        type: "gitea", id: "1", name: "ada", group: group, createdAt: Date(), updatedAt: Date(), issuer: issuer),
      tokens: TokenSet(accessToken: "A", refreshToken: "R", expiresAt: nil))
  }

  @Test func aForgeInstanceIsConfiguredFromItsAccountsIssuer() async throws {
    try seedGitea(issuer: "https://git.corp.example:3000/")
    #expect(try await tokenctl("setup-git").status == 0)
    #expect(try await helpers("git.corp.example:3000") == ["tokenctl"])
    #expect(try await helpers("github.com") == ["tokenctl"])
  }

  @Test func aGroupIsChosenAsEveryCommandChoosesIt() async throws {
    // An instance known only to the accounts of group "work": --group finds it.
    try seedGitea(group: "work", issuer: "https://git.work.example/")
    #expect(try await tokenctl("setup-git").status == 0)
    #expect(try await helpers("git.work.example") == [])
    #expect(try await tokenctl("setup-git", "--group", "work").status == 0)
    #expect(try await helpers("git.work.example") == ["tokenctl"])
  }

  @Test(arguments: ["https://github.com", "github.com/acme", ""])
  func aHostWithSchemeOrPathIsRefused(host: String) async throws {
    #expect(try await tokenctl("setup-git", "--host", host).status == 64)
  }
}
