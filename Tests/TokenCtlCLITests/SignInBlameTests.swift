import Foundation
import Synchronization
import TestSupport
import Testing
import TokenCtlCLI
import TokenKit
import TokenStoreTesting

/// A failed sign-in names what refused it: the issuer rather than the account type, a
/// scope the server wants rather than one nobody asked for. In-process, against a
/// scripted issuer, so that each message is checked to the character.
@Suite struct SignInBlameTests {
  static let issuer = "https://id.example"

  /// A discovery document of `issuer` with `extra` members (a device endpoint, say).
  static func discovery(_ extra: [String: JSONValue] = [:]) -> HTTPResponse {
    var document: [String: JSONValue] = [
      "issuer": .string(issuer), "authorization_endpoint": .string("\(issuer)/authorize"),
      "token_endpoint": .string("\(issuer)/token"), "code_challenge_methods_supported": .array([.string("S256")]),
    ]
    document.merge(extra) { $1 }
    return ScriptedTransport.json(object: document)
  }

  /// A type file holding a client secret is read only when others cannot read it.
  static func ownerOnly(_ sandbox: CommandSandbox, _ path: String) throws {
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o600], ofItemAtPath: sandbox.home.appendingPathComponent("config/tokenctl/\(path)").path)
  }

  /// `--device` at an issuer whose discovery has no device_authorization_endpoint: the
  /// issuer does not offer it (the same type at another issuer may), and the hint is this
  /// command line with a method that needs no device endpoint.
  @Test func aDeviceSignInWhereTheIssuerOffersNoneNamesTheIssuer() async throws {
    let sandbox = CommandSandbox()
    let transport = ScriptedTransport { request throws(TransportError) in
      request.url.path() == "/.well-known/openid-configuration" ? Self.discovery() : HTTPResponse(status: 404)
    }
    let result = try await sandbox.run(
      ["login", "oidc", "--issuer", Self.issuer, "--client-id", "app", "--device"], transport: transport)
    #expect(result.status == 14)
    #expect(
      result.stderr == """
        tokenctl: the server at https://id.example does not offer the device authorization grant (no \
        device_authorization_endpoint)
        hint: Run `tokenctl login oidc --client-id app --issuer https://id.example --browser`, or `tokenctl login \
        oidc --client-id app --issuer https://id.example --paste` over SSH.

        """)
    #expect(!result.stderr.contains("type"), "\(result.stderr)")
    #expect(!transport.requests.contains { $0.url.path() == "/token" })
  }

  /// The login page's text says the same: the device grant is where the server offers it.
  @Test func loginsHelpSaysTheServerOffersTheDeviceGrantNotTheType() async throws {
    let sandbox = CommandSandbox()
    let help = try await sandbox.run(
      ["login", "--help"], transport: ScriptedTransport { _ in HTTPResponse(status: 404) })
    let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    #expect(text.contains("and the server offers it"), "\(text)")
    #expect(!text.contains("and the type supports it"), "\(text)")
  }

  /// A type without scopes signs in with client credentials asking for none, and the
  /// server wants one (`invalid_scope`): nothing was asked for, so the message says the
  /// server wants a scope, and the hint is the command again with one.
  @Test func clientCredentialsWithoutAScopeSayTheServerWantsOne() async throws {
    let sandbox = CommandSandbox()
    try sandbox.writeConfig(
      """
      id = "corp"
      issuer = "\(Self.issuer)"
      client_id = "robot"
      client_secret = "robot-secret"
      """, to: "types/corp.toml")
    try Self.ownerOnly(sandbox, "types/corp.toml")
    let transport = ScriptedTransport { request throws(TransportError) in
      switch request.url.path() {
      case "/.well-known/openid-configuration": return Self.discovery()
      case "/token":
        return ScriptedTransport.json(
          400, #"{"error":"invalid_scope","error_description":"scope is required"}"#)
      default: return HTTPResponse(status: 404)
      }
    }
    let result = try await sandbox.run(["login", "corp", "--client-credentials"], transport: transport)
    let token = try #require(transport.requests.first { $0.url.path() == "/token" })
    #expect(token[field: "scope"] == nil)
    #expect(result.status == 17, "\(result.stderr)")
    #expect(!result.stderr.contains("the scope asked for"), "\(result.stderr)")
    #expect(
      result.stderr == """
        tokenctl: the authorization server wants a scope named, and none was asked for (invalid_scope: scope is \
        required) while trying to get a token for client robot
        hint: Ask for the scope the server's administrator set up for this client: add --scope and that scope \
        to `tokenctl login corp --client-credentials`, or set scopes in the [types.corp] table of config.toml.

        """)
  }

  /// A scope that was asked for and refused keeps its own words.
  @Test func aRefusedScopeThatWasAskedForIsStillTheScopeAskedFor() async throws {
    let sandbox = CommandSandbox()
    try sandbox.writeConfig(
      """
      id = "corp"
      issuer = "\(Self.issuer)"
      client_id = "robot"
      client_secret = "robot-secret"
      """, to: "types/corp.toml")
    try Self.ownerOnly(sandbox, "types/corp.toml")
    let transport = ScriptedTransport { request throws(TransportError) in
      switch request.url.path() {
      case "/.well-known/openid-configuration": return Self.discovery()
      case "/token": return ScriptedTransport.json(400, #"{"error":"invalid_scope"}"#)
      default: return HTTPResponse(status: 404)
      }
    }
    let result = try await sandbox.run(
      ["login", "corp", "--client-credentials", "--scope", "api"], transport: transport)
    #expect(result.status == 17, "\(result.stderr)")
    #expect(result.stderr.contains("refused the scope asked for"), "\(result.stderr)")
  }

  /// A sign-in right after tokenctl registered its client (RFC 7591), refused with
  /// `invalid_client` because the provider's other workers do not know the client yet: asked
  /// once more after a pause, then said to be a registration seconds old, with the command
  /// to sign in again (which reuses the registration); no word of a client id or secret
  /// the user configured, since they configured none.
  @Test func aRefusalRightAfterRegistrationSaysItIsSecondsOldAndToSignInAgain() async throws {
    let sandbox = CommandSandbox()
    let transport = ScriptedTransport { request throws(TransportError) in
      switch request.url.path() {
      case "/.well-known/openid-configuration":
        return Self.discovery(["registration_endpoint": .string("\(Self.issuer)/register")])
      case "/register":
        return ScriptedTransport.json(201, #"{"client_id":"new-client","redirect_uris":["http://127.0.0.1/"]}"#)
      case "/token": return ScriptedTransport.json(401, #"{"error":"invalid_client"}"#)
      default: return HTTPResponse(status: 404)
      }
    }
    let output = CapturedOutput()
    let slept = Mutex<[Double]>([])
    let registrations = InMemoryClientRegistrationStore()
    var context = CLIContext(
      registry: try BuiltinPlugins.registry(),
      makeStore: { [backing = sandbox.backing] in InMemoryTokenStore(group: $0, backing: backing) },
      clock: FixedClock(CommandSandbox.now), environment: ["HOME": sandbox.home.path], output: output,
      transport: transport, openBrowser: { _, _ in nil },
      // The user pastes the address the browser ended on, the request's state in it.
      readLine: {
        guard let state = output.stderr.firstMatch(of: /[?&]state=([^&\s]+)/)?.1 else { return nil }
        return "http://127.0.0.1/?code=CODE&state=\(state)"
      },
      sleep: { seconds in slept.withLock { $0.append(seconds) } })
    context.registrations = registrations
    let status = await TokenCtl.main(
      arguments: ["login", "oidc", "--issuer", Self.issuer, "--paste"], context: context)
    #expect(status == 11, "\(output.stderr)")
    #expect(transport.requests.filter { $0.url.path() == "/token" }.count == 2)
    #expect(slept.withLock { $0 } == [3])
    // The last two lines, the first after the paste's prompt.
    let lines = output.stderr.split(separator: "\n").suffix(2).map {
      String($0.replacing("Paste the address your browser was sent to (or the code): ", with: ""))
    }
    #expect(
      lines == [
        "tokenctl: the authorization server does not know client new-client yet (invalid_client) while trying to "
          + "exchange the authorization code at https://id.example/token: tokenctl registered it there 0 s ago, and "
          + "a server that runs several workers may take a while to tell them all",
        "hint: Run `tokenctl login oidc --issuer https://id.example --paste` again.",
      ], "\(output.stderr)")
    #expect(!output.stderr.contains("client id and secret"))
    // The registration is kept, for the sign-in again to use.
    #expect(try registrations.load(issuer: Self.issuer)?.clientID == "new-client")
  }
}
