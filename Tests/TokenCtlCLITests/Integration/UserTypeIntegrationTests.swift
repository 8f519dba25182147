import Foundation
import NativeAppSupport
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenCtlCLI

/// An account type that exists only as a file in `$XDG_CONFIG_HOME/tokenctl/types`, used
/// against the real authorization server (django-oauth-toolkit) with the built-in
/// registry: signing in, refreshing and revoking need no code for it.
@Suite(.serialized) struct UserTypeIntegrationTests {
  let backing = InMemoryTokenStore.Backing()
  let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-usertype-\(UUID().uuidString)")

  init() throws {
    try FileManager.default.createDirectory(
      at: scratch.appendingPathComponent("config/tokenctl/types"), withIntermediateDirectories: true)
  }

  /// Writes the type file a user would write for this server.
  func writeTypeFile(_ server: AuthServer) throws {
    let text = """
      # Our test server, as a company's single sign-on would be described.
      id = "local"
      display_name = "Local test server"
      issuer = "\(server.issuer)"
      client_id = "\(server.nativeClientID)"
      scopes = ["openid", "profile", "email"]

      [redirect]
      host = "127.0.0.1"
      path = "/callback"
      """
    try text.write(
      to: scratch.appendingPathComponent("config/tokenctl/types/local.toml"), atomically: true, encoding: .utf8)
  }

  struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  func tokenctl(_ arguments: [String], server: AuthServer) async throws -> Run {
    var environment = server.browserEnvironment(scratch: scratch)
    environment["XDG_CONFIG_DIRS"] = scratch.appendingPathComponent("system").path
    let output = CapturedOutput()
    let backing = backing
    let context = CLIContext(
      registry: try BuiltinPlugins.registry(), makeStore: { InMemoryTokenStore(group: $0, backing: backing) },
      clock: SystemClock(), environment: environment, output: output, readLine: { nil })
    let status = await TokenCtl.main(arguments: arguments, context: context)
    return Run(status: status, stdout: output.stdout, stderr: output.stderr)
  }

  var store: InMemoryTokenStore { InMemoryTokenStore(group: "default", backing: backing) }

  func storedTokens() throws -> StoredAccount {
    let listing = try #require(try store.list(AccountQuery(type: "local")).first)
    return try #require(try store.load(listing.account.key))
  }

  @Test func aTypeFromAFileSignsInRefreshesAndRevokes() async throws {
    let server = try await AuthServer.shared
    try writeTypeFile(server)

    let types = try await tokenctl(["types"], server: server)
    #expect(types.status == 0, "\(types.stderr)")
    #expect(types.stdout.contains("local  Local test server"))
    #expect(types.stdout.contains("config/tokenctl/types/local.toml"))

    let login = try await tokenctl(["login", "local", "--browser"], server: server)
    #expect(login.status == 0, "\(login.stderr)")
    #expect(login.stdout.contains("Signed in to local as ada"))
    let signedIn = try storedTokens()
    #expect(signedIn.account.issuer == server.issuer)
    #expect(signedIn.tokens.refreshToken != nil && signedIn.tokens.idToken != nil)

    // Expired: `token` must refresh through the file's type.
    var expired = signedIn
    expired.tokens.expiresAt = Date().addingTimeInterval(-60)
    try store.save(expired.account, tokens: expired.tokens)
    let token = try await tokenctl(["token", "local:ada"], server: server)
    #expect(token.status == 0, "\(token.stderr)")
    let refreshed = try storedTokens()
    #expect(token.stdout == refreshed.tokens.accessToken + "\n")
    #expect(refreshed.tokens.accessToken != signedIn.tokens.accessToken)

    let refresh = try await tokenctl(["refresh", "local:ada"], server: server)
    #expect(refresh.status == 0, "\(refresh.stderr)")
    #expect(try storedTokens().tokens.accessToken != refreshed.tokens.accessToken)

    let revoke = try await tokenctl(["revoke", "local:ada"], server: server)
    #expect(revoke.status == 0, "\(revoke.stderr)")
    #expect(revoke.stderr.contains("Revoked the tokens of local:ada at the server"))
    #expect(try store.list(.all).isEmpty)
  }
}
