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
    let output = CapturedOutput()
    let backing = backing
    let context = CLIContext(
      registry: try BuiltinPlugins.registry(), makeStore: { InMemoryTokenStore(group: $0, backing: backing) },
      clock: SystemClock(),
      environment: environment, output: output)
    return (await TokenCtl.main(arguments: arguments, context: context), output.stderr)
  }

  func helpers(_ host: String) async throws -> [String] {
    let result = try await TestProcess.run(
      "git", ["config", "--global", "--get-all", "credential.https://\(host).helper"], environment: environment)
    return result.stdout.split(separator: "\n").map(String.init)
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
