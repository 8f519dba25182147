import Foundation
import TestSupport
import Testing
import TokenCtlCLI
import TokenKit

/// `RecordedIssuerTests` from the command line: with `[types.oidc] issuer`
/// in config.toml naming another server than the one an account signed in at, no command
/// sends that account's tokens anywhere, and each says why with exit status 14.
@Suite struct RecordedIssuerCommandTests {
  static let now = CommandSandbox.now
  static let signedInAt = "https://a.example/"
  static let configured = "https://b.example/"

  let sandbox = CommandSandbox()
  /// Answers everything at the configured issuer as a working server would, so that the
  /// old behaviour (sending the account's tokens there) would succeed and be seen.
  let transport = ScriptedTransport { request throws(TransportError) in
    switch request.url.path() {
    case "/.well-known/openid-configuration":
      let issuer = "https://\(request.url.host() ?? "")/"
      return HTTPResponse(status: 200, body: Array(discovery(issuer).utf8))
    case "/token": return ScriptedTransport.tokens(access: "NEW-ACCESS", refresh: "NEW-REFRESH")
    case "/revoke": return HTTPResponse(status: 200)
    default: return HTTPResponse(status: 404)
    }
  }

  static func discovery(_ issuer: String) -> String {
    """
    {"issuer":"\(issuer)","authorization_endpoint":"\(issuer)authorize","token_endpoint":"\(issuer)token",\
    "revocation_endpoint":"\(issuer)revoke","jwks_uri":"\(issuer)jwks","code_challenge_methods_supported":["S256"]}
    """
  }

  init() throws {
    try sandbox.writeConfig(
      """
      [types.oidc]
      issuer = "\(Self.configured)"
      client_id = "tokenctl"

      [types.gitea]
      issuer = "\(Self.configured)"
      client_id = "tokenctl"
      """)
  }

  func seed(_ type: String, expiresIn: Double) throws -> StoredAccount {
    let account = Account(
      type: type, id: "a|ada", name: "ada", group: "default", createdAt: Self.now, updatedAt: Self.now,
      issuer: Self.signedInAt, clientID: "tokenctl")
    let tokens = TokenSet(
      accessToken: "OLD-ACCESS", refreshToken: "OLD-REFRESH", expiresAt: Self.now.addingTimeInterval(expiresIn))
    try sandbox.store.save(account, tokens: tokens)
    return StoredAccount(account: account, tokens: tokens)
  }

  func run(_ arguments: [String], input: String = "") async throws -> (status: Int32, stdout: String, stderr: String) {
    try await sandbox.run(arguments, transport: transport, input: input)
  }

  func expectRefused(
    _ result: (status: Int32, stdout: String, stderr: String), kept: StoredAccount
  ) throws {
    #expect(result.status == 14)
    #expect(result.stderr.contains(Self.signedInAt) && result.stderr.contains(Self.configured), "\(result.stderr)")
    #expect(!result.stdout.contains("ACCESS"))
    #expect(transport.requestCount == 0, "\(transport.requests)")
    #expect(try sandbox.store.load(kept.account.key) == kept)
  }

  static let commands: [(arguments: [String], expiresIn: Double)] = [
    (["refresh", "oidc:ada"], 3600), (["token", "oidc:ada"], -10), (["token", "oidc:ada"], 3600),
    (["token", "--min-valid", "60", "oidc:ada"], 3600), (["revoke", "oidc:ada"], 3600),
    (["request", "--allow-host", "b.example", "oidc:ada", "https://b.example/api"], 3600),
    (["refresh", "gitea:ada"], -10),
  ]

  @Test(arguments: commands)
  func noCommandSendsAnAccountsTokensToAnotherIssuer(arguments: [String], expiresIn: Double) async throws {
    let type = arguments.contains("gitea:ada") ? "gitea" : "oidc"
    let seeded = try seed(type, expiresIn: expiresIn)
    try expectRefused(try await run(arguments), kept: seeded)
  }

  @Test(arguments: [3600.0, -10])
  func gitGetsNoTokenForAnAccountWhoseIssuerMoved(expiresIn: Double) async throws {
    let seeded = try seed("gitea", expiresIn: expiresIn)
    let result = try await run(["credential", "get"], input: "protocol=https\nhost=a.example\n\n")
    try expectRefused(result, kept: seeded)
  }

  /// A type file's issuer edited after an account signed in: the same refusal for every
  /// command that would hand the account's tokens on, a valid token's `token` included.
  static let userTypeCommands: [(arguments: [String], expiresIn: Double)] = [
    (["token", "corp:ada"], 3600), (["token", "corp:ada"], -10), (["token", "--json", "corp:ada"], 3600),
    (["token", "--scope", "other", "corp:ada"], 3600), (["refresh", "corp:ada"], 3600),
  ]

  @Test(arguments: userTypeCommands)
  func noCommandSendsAUserTypesTokensToItsNewIssuer(arguments: [String], expiresIn: Double) async throws {
    try sandbox.writeConfig(Self.typeFile(issuer: Self.signedInAt), to: "types/corp.toml")
    let seeded = try seed("corp", expiresIn: expiresIn)
    try sandbox.writeConfig(Self.typeFile(issuer: Self.configured), to: "types/corp.toml")
    try expectRefused(try await run(arguments), kept: seeded)
  }

  @Test func gitGetsNoTokenForAUserTypeWhoseIssuerMoved() async throws {
    try sandbox.writeConfig(Self.typeFile(issuer: Self.configured, host: "a.example"), to: "types/corp.toml")
    let seeded = try seed("corp", expiresIn: 3600)
    let result = try await run(["credential", "get"], input: "protocol=https\nhost=a.example\n\n")
    try expectRefused(result, kept: seeded)
  }

  static func typeFile(issuer: String, host: String? = nil) -> String {
    "id = \"corp\"\ndisplay_name = \"Corp\"\nissuer = \"\(issuer)\"\nclient_id = \"tokenctl\"\n"
      + (host.map { "\n[credentials]\nhosts = [\"\($0)\"]\nusername = \"oauth2\"\n" } ?? "")
  }

  @Test func loginAtAnotherIssuerThanTheConfiguredOneIsRefused() async throws {
    let result = try await run(["login", "oidc", "--issuer", Self.signedInAt, "--device"])
    #expect(result.status == 14)
    #expect(result.stderr.contains(Self.signedInAt) && result.stderr.contains(Self.configured), "\(result.stderr)")
    #expect(transport.requestCount == 0, "\(transport.requests)")
  }

  @Test func theConfiguredIssuersOwnAccountsAreServed() async throws {
    let account = Account(
      type: "oidc", id: "b|grace", name: "grace", group: "default", createdAt: Self.now, updatedAt: Self.now,
      issuer: Self.configured, clientID: "tokenctl")
    try sandbox.store.save(
      account, tokens: TokenSet(accessToken: "GRACE-ACCESS", expiresAt: Self.now.addingTimeInterval(3600)))
    let result = try await run(["token", "oidc:grace"])
    #expect(result.status == 0)
    #expect(result.stdout == "GRACE-ACCESS\n")
  }
}
