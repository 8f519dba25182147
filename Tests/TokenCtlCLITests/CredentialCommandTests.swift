import Foundation
import NativeAppSupport
import TestSupport
import Testing
import TokenCtlCLI
import TokenCtlRuntime
import TokenKit
import TokenStoreTesting

/// `tokenctl credential` in-process: which account answers which request, and what is
/// refused, with an in-memory store and a fixed clock.
@Suite struct CredentialCommandTests {
  static let now = Date(timeIntervalSince1970: 1_800_000_000)
  let backing = InMemoryTokenStore.Backing()
  let home = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-cred-\(UUID().uuidString)")

  init() throws {
    // A type of the user's own that takes bearer tokens and the account's name.
    try UserTypeFile(
      id: "corpgit", displayName: "Corp git", issuer: "https://id.corp.example", clientID: "tokenctl",
      gitHosts: ["git.corp.example"], gitUsername: "account-name", gitBearer: true
    ).write(configHome: home.appendingPathComponent("config"))
  }

  func seed(_ type: String, _ id: String, _ name: String, access: String = "ACCESS", issuer: String? = nil) throws {
    try InMemoryTokenStore(group: "default", backing: backing).save(
      Account(
        type: type, id: id, name: name, group: "default", createdAt: Self.now, updatedAt: Self.now, issuer: issuer),
      tokens: TokenSet(accessToken: access, refreshToken: "REFRESH", expiresAt: Self.now.addingTimeInterval(3600)))
  }

  func stored(_ type: String, _ id: String) throws -> StoredAccount? {
    try InMemoryTokenStore(group: "default", backing: backing).load(AccountKey(type: type, id: id))
  }

