import Foundation
import TestSupport
import Testing
import TokenKit

/// What tokenctl says of a provider's limits that no setting of the user's can change, as
/// a user meets them on the command line, directly and through the agent.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ProviderLimitsTests {
  init() throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
  }

  /// A server whose tokens live 60 s cannot give a token valid for 120 s: every call
  /// refreshes, and tokenctl says so once, with the margin that can be had, on standard
  /// error and without the token. Through the agent the same words reach the client.
  @Test func aMarginLongerThanTheServersTokensLiveIsSaidOnceWithWhatCanBeHad() async throws {
    let setup = try await AgentIntegrationTests.Setup(stubArguments: ["--access-token-seconds", "60"])
    defer { setup.cleanUp() }
    _ = try await setup.seed(name: "ada", expiresIn: 60)
    let expected =
      "gitlocal:ada's tokens live 60 s at the server; --min-valid 120 cannot be met, so every call refreshes. "
      + "Use --min-valid 50 or less."
    let agent = try await setup.startAgent()
    for (path, environment) in [("direct", setup.direct()), ("agent", setup.viaAgent())] {
      let run = try await TestProcess.run(
        TestProcess.tokenctl, ["token", "ada", "--min-valid", "120"], environment: environment)
      #expect(run.status == 0, "\(path): \(run.stderr)")
      let token = run.stdout.trimmingCharacters(in: .newlines)
      #expect(!token.isEmpty)
      #expect(run.stderr.components(separatedBy: expected).count == 2, "\(path): said once: \(run.stderr)")
      #expect(!run.stderr.contains(token), "\(path): the warning names no token")
      // A margin the server's tokens give is met without a word.
      let met = try await TestProcess.run(
        TestProcess.tokenctl, ["token", "ada", "--min-valid", "30"], environment: environment)
      #expect(met.status == 0 && met.stderr.isEmpty, "\(path): \(met.stderr)")
    }
    #expect(AgentIntegrationTests.Setup.refreshGrants(try await setup.stats()) >= 2, "each call with 120 refreshed")
    await AgentIntegrationTests.finish(agent, secrets: [])
  }

  /// A `[credentials.accounts]` rule for a host that the type of the account it names does
  /// not serve can never apply. git's helper still answers nothing there (git moves on),
  /// but says why on standard error, which git shows, directly and through the agent; a
  /// host no rule names stays silent. `doctor` warns of the rule, with the fix.
  @Test func aGitRuleThatCanNeverApplyIsSaidAtGetAndByDoctor() async throws {
    let setup = try await AgentIntegrationTests.Setup()
    defer { setup.cleanUp() }
    _ = try await setup.seed(name: "ada", expiresIn: 3600)
    let config = setup.home.appendingPathComponent("config/tokenctl/config.toml")
    try "[credentials.accounts]\n\"https://git.corp.example/\" = \"gitlocal:ada\"\n".write(
      to: config, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config.path)
    let expected =
      "the rule for https://git.corp.example/ in config.toml names gitlocal:ada, whose type does not serve "
      + "git.corp.example: the rule never applies"
    let fix = "hosts = [\"git.corp.example\"] under [credentials]"
    let agent = try await setup.startAgent()
    for (path, environment) in [("direct", setup.direct()), ("agent", setup.viaAgent())] {
      let get = try await TestProcess.run(
        GitCredentialTests.helper, ["get"], environment: environment, stdin: "protocol=https\nhost=git.corp.example\n\n"
      )
      #expect(get.status == 0 && get.stdout.isEmpty, "\(path): \(get.stdout) \(get.stderr)")
      #expect(get.stderr.contains(expected) && get.stderr.contains(fix), "\(path): \(get.stderr)")
      let elsewhere = try await TestProcess.run(
        GitCredentialTests.helper, ["get"], environment: environment,
        stdin: "protocol=https\nhost=elsewhere.example\n\n")
      #expect(elsewhere.status == 0 && elsewhere.stdout.isEmpty && elsewhere.stderr.isEmpty, "\(path): \(elsewhere)")
    }
    await AgentIntegrationTests.finish(agent, secrets: [])

    let doctor = try await TestProcess.run(TestProcess.tokenctl, ["doctor", "--json"], environment: setup.direct())
    let document = try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any]
    let checks = try #require(document?["checks"] as? [[String: Any]], "\(doctor.stdout) \(doctor.stderr)")
    let rule = try #require(
      checks.first { $0["id"] as? String == "git-rule:https://git.corp.example/" }, "\(checks.map { $0["id"] ?? "" })")
    #expect(rule["status"] as? String == "warn")
    #expect((rule["detail"] as? String)?.contains(expected) == true, "\(rule)")
    #expect((rule["fix"] as? String)?.contains(fix) == true, "\(rule)")
  }

  /// A server that answers a refresh for other scopes with none, issuing the grant's
  /// instead: `token --scope` does not claim the scopes it asked for. Where the access
  /// token is a JWT with a scope claim, it reports the claim; otherwise `--json` says
  /// `scopes_confirmed: false`, and the plain form says so on standard error. Directly
  /// and through the agent.
  @Test(arguments: ["silent", "jwt"])
  func scopesTheServerDidNotNameAreNotClaimed(server: String) async throws {
    let setup = try await AgentIntegrationTests.Setup(stubArguments: ["--refresh-scope", server])
    defer { setup.cleanUp() }
    _ = try await setup.seed(name: "ada", expiresIn: 3600)
    let agent = try await setup.startAgent()
    for (path, environment) in [("direct", setup.direct()), ("agent", setup.viaAgent())] {
      let json = try await TestProcess.run(
        TestProcess.tokenctl, ["token", "ada", "--scope", "openid phone", "--json"], environment: environment)
      #expect(json.status == 0, "\(path): \(json.stderr)")
      let document = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
      let plain = try await TestProcess.run(
        TestProcess.tokenctl, ["token", "ada", "--scope", "openid phone"], environment: environment)
      #expect(plain.status == 0, "\(path): \(plain.stderr)")
      if server == "jwt" {
        #expect(document?["scopes"] as? [String] == ["openid", "profile", "email"], "\(path): \(json.stdout)")
        #expect(document?["scopes_confirmed"] as? Bool == true, "\(path): \(json.stdout)")
        #expect(plain.stderr.isEmpty, "\(path): \(plain.stderr)")
      } else {
        #expect(document?["scopes"] as? [String] == ["openid", "phone"], "\(path): \(json.stdout)")
        #expect(document?["scopes_confirmed"] as? Bool == false, "\(path): \(json.stdout)")
        #expect(
          plain.stderr.contains("the server did not confirm that this token carries openid phone"),
          "\(path): \(plain.stderr)")
      }
      #expect(!plain.stderr.contains(plain.stdout.trimmingCharacters(in: .newlines)), "no token in the warning")
    }
    await AgentIntegrationTests.finish(agent, secrets: [])
  }

  /// `request ACCOUNT /path` needs a type with an API base. For one without, the error
  /// names the types that have one and says to give the full URL, which then works.
  @Test func aPathForATypeWithoutAnAPIBaseNamesTheTypesWithOneAndTheFullURLWorks() async throws {
    let setup = try await AgentIntegrationTests.Setup()
    defer { setup.cleanUp() }
    _ = try await setup.seed(name: "ada", expiresIn: 3600)
    let path = try await TestProcess.run(
      TestProcess.tokenctl, ["request", "ada", "/userinfo"], environment: setup.direct())
    #expect(path.status == 14, "\(path.stderr)")
    #expect(
      path.stderr.contains(
        "account type 'gitlocal' has no API base to resolve '/userinfo' against: a path alone "
          + "works only for types with one ("), "\(path.stderr)")
    for type in ["graph", "github", "gitlab", "google", "bitbucket"] {
      #expect(path.stderr.contains(type), "\(type) has an API base: \(path.stderr)")
    }
    #expect(path.stderr.contains("Give the full https URL instead"), "\(path.stderr)")
    let full = try await TestProcess.run(
      TestProcess.tokenctl, ["request", "ada", setup.stub.baseURL + "/userinfo"], environment: setup.direct())
    #expect(full.status == 0 && full.stdout.contains("stub-user"), "\(full.stdout) \(full.stderr)")
  }
}
