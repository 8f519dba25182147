import Foundation
import TestSupport
import Testing
import TokenKit

/// A token endpoint that answers with tokens no client may pass on as they are: a
/// terminal escape, a colour sequence or a header line in a token (RFC 6749 Appendix A
/// allows printable ASCII only). The response is refused, what it issued is revoked, and
/// the error names the member without repeating its content.
@Suite struct HostileTokenResponseTests {
  typealias F = OAuthFixtures
  typealias T = ScriptedTransport

  static let hostile = [
    "\u{1B}]0;owned\u{07}AT", "AT\u{1B}[31mred", "AT\r\nX-Injected: yes", "AT\nX", "AT\u{7F}", "AT\u{00E9}",
  ]

  static func service(_ transport: ScriptedTransport, revocation: Bool = true) -> AuthorizationService {
    AuthorizationService(
      endpoints: F.endpoints(revocation: revocation), client: ClientIdentity(id: F.clientID), transport: transport,
      retry: .none)
  }

  /// Answers the token request with `token` and records every revocation.
  static func transport(_ token: HTTPResponse) -> ScriptedTransport {
    ScriptedTransport { request throws(TransportError) in
      request.url == F.tokenURL ? token : HTTPResponse(status: 200)
    }
  }

  @Test(arguments: hostile)
  func anAccessTokenWithControlCharactersIsRefusedAndRevoked(token: String) async throws {
    let transport = Self.transport(T.tokens(access: token, refresh: "RT-NEW"))
    let error = await #expect(throws: AuthorizationServiceError.self) {
      try await Self.service(transport).token(.refreshToken("RT-OLD"))
    }
    guard case .unusableTokens(let message)? = error else {
      Issue.record("expected unusable tokens, got \(String(describing: error))")
      return
    }
    #expect(message.contains("access_token") && message.contains("revoked at the server"), "\(message)")
    #expect(!message.contains("\u{1B}") && !message.contains("\r") && !message.contains("owned"))
    let revoked = transport.requests.filter { $0.url == F.revocationURL }
    #expect(revoked.map { $0[field: "token_type_hint"] } == ["refresh_token", "access_token"])
    #expect(revoked.map { $0[field: "token"] } == ["RT-NEW", token])
  }

  @Test(arguments: hostile)
  func aRefreshTokenWithControlCharactersIsRefused(token: String) async throws {
    let transport = Self.transport(T.tokens(access: "AT", refresh: token))
    let error = await #expect(throws: AuthorizationServiceError.self) {
      try await Self.service(transport).token(.refreshToken("RT-OLD"))
    }
    guard case .unusableTokens(let message)? = error else {
      Issue.record("expected unusable tokens, got \(String(describing: error))")
      return
    }
    #expect(message.contains("refresh_token"))
    #expect(transport.requests.filter { $0.url == F.revocationURL }.count == 2)
  }

  @Test(arguments: ["Bearer\r\nX-Injected: yes", "Bea rer", "\u{1B}[2J", ""])
  func aTokenTypeThatIsNoNameIsRefused(type: String) async throws {
    let transport = Self.transport(T.json(object: ["access_token": .string("AT"), "token_type": .string(type)]))
    let error = await #expect(throws: AuthorizationServiceError.self) {
      try await Self.service(transport).token(.refreshToken("RT-OLD"))
    }
    guard case .unusableTokens(let message)? = error else {
      Issue.record("expected unusable tokens, got \(String(describing: error))")
      return
    }
    #expect(message.contains("token_type"))
  }

  @Test func withoutRevocationTheErrorSaysTheTokensLiveOn() async throws {
    let transport = Self.transport(T.tokens(access: "AT\r\nX: y", refresh: "RT-NEW"))
    let error = await #expect(throws: AuthorizationServiceError.self) {
      try await Self.service(transport, revocation: false).token(.refreshToken("RT-OLD"))
    }
    guard case .unusableTokens(let message)? = error else {
      Issue.record("expected unusable tokens, got \(String(describing: error))")
      return
    }
    #expect(message.contains("could not be revoked"))
    #expect(transport.requestCount == 1)
  }

  /// Every printable ASCII character, space included, is a token character: the check
  /// refuses nothing a standard server sends.
  @Test func printableTokensAreAccepted() async throws {
    let printable = String(decoding: (0x20...0x7E).map { UInt8($0) }, as: UTF8.self)
    let transport = Self.transport(T.tokens(access: printable, refresh: printable))
    let response = try await Self.service(transport).token(.refreshToken("RT-OLD"))
    #expect(response.accessToken == printable)
    #expect(transport.requestCount == 1)
  }
}