  /// A terminal whose user gives `answers` in turn, keeping what was written to it.
  final class ScriptedTerminal: UserTerminal, @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [String]
    private var written = ""
    init(_ answers: [String]) { self.answers = answers }
    func write(_ text: String) { lock.withLock { written += text } }
    func readLine() -> String? { lock.withLock { answers.isEmpty ? nil : answers.removeFirst() } }
    var transcript: String { lock.withLock { written } }
  }

  func run(
    _ operation: String, _ input: String, environment: [String: String] = [:],
    terminal: ScriptedTerminal? = nil
  ) async throws
    -> (status: Int32, stdout: String, stderr: String)
  {
    let output = CapturedOutput()
    let backing = backing
    var environment = environment
    environment["HOME"] = home.path
    environment["XDG_CONFIG_HOME"] = home.appendingPathComponent("config").path
    environment["XDG_CACHE_HOME"] = home.appendingPathComponent("cache").path
    let context = CLIContext(
      registry: try BuiltinPlugins.registry(), makeStore: { InMemoryTokenStore(group: $0, backing: backing) },
      clock: FixedClock(Self.now), environment: environment, output: output,
      readInput: { _ in Array(input.utf8) }, terminal: { terminal })
    let status = await TokenCtl.main(arguments: ["credential", operation], context: context)
    return (status, output.stdout, output.stderr)
  }

  @Test func getAnswersWithTheOnlyAccountOfTheHost() async throws {
    try seed("github", "1", "ada", access: "GH-TOKEN")
    try seed("gitlab", "2", "ada", access: "GL-TOKEN")
    let result = try await run("get", "protocol=https\nhost=GitHub.com\npath=acme/app.git\n\n")
    #expect(result.status == 0)
    #expect(result.stdout == "username=oauth2\npassword=GH-TOKEN\npassword_expiry_utc=1800003600\n")
    #expect(result.stderr == "")
  }

  @Test(
    arguments: [
      "protocol=https\nhost=example.org\n",
      "protocol=http\nhost=github.com\n",
      "protocol=ssh\nhost=github.com\n",
      "protocol=https\nhost=github.com.evil.example\n",
      "protocol=https\nhost=github.com:8443\n",
    ])
  func anotherHostOrProtocolGetsNothingSoGitMovesOn(input: String) async throws {
    try seed("github", "1", "ada", access: "GH-TOKEN")
    let result = try await run("get", input)
    #expect(result.status == 0)
    #expect(result.stdout == "")
    #expect(!result.stderr.contains("GH-TOKEN"))
  }

  @Test func severalAccountsAreListedAndTheURLsUsernameChooses() async throws {
    try seed("github", "1", "ada", access: "ADA")
    try seed("github", "2", "grace", access: "GRACE")
    let ambiguous = try await run("get", "protocol=https\nhost=github.com\n")
    #expect(ambiguous.status == 0)
    #expect(ambiguous.stdout == "")
    #expect(ambiguous.stderr.contains("github:ada") && ambiguous.stderr.contains("github:grace"))
    #expect(ambiguous.stderr.contains("TOKENCTL_ACCOUNT") && ambiguous.stderr.contains("https://NAME@github.com/"))
    #expect(!ambiguous.stderr.contains("ADA") && !ambiguous.stderr.contains("GRACE"))
    let byName = try await run("get", "protocol=https\nhost=github.com\nusername=grace\n")
    #expect(byName.stdout.contains("password=GRACE\n"))
    let byEnvironment = try await run(
      "get", "protocol=https\nhost=github.com\nusername=grace\n", environment: ["TOKENCTL_ACCOUNT": "github:ada"])
    #expect(byEnvironment.stdout.contains("password=ADA\n"))
  }

  func configure(_ text: String) throws {
    let file = home.appendingPathComponent("config/tokenctl/config.toml")
    try text.write(to: file, atomically: true, encoding: .utf8)
  }

  @Test func aConfigRuleChoosesByURLPrefixAndTheLongestWins() async throws {
    try seed("github", "1", "ada", access: "ADA")
    try seed("github", "2", "ada-at-acme", access: "ACME")
    try seed("github", "3", "ada-at-tools", access: "TOOLS")
    try configure(
      """
      [git.accounts]
      "https://github.com/acme/" = "github:ada-at-acme"
      "https://github.com/acme/tools" = "github:ada-at-tools"
      """)
    let acme = try await run("get", "protocol=https\nhost=github.com\npath=acme/app.git\n")
    #expect(acme.stdout.contains("password=ACME\n"))
    let tools = try await run("get", "protocol=https\nhost=github.com\npath=acme/tools.git\n")
    #expect(tools.stdout.contains("password=TOOLS\n"))
    // Outside the rules, or without a path (credential.useHttpPath unset), the usual
    // choice applies: here it is ambiguous, and the rules are offered as a way out.
    let elsewhere = try await run("get", "protocol=https\nhost=github.com\npath=acme-corp/app.git\n")
    #expect(elsewhere.stdout == "")
    #expect(elsewhere.stderr.contains("[git.accounts]"))
    let byName = try await run("get", "protocol=https\nhost=github.com\nusername=ada\n")
    #expect(byName.stdout.contains("password=ADA\n"))
    // The environment comes first.
    let named = try await run(
      "get", "protocol=https\nhost=github.com\npath=acme/app.git\n", environment: ["TOKENCTL_ACCOUNT": "github:ada"])
    #expect(named.stdout.contains("password=ADA\n"))
  }

  @Test func aConfigRuleNeverSendsATokenToAnotherHostOrAnAccountThatIsNotThere() async throws {
    try seed("gitlab", "2", "ada", access: "GL-TOKEN")
    try configure(
      """
      [git.accounts]
      "https://github.com/" = "gitlab:ada"
      "https://gitlab.com/acme" = "gitlab:grace"
      """)
    let crossing = try await run("get", "protocol=https\nhost=github.com\n")
    #expect(crossing.stdout == "")
    #expect(crossing.stderr.contains("does not serve github.com"))
    let missing = try await run("get", "protocol=https\nhost=gitlab.com\npath=acme/x.git\n")
    #expect(missing.stdout == "")
    #expect(missing.stderr.contains("gitlab:grace, which is not signed in: run 'tokenctl login gitlab'"))
  }

  @Test func aBadRuleIsReportedWithItsLine() async throws {
    try configure("[git.accounts]\n\"github.com/acme\" = \"github:ada\"\n")
    let result = try await run("get", "protocol=https\nhost=github.com\n")
    #expect(result.status == 14)
    #expect(result.stderr.contains("config.toml:2:") && result.stderr.contains("not an http or https URL"))
  }

  @Test func aForgeWithoutHostsServesTheHostOfEachAccountsInstanceOnly() async throws {
    try seed("gitea", "1", "ada", access: "CODEBERG", issuer: "https://codeberg.org/")
    try seed("gitea", "2", "ada", access: "CORP", issuer: "https://git.corp.example:3000/")
    let codeberg = try await run("get", "protocol=https\nhost=codeberg.org\n")
    #expect(codeberg.stdout.contains("username=oauth2\npassword=CODEBERG\n"))
    let corp = try await run("get", "protocol=https\nhost=git.corp.example:3000\n")
    #expect(corp.stdout.contains("password=CORP\n"))
    let other = try await run("get", "protocol=https\nhost=gitea.com\n")
    #expect(other == (0, "", ""))
    let crossing = try await run(
      "get", "protocol=https\nhost=codeberg.org\n", environment: ["TOKENCTL_ACCOUNT": "gitea:2"])
    #expect(crossing.stdout == "")
    // The configured instance is served before anyone signs in to it.
    try configure("[types.gitea]\nissuer = \"https://forge.example/\"\nclient_id = \"x\"\n")
    let configured = try await run("get", "protocol=https\nhost=forge.example\n")
    #expect(configured.stdout == "")
    #expect(configured.stderr.contains("run 'tokenctl login gitea'"))
  }

  @Test func tokenctlAccountNeverSendsATokenToAnotherHost() async throws {
    try seed("gitlab", "2", "ada", access: "GL-TOKEN")
    let result = try await run(
      "get", "protocol=https\nhost=github.com\n", environment: ["TOKENCTL_ACCOUNT": "gitlab:ada"])
    #expect(result.status == 0)
    #expect(result.stdout == "")
    #expect(result.stderr.contains("does not serve github.com"))
  }

  @Test func aServedHostWithoutAnAccountSaysWhichLoginToRun() async throws {
    let result = try await run("get", "protocol=https\nhost=gitlab.com\n")
    #expect(result.status == 0)
    #expect(result.stdout == "")
    #expect(result.stderr == "tokenctl credential: no account for gitlab.com: run 'tokenctl login gitlab' to sign in\n")
  }

  @Test func withATerminalSignInIsOfferedUnlessGitSaysNoPrompts() async throws {
    let declined = ScriptedTerminal(["n"])
    let result = try await run("get", "protocol=https\nhost=gitlab.com\n", terminal: declined)
    #expect(declined.transcript == "tokenctl: no gitlab account is signed in for gitlab.com. Sign in now? [Y/n] ")
    #expect(result.stdout == "")
    #expect(result.stderr.contains("run 'tokenctl login gitlab'"))

    let noPrompts = ScriptedTerminal(["y"])
    let quiet = try await run(
      "get", "protocol=https\nhost=gitlab.com\n", environment: ["GIT_TERMINAL_PROMPT": "0"], terminal: noPrompts)
    #expect(noPrompts.transcript == "")
    #expect(quiet.stderr.contains("run 'tokenctl login gitlab'"))
  }

  @Test func bearerOnlyWhenGitAndTheTypeBothCanAndTheAccountNameOtherwise() async throws {
    try seed("corpgit", "7", "ada", access: "CORP")
    let plain = try await run("get", "protocol=https\nhost=git.corp.example\n")
    #expect(plain.stdout == "username=ada\npassword=CORP\npassword_expiry_utc=1800003600\n")
    let bearer = try await run("get", "capability[]=authtype\nprotocol=https\nhost=git.corp.example\n")
    #expect(
      bearer.stdout
        == "capability[]=authtype\nauthtype=Bearer\ncredential=CORP\npassword_expiry_utc=1800003600\n")
    try seed("github", "1", "ada", access: "GH")
    let github = try await run("get", "capability[]=authtype\nprotocol=https\nhost=github.com\n")
    #expect(github.stdout.hasPrefix("username=oauth2\npassword=GH\n"))
  }

  @Test(
    arguments: [
      ("protocol=https\nhost=github.com\0\n", "NUL"),
      ("protocol=https\r\nhost=github.com\n", "carriage return"),
      ("protocol=https\n", "no 'host'"),
      ("host=github.com\n", "no 'protocol'"),
      ("protocol=https\nhost github.com\n", "without '='"),
    ])
  func hostileInputIsRefusedWithAReason(input: String, reason: String) async throws {
    try seed("github", "1", "ada", access: "GH")
    let result = try await run("get", input)
    #expect(result.status == 1)
    #expect(result.stdout == "")
    #expect(result.stderr.contains("refused the request") && result.stderr.contains(reason))
  }

  @Test func storeKeepsNothing() async throws {
    let result = try await run("store", "protocol=https\nhost=github.com\nusername=u\npassword=plaintext\n")
    #expect(result == (0, "", ""))
    #expect(try InMemoryTokenStore(group: "default", backing: backing).list(.all).isEmpty)
  }

  @Test func eraseMarksTheAccessTokenExpiredAndKeepsTheRefreshToken() async throws {
    try seed("github", "1", "ada", access: "GH")
    let other = try await run("erase", "protocol=https\nhost=github.com\nusername=oauth2\npassword=NOT-OURS\n")
    #expect(other.status == 0)
    #expect(try stored("github", "1")?.tokens.expiresAt == Self.now.addingTimeInterval(3600))
    let result = try await run("erase", "protocol=https\nhost=github.com\nusername=oauth2\npassword=GH\n")
    #expect(result == (0, "", ""))
    let tokens = try #require(try stored("github", "1")?.tokens)
    #expect(tokens.expiresAt == Self.now.addingTimeInterval(-1))
    #expect(tokens.refreshToken == "REFRESH")
    #expect(tokens.accessToken == "GH")
  }
}
