import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit

/// What an authorization server's error says beyond RFC 6749's three members, and how
/// long it asks us to wait: the description's first line apart from the server's
/// reference, the extension members a plugin reads, `Retry-After` on an error body, and
/// bounded retries.
@Suite struct ServerErrorTests {
  typealias F = OAuthFixtures
  typealias T = ScriptedTransport

  /// Microsoft's `error_description` carries its trace and correlation ids after the
  /// sentence, separated by CR LF ("Error response",
  /// https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow#error-response-1).
  static let aadsts = #"""
    {"error":"invalid_grant","error_description":"AADSTS70008: The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization request for this user and resource.\r\nTrace ID: 0b9c4bd5-c2a8-4a8e-9c1a-7e3c2d1c2b00\r\nCorrelation ID: 3d2f3b6e-5b7b-4a53-8d6e-1f4a0f1d2c3e\r\nTimestamp: 2026-11-27 10:00:00Z","error_codes":[70008],"timestamp":"2026-11-27 10:00:00Z","trace_id":"0b9c4bd5-c2a8-4a8e-9c1a-7e3c2d1c2b00","correlation_id":"3d2f3b6e-5b7b-4a53-8d6e-1f4a0f1d2c3e","suberror":"bad_token"}
    """#

  static func failure(
    _ responses: [HTTPResponse], retry: RetryPolicy = .none
  ) async -> (AuthorizationServiceError?, ScriptedTransport) {
    let transport = ScriptedTransport(responses: responses)
    let service = AuthorizationService(
      endpoints: F.endpoints(), client: ClientIdentity(id: F.clientID), transport: transport, retry: retry)
    do {
      _ = try await service.token(.refreshToken("RT-SECRET"))
      return (nil, transport)
    } catch {
      return (error, transport)
    }
  }

  @Test func aDescriptionsFirstLineIsTheMessageAndTheRestTheServersReference() async throws {
    let (error, _) = await Self.failure([T.json(400, Self.aadsts)])
    guard case .oauth(let oauth, _)? = error else {
      throw TestFailure("not an OAuth error: \(String(describing: error))")
    }
    #expect(
      oauth.errorDescription
        == "AADSTS70008: The provided authorization code or refresh token has expired due to inactivity. Send a new "
        + "interactive authorization request for this user and resource.")
    #expect(
      oauth.details
        == "Trace ID: 0b9c4bd5-c2a8-4a8e-9c1a-7e3c2d1c2b00; Correlation ID: 3d2f3b6e-5b7b-4a53-8d6e-1f4a0f1d2c3e; "
        + "Timestamp: 2026-11-27 10:00:00Z")
    #expect(oauth.otherMembers["suberror"] == "bad_token")
    #expect(oauth.otherMembers["error_codes"] == "70008")
    #expect(oauth.otherMembers["error"] == nil)

    let message = TokenKitError(error!, while: "refresh the tokens of corp:ada", signingInAgainTo: "corp").message
    let lines = message.split(separator: "\n")
    #expect(lines.count == 2)
    #expect(lines[0].hasSuffix("for this user and resource.) while trying to refresh the tokens of corp:ada"))
    #expect(!message.contains(#"\u{d}"#))
    #expect(lines[1].hasPrefix("The server's reference: Trace ID: 0b9c4bd5"))
  }

  @Test(arguments: ["interaction_required", "login_required", "consent_required", "account_selection_required"])
  func interactionErrorsOnARefreshMeanANewSignIn(code: String) async throws {
    let (error, _) = await Self.failure([T.oauthError(code, description: "MFA is now required")])
    let failure = TokenKitError(try #require(error), while: "refresh", signingInAgainTo: "corp")
    #expect(failure.code == .needsSignIn)
    #expect(failure.message.contains(code))
    // Not for a sign-in's own exchange, where nothing stored is concerned.
    #expect(TokenKitError(try #require(error), while: "sign in").code == .serverError)
  }

  @Test func retryAfterOnAnOAuthErrorBodyIsKept() async throws {
    let busy = T.oauthError(
      "temporarily_unavailable", description: "try later", status: 503, headers: [HTTPHeader("Retry-After", "20")])
    let (error, _) = await Self.failure([busy])
    guard case .oauth(let oauth, 503)? = error else { throw TestFailure("not a 503 OAuth error") }
    #expect(oauth.retryAfter == 20)
    let failure = TokenKitError(error!, while: "refresh", signingInAgainTo: "corp")
    #expect(failure.code == .serverError)
    #expect(failure.retryAfter == 20)
    #expect(failure.recovery?.contains("Try again in 20 s.") == true)
  }

  /// Records the pauses instead of sleeping them.
  final class Pauses: Sendable {
    let taken = Mutex<[Duration]>([])
    func policy(attempts: Int = 2, budget: Duration = .seconds(6)) -> RetryPolicy {
      RetryPolicy(attempts: attempts, budget: budget) { [self] pause in taken.withLock { $0.append(pause) } }
    }
  }

  @Test func aBusyServerIsAskedAgainAfterTheWaitItNames() async throws {
    let pauses = Pauses()
    let transport = ScriptedTransport(responses: [
      T.oauthError("temporarily_unavailable", status: 503, headers: [HTTPHeader("Retry-After", "2")]),
      HTTPResponse(status: 429, headers: [HTTPHeader("Retry-After", "3")]),
      T.tokens(access: "AT-2"),
    ])
    let service = AuthorizationService(
      endpoints: F.endpoints(), client: ClientIdentity(id: F.clientID), transport: transport, retry: pauses.policy())
    let tokens = try await service.token(.refreshToken("RT-1"))
    #expect(tokens.accessToken == "AT-2")
    #expect(pauses.taken.withLock { $0 } == [.seconds(2), .seconds(3)])
    #expect(transport.requestCount == 3)
  }

  @Test func aWaitBeyondTheBudgetIsNotWaitedButReported() async throws {
    let pauses = Pauses()
    let (error, transport) = await Self.failure(
      [HTTPResponse(status: 503, headers: [HTTPHeader("Retry-After", "120")])], retry: pauses.policy())
    #expect(transport.requestCount == 1)
    #expect(pauses.taken.withLock { $0 }.isEmpty)
    let failure = TokenKitError(try #require(error), while: "refresh", signingInAgainTo: "corp")
    #expect(failure.retryAfter == 120)
    #expect(failure.recovery?.contains("Try again in 120 s.") == true)
  }

  @Test func retriesStopAfterTheirNumber() async throws {
    let pauses = Pauses()
    let (error, transport) = await Self.failure(
      Array(repeating: HTTPResponse(status: 503), count: 5), retry: pauses.policy(attempts: 2, budget: .seconds(60)))
    #expect(error != nil)
    #expect(transport.requestCount == 3)
    #expect(pauses.taken.withLock { $0 } == [.seconds(1), .seconds(1)])
  }

  @Test(arguments: [400, 401, 500])
  func otherFailuresAreNotRetried(status: Int) async throws {
    let pauses = Pauses()
    let (_, transport) = await Self.failure(
      [T.oauthError("invalid_grant", status: status), T.tokens(access: "AT")], retry: pauses.policy())
    #expect(transport.requestCount == 1)
  }

  @Test(
    arguments: [("5", 5), (" 7 ", 7), ("-1", nil), ("Fri, 31 Dec 1999 23:59:59 GMT", nil), ("", nil)]
      as [(String, Int?)])
  func retryAfterIsReadAsSeconds(header: String, seconds: Int?) {
    #expect(RetryPolicy.seconds(retryAfter: header) == seconds)
  }
}
