import Foundation
import TestSupport
import Testing
import TokenKit

@Suite struct OAuthAuthorizationServiceTests {
  typealias F = OAuthFixtures
  typealias T = ScriptedTransport

  static func service(_ transport: ScriptedTransport, endpoints: Endpoints = F.endpoints()) -> AuthorizationService {
    // No second attempt: these tests classify one answer (RetryPolicyTests retry).
    AuthorizationService(
      endpoints: endpoints, client: ClientIdentity(id: F.clientID), transport: transport, retry: .none)
  }

  /// The error `response` to a refresh produces.
  static func failure(of response: Result<HTTPResponse, TransportError>) async -> AuthorizationServiceError? {
    let transport = ScriptedTransport(script: [response])
    do {
      let tokens = try await service(transport).token(.refreshToken("RT-SECRET"))
      Issue.record("expected an error, got \(tokens)")
      return nil
    } catch {
      return error
    }
  }

  enum Kind: Sendable {
    case oauth(String, status: Int)
    case httpStatus(Int, retryAfter: Int?, mediaType: String?)
    case malformed(String)
    case transport(TransportError.Kind)
  }

  static let classifications: [(String, Result<HTTPResponse, TransportError>, Kind)] = [
    (
      "200 with an error body", .success(T.oauthError("invalid_grant", status: 200)),
      .oauth("invalid_grant", status: 200)
    ),
    ("400 invalid_grant", .success(T.oauthError("invalid_grant")), .oauth("invalid_grant", status: 400)),
    (
      "401 invalid_client", .success(T.oauthError("invalid_client", status: 401)), .oauth("invalid_client", status: 401)
    ),
    (
      "error body labelled text/plain",
      .success(T.json(400, #"{"error":"invalid_request"}"#, contentType: "text/plain")),
      .oauth("invalid_request", status: 400)
    ),
    (
      "503 with Retry-After",
      .success(
        HTTPResponse(
          status: 503,
          headers: [HTTPHeader("content-type", "text/html; charset=utf-8"), HTTPHeader("retry-after", "2")],
          body: Array("<html>down</html>".utf8))),
      .httpStatus(503, retryAfter: 2, mediaType: "text/html")
    ),
    (
      "503 with an HTTP-date Retry-After",
      .success(HTTPResponse(status: 503, headers: [HTTPHeader("Retry-After", "Fri, 31 Dec 1999 23:59:59 GMT")])),
      .httpStatus(503, retryAfter: nil, mediaType: nil)
    ),
    ("502 without a body", .success(HTTPResponse(status: 502)), .httpStatus(502, retryAfter: nil, mediaType: nil)),
    (
      "404 with JSON that is no OAuth error", .success(T.json(404, #"{"message":"not found"}"#)),
      .httpStatus(404, retryAfter: nil, mediaType: "application/json")
    ),
    (
      "HTML with 200",
      .success(T.text(200, "<html><body>Sign in to the proxy</body></html>", contentType: "text/html")),
      .malformed("HTML page")
    ),
    (
      "empty 200", .success(HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "application/json")])),
      .malformed("empty")
    ),
    ("empty 200 without a type", .success(HTTPResponse(status: 200)), .malformed("empty")),
    ("invalid JSON", .success(T.json(200, #"{"access_token": "AT", "#)), .malformed("not a JSON object")),
    ("a JSON array", .success(T.json(200, "[]")), .malformed("not a JSON object")),
    ("no token type", .success(T.json(200, #"{"access_token":"AT"}"#)), .malformed("token_type")),
    (
      "a dead network", .failure(TransportError(.connectionFailed, "127.0.0.1:9 refused")),
      .transport(.connectionFailed)
    ),
    ("a timeout", .failure(TransportError(.timedOut, "no answer in 30 s")), .transport(.timedOut)),
  ]

  @Test(arguments: classifications)
  func classifies(_ name: String, response: Result<HTTPResponse, TransportError>, expected: Kind) async throws {
    let error = try #require(await Self.failure(of: response), "\(name)")
    switch (error, expected) {
    case (.oauth(let oauth, let status), .oauth(let code, let expectedStatus)):
      #expect(oauth.code == code, "\(name)")
      #expect(status == expectedStatus, "\(name)")
    case (.httpStatus(let status, let retryAfter, let mediaType), .httpStatus(let s, let r, let m)):
      #expect(status == s, "\(name)")
      #expect(retryAfter == r, "\(name)")
      #expect(mediaType == m, "\(name)")
    case (.malformedResponse(let message), .malformed(let problem)):
      #expect(message.contains(problem), "\(name): \(message)")
    case (.transport(let transport), .transport(let kind)):
      #expect(transport.kind == kind, "\(name)")
    default:
      Issue.record("\(name): got \(error), expected \(expected)")
    }
  }

  @Test(arguments: [
    T.json(200, #"{"access_token":"AT","token_type":"Bearer"}"#),
    T.json(200, #"{"access_token":"AT","token_type":"Bearer"}"#, contentType: "application/json; charset=UTF-8"),
    // Mislabelled JSON is still JSON.
    T.json(200, #"{"access_token":"AT","token_type":"Bearer"}"#, contentType: "text/plain"),
    T.json(201, #"{"access_token":"AT","token_type":"Bearer"}"#, contentType: "application/vnd.x+json"),
  ])
  func acceptsJSONTokens(response: HTTPResponse) async throws {
    let transport = ScriptedTransport(responses: [response])
    let tokens = try await Self.service(transport).token(.refreshToken("RT"))
    #expect(tokens.accessToken == "AT")
  }

  @Test func oauthErrorKeepsDescriptionAndURIButCleansThem() async throws {
    let response = T.json(
      400,
      #"{"error":"invalid_grant","error_description":"Token\u001b[31m expired\nrelogin","error_uri":"https://e.example/x"}"#
    )
    guard case .oauth(let oauth, _)? = await Self.failure(of: .success(response)) else {
      Issue.record("not an OAuth error")
      return
    }
    // Escaped, not blanked: what the server sent stays readable; its first line is the
    // description, the rest kept apart.
    #expect(oauth.errorDescription == #"Token\u{1b}[31m expired"#)
    #expect(oauth.details == "relogin")
    #expect(oauth.errorURI == "https://e.example/x")
    #expect(oauth.description == #"invalid_grant: Token\u{1b}[31m expired"#)
    let long = OAuthError(code: "x", errorDescription: String(repeating: "a", count: 1000))
    #expect(long.errorDescription?.count == 301)
  }

  @Test func tokenSendsTheGrantToTheTokenEndpoint() async throws {
    let transport = ScriptedTransport(responses: [T.tokens(access: "AT")])
    _ = try await Self.service(transport).token(.refreshToken("RT-1"), additionalParameters: ["resource": "api"])
    let request = try #require(transport.requests.first)
    #expect(transport.requestCount == 1)
    #expect(request.url == F.tokenURL)
    #expect(request.fieldNames == ["grant_type", "refresh_token", "resource", "client_id"])
  }

  @Test func revokeSendsTokenAndHintAndAcceptsAnEmptyAnswer() async throws {
    let transport = ScriptedTransport(responses: [HTTPResponse(status: 200)])
    try await Self.service(transport).revoke("RT-1", hint: "refresh_token")
    let request = try #require(transport.requests.first)
    #expect(request.url == F.revocationURL)
    #expect(request.form.map(\.name) == ["token", "token_type_hint", "client_id"])
    #expect(request[field: "token"] == "RT-1")
    #expect(request[field: "token_type_hint"] == "refresh_token")
  }

  @Test func revokeReportsAFailure() async throws {
    let transport = ScriptedTransport(responses: [HTTPResponse(status: 503, headers: [HTTPHeader("Retry-After", "7")])])
    await #expect(throws: AuthorizationServiceError.httpStatus(503, retryAfter: 7, mediaType: nil)) {
      try await Self.service(transport).revoke("AT", hint: "access_token")
    }
    let none = ScriptedTransport(responses: [])
    let error = await #expect(throws: AuthorizationServiceError.self) {
      try await Self.service(none, endpoints: F.endpoints(revocation: false)).revoke("AT", hint: "access_token")
    }
    guard case .malformedResponse(let message)? = error else {
      Issue.record("expected a malformed response")
      return
    }
    #expect(message.contains("no revocation endpoint"))
    #expect(none.requestCount == 0)
  }

  @Test func deviceAuthorizationSendsScopesAndReadsTheAnswer() async throws {
    let transport = ScriptedTransport(responses: [
      T.json(
        200,
        #"{"device_code":"DEVICE-SECRET","user_code":"ABCD-EFGH","verification_url":"https://e.example/device","expires_in":"900"}"#
      )
    ])
    let response = try await Self.service(transport).deviceAuthorization(scopes: ["openid", "offline_access"])
    #expect(response.deviceCode == "DEVICE-SECRET")
    #expect(response.userCode == "ABCD-EFGH")
    #expect(response.verificationURI == "https://e.example/device")
    #expect(response.expiresIn == 900)
    #expect(response.interval == 5)
    #expect(!response.description.contains("DEVICE-SECRET"))
    let request = try #require(transport.requests.first)
    #expect(request.url == F.deviceURL)
    #expect(request[field: "scope"] == "openid offline_access")
    #expect(request[field: "client_id"] == F.clientID)
  }

  @Test func deviceAuthorizationRefusesAnIncompleteAnswer() async throws {
    let transport = ScriptedTransport(responses: [T.json(200, #"{"device_code":"DC","user_code":"U","expires_in":9}"#)])
    let error = await #expect(throws: AuthorizationServiceError.self) {
      try await Self.service(transport).deviceAuthorization(scopes: [])
    }
    guard case .malformedResponse(let message)? = error else {
      Issue.record("expected a malformed response")
      return
    }
    #expect(message.contains("verification_uri"))
    #expect(transport.requests.first?[field: "scope"] == nil)
  }

  /// Like the token response's `expires_in` the fuzzer found: a device code living
  /// "forever" trapped `description` and the device flow's countdown (`Int(left)`).
  @Test(arguments: [#""nan""#, #""inf""#, "1e300", "-1e300"])
  func aDeviceAuthorizationWithAnUnusableExpiresInIsRefused(expiresIn: String) {
    let body =
      #"{"device_code":"DC","user_code":"U","verification_uri":"https://e.example/d","expires_in":\#(expiresIn)}"#
    #expect(throws: AuthorizationServiceError.self) { try DeviceAuthorizationResponse(json: Array(body.utf8)) }
  }

  @Test(arguments: [#""nan""#, #""-inf""#, "1e300"])
  func anUnusableIntervalIsTheDefaultFiveSeconds(interval: String) throws {
    let body =
      #"{"device_code":"DC","user_code":"U","verification_uri":"https://e.example/d","expires_in":600,"interval":\#(interval)}"#
    let response = try DeviceAuthorizationResponse(json: Array(body.utf8))
    #expect(response.interval == 5)
    #expect(response.description.contains("interval: 5"))
  }
}

@Suite struct OAuthErrorMappingTests {
  static let action = "refresh the tokens of corp:ada@example.org"

  static let cases: [(AuthorizationServiceError, TokenKitError.Code, String)] = [
    (.oauth(OAuthError(code: "invalid_grant"), status: 400), .needsSignIn, "invalid_grant"),
    (.oauth(OAuthError(code: "invalid_grant"), status: 200), .needsSignIn, "invalid_grant"),
    (.oauth(OAuthError(code: "access_denied"), status: 400), .accessDenied, "access_denied"),
    (.oauth(OAuthError(code: "invalid_client"), status: 401), .serverError, "does not accept this client"),
    (.oauth(OAuthError(code: "unauthorized_client"), status: 400), .serverError, "does not accept this client"),
    (.oauth(OAuthError(code: "invalid_request", errorDescription: "no"), status: 400), .serverError, "HTTP 400"),
    (
      .oauth(OAuthError(code: "invalid_scope", errorDescription: "no"), status: 400), .scopeRefused,
      "refused the scope asked for (invalid_scope: no)"
    ),
    (.httpStatus(503, retryAfter: 2, mediaType: "text/html"), .serverError, "HTTP 503 with text/html"),
    (.httpStatus(500, retryAfter: nil, mediaType: nil), .serverError, "HTTP 500"),
    (.malformedResponse("the token response is empty"), .serverError, "the token response is empty"),
    (.transport(TransportError(.dnsFailure, "login.example does not resolve")), .networkFailure, "does not resolve"),
  ]

  @Test(arguments: cases)
  func maps(error: AuthorizationServiceError, code: TokenKitError.Code, phrase: String) {
    let mapped = TokenKitError(error, while: Self.action, signingInAgainTo: "corp")
    #expect(mapped.code == code)
    #expect(mapped.message.contains(phrase))
    #expect(mapped.message.contains(Self.action))
    if code == .needsSignIn {
      #expect(mapped.remedy == .signIn(type: "corp", device: false))
      #expect(mapped.recovery?.contains("unchanged") == false)
    } else if code != .accessDenied {
      #expect(mapped.recovery?.contains("The stored tokens are unchanged.") == true)
    }
  }

  @Test func retryAfterIsRelayedOnlyFor5xx() {
    let unavailable = TokenKitError(.httpStatus(503, retryAfter: 2, mediaType: nil), while: Self.action)
    #expect(unavailable.recovery?.contains("Try again in 2 s.") == true)
    let later = TokenKitError(.httpStatus(502, retryAfter: nil, mediaType: nil), while: Self.action)
    #expect(later.recovery?.contains("Try again later.") == true)
    let notFound = TokenKitError(.httpStatus(404, retryAfter: nil, mediaType: nil), while: Self.action)
    #expect(notFound.recovery?.contains("Try again") == false)
  }

  /// Whatever goes wrong during a refresh, the refresh token sent never reaches the
  /// message the user (or a log) sees.
  @Test(arguments: OAuthAuthorizationServiceTests.classifications.map { $0.1 })
  func messagesNeverHoldTheRefreshToken(response: Result<HTTPResponse, TransportError>) async throws {
    let error = try #require(await OAuthAuthorizationServiceTests.failure(of: response))
    let mapped = TokenKitError(error, while: Self.action)
    #expect(!mapped.fullText.contains("RT-SECRET"))
    #expect(!String(describing: error).contains("RT-SECRET"))
  }
}
