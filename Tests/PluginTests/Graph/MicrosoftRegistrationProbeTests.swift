import Foundation
import MicrosoftGraphAccount
import TestSupport
import Testing
import TokenKit

/// What the `graph` type finds out about an app registration before anyone signs in,
/// from Microsoft's answers as its documentation describes them (cited in
/// `MicrosoftRegistrationProbe`): the request it sends, and how it reads each answer.
@Suite struct MicrosoftRegistrationProbeTests {
  static let clientID = "b1e5c0de-7e57-4a11-8000-0000000000a1"

  static func configuration() throws -> ServiceConfiguration {
    let descriptor = try MicrosoftGraphPlugin.configure(
      MicrosoftGraphPlugin.descriptor, options: ["tenant": "contoso.onmicrosoft.com"])
    guard case .fixed(let endpoints) = descriptor.endpoints else { throw TokenKitError(.notConfigured, "") }
    return ServiceConfiguration(
      descriptor: descriptor, endpoints: endpoints, client: ClientIdentity(id: clientID), issuer: nil)
  }

  static func findings(
    answer: HTTPResponse
  ) async throws -> (
    findings: [String: RegistrationFinding], requests: [ScriptedTransport.RecordedRequest]
  ) {
    let transport = ScriptedTransport(script: [.success(answer)])
    let found = await MicrosoftGraphBehavior().registrationFindings(try configuration(), transport: transport)
    return (Dictionary(uniqueKeysWithValues: found.map { ($0.aspect, $0) }), transport.requests)
  }

  static func page(_ text: String) -> HTTPResponse {
    HTTPResponse(
      status: 400, headers: [HTTPHeader("Content-Type", "text/html; charset=utf-8")], body: Array(text.utf8))
  }

  @Test func aRedirectMicrosoftAnswersAtIsRegisteredAndTheRequestSignsNoOneIn() async throws {
    let (findings, requests) = try await Self.findings(
      answer: HTTPResponse(
        status: 302, headers: [HTTPHeader("Location", "http://localhost/?error=login_required&error_description=x")]))
    let redirect = try #require(findings["redirect"])
    #expect(redirect.verdict == .holds)
    #expect(redirect.neededBy == .browserSignIn)
    let request = try #require(requests.first)
    #expect(request.method == "GET" && request.request.body == nil)
    #expect(request.url.path() == "/contoso.onmicrosoft.com/oauth2/v2.0/authorize")
    let query = Dictionary(request.query.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    #expect(query["prompt"] == "none")
    #expect(query["redirect_uri"] == "http://localhost/")
    #expect(query["client_id"] == Self.clientID)
    #expect(query["login_hint"] == nil && query["client_secret"] == nil)
  }

  @Test func aPageWithAADSTS50011MeansTheRedirectIsNotRegistered() async throws {
    let (findings, _) = try await Self.findings(
      answer: Self.page(
        "<html><body><p>AADSTS50011: The redirect URI 'http://localhost/' specified in the request does not match"
          + "</p></body></html>"))
    let redirect = try #require(findings["redirect"])
    #expect(redirect.verdict == .fails)
    #expect(redirect.advice?.contains("\"Mobile and desktop applications\"") == true)
    #expect(redirect.advice?.contains(Self.clientID) == true)
  }

  @Test(arguments: [
    ("AADSTS700016: Application with identifier 'x' was not found", RegistrationFinding.Verdict.fails),
    ("AADSTS90002: Tenant 'x' not found", .unknown),
    ("Sorry, but we're having trouble signing you in.", .unknown),
  ])
  func otherAnswersAreReadForWhatTheyShow(page: String, verdict: RegistrationFinding.Verdict) async throws {
    let (findings, _) = try await Self.findings(answer: Self.page(page))
    #expect(findings["redirect"]?.verdict == verdict)
    #expect(findings["redirect"]?.advice != nil)
  }

  @Test func aRedirectElsewhereConfirmsNothing() async throws {
    let (findings, _) = try await Self.findings(
      answer: HTTPResponse(status: 302, headers: [HTTPHeader("Location", "https://login.example.test/")]))
    #expect(findings["redirect"]?.verdict == .unknown)
  }

  /// Nothing short of a completed device sign-in shows "Allow public client flows".
  @Test func publicClientFlowsAreNeverProbedButNamed() async throws {
    let (findings, requests) = try await Self.findings(answer: Self.page(""))
    let flows = try #require(findings["public-client-flows"])
    #expect(flows.verdict == .unknown && flows.neededBy == .deviceSignIn)
    #expect(flows.advice?.contains("\"Allow public client flows\"") == true)
    #expect(requests.count == 1, "only the authorization request: \(requests)")
  }
}
