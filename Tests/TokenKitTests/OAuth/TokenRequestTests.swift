import Foundation
import TestSupport
import Testing
import TokenKit

@Suite struct OAuthTokenRequestTests {
  typealias F = OAuthFixtures
  typealias Recorded = ScriptedTransport.RecordedRequest

  static let endpoint = URL(string: "https://login.example/oauth2/token")!

  static func sent(_ grant: TokenRequest.Grant, client: ClientIdentity, extra: [String: String] = [:]) -> Recorded {
    Recorded(
      TokenRequest(endpoint: endpoint, grant: grant, client: client, additionalParameters: extra).httpRequest)
  }

  static let publicClient = ClientIdentity(id: "app")

  @Test(arguments: [
    (
      TokenRequest.Grant.authorizationCode(code: "the-code", redirectURI: "http://127.0.0.1:1/cb", codeVerifier: "v"),
      [
        ("grant_type", "authorization_code"), ("code", "the-code"), ("redirect_uri", "http://127.0.0.1:1/cb"),
        ("code_verifier", "v"), ("client_id", "app"),
      ]
    ),
    (.refreshToken("RT-1"), [("grant_type", "refresh_token"), ("refresh_token", "RT-1"), ("client_id", "app")]),
    (
      .refreshToken("RT-1", scope: ["a", "b"]),
      [("grant_type", "refresh_token"), ("refresh_token", "RT-1"), ("scope", "a b"), ("client_id", "app")]
    ),
    (.clientCredentials(scope: []), [("grant_type", "client_credentials"), ("client_id", "app")]),
    (
      .clientCredentials(scope: ["api://x/.default"]),
      [("grant_type", "client_credentials"), ("scope", "api://x/.default"), ("client_id", "app")]
    ),
    (
      .deviceCode("DC-1"),
      [("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", "DC-1"), ("client_id", "app")]
    ),
  ])
  func bodyOfEachGrant(grant: TokenRequest.Grant, fields: [(String, String)]) {
    let request = Self.sent(grant, client: Self.publicClient)
    #expect(request.method == "POST")
    #expect(request.url == Self.endpoint)
    #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
    #expect(request.header("Accept") == "application/json")
    #expect(request.header("Authorization") == nil)
    #expect(request.form.map(\.name) == fields.map(\.0))
    #expect(request.form.map(\.value) == fields.map(\.1))
  }

  @Test func additionalParametersFollowTheGrantsOwn() {
    let request = Self.sent(.refreshToken("RT"), client: Self.publicClient, extra: ["resource": "r", "audience": "a"])
    #expect(request.fieldNames == ["grant_type", "refresh_token", "audience", "resource", "client_id"])
  }

  @Test func publicClientSendsItsIDOnly() {
    let request = Self.sent(.refreshToken("RT"), client: ClientIdentity(id: "app", authentication: .none))
    #expect(request[field: "client_id"] == "app")
    #expect(request[field: "client_secret"] == nil)
    #expect(request.header("Authorization") == nil)
  }

  @Test func clientSecretPostPutsBothInTheBody() {
    let client = ClientIdentity(id: "app", secret: "p@ss word", authentication: .clientSecretPost)
    let request = Self.sent(.refreshToken("RT"), client: client)
    #expect(request[field: "client_id"] == "app")
    #expect(request[field: "client_secret"] == "p@ss word")
    #expect(request.header("Authorization") == nil)
  }

  @Test func aSecretWithoutAMethodIsPosted() {
    let client = ClientIdentity(id: "app", secret: "s")
    #expect(client.authentication == .clientSecretPost)
    #expect(Self.sent(.clientCredentials(scope: []), client: client)[field: "client_secret"] == "s")
  }

  /// RFC 6749 §2.3.1: the id and the secret are each form-encoded, then joined with a
  /// colon and Base64-encoded.
  @Test(arguments: [
    ("app", "secret", "app:secret"),
    ("my:client", "secret", "my%3Aclient:secret"),
    ("my client", "p@ss:word/1", "my+client:p%40ss%3Aword%2F1"),
    ("ümlaut", "s", "%C3%BCmlaut:s"),
  ])
  func clientSecretBasicEncodesIDAndSecret(id: String, secret: String, expectedPair: String) throws {
    let client = ClientIdentity(id: id, secret: secret, authentication: .clientSecretBasic)
    let request = Self.sent(.authorizationCode(code: "c", redirectURI: "r", codeVerifier: "v"), client: client)
    let header = try #require(request.header("Authorization"))
    #expect(header.hasPrefix("Basic "))
    let decoded = try #require(Data(base64Encoded: String(header.dropFirst(6))))
    #expect(String(decoding: decoded, as: UTF8.self) == expectedPair)
    // With Basic, neither travels in the body as well.
    #expect(request[field: "client_secret"] == nil)
    #expect(!request.bodyText.contains(secret))
  }

  @Test(arguments: ClientAuthenticationMethod.allCases)
  func descriptionsHoldNoSecret(method: ClientAuthenticationMethod) {
    let client = ClientIdentity(id: "app", secret: "CLIENT-SECRET", authentication: method)
    for grant in [
      TokenRequest.Grant.authorizationCode(code: "AUTH-CODE", redirectURI: "r", codeVerifier: "VERIFIER"),
      .refreshToken("REFRESH-TOKEN"), .deviceCode("DEVICE-CODE"), .clientCredentials(scope: ["s"]),
    ] {
      let request = TokenRequest(endpoint: Self.endpoint, grant: grant, client: client)
      for text in [
        request.description, String(describing: request.httpRequest), String(reflecting: request.httpRequest),
        client.description,
      ] {
        for secret in ["CLIENT-SECRET", "AUTH-CODE", "VERIFIER", "REFRESH-TOKEN", "DEVICE-CODE"] {
          #expect(!text.contains(secret), "\(text) shows \(secret)")
        }
      }
      #expect(request.description.contains(grant.type))
    }
  }
}

@Suite struct OAuthTokenResponseTests {
  typealias F = OAuthFixtures

  static func decode(_ text: String) throws(AuthorizationServiceError) -> TokenResponse {
    try TokenResponse(json: Array(text.utf8))
  }

  @Test func decodesAFullResponse() throws {
    let response = try Self.decode(
      #"{"access_token":"AT","token_type":"Bearer","expires_in":3599,"refresh_token":"RT","id_token":"ID","scope":"openid email","extra":{"x":[1,2]}}"#
    )
    #expect(response.accessToken == "AT")
    #expect(response.tokenType == "Bearer")
    #expect(response.expiresIn == 3599)
    #expect(response.refreshToken == "RT")
    #expect(response.idToken == "ID")
    #expect(response.scope == ["openid", "email"])
  }

  @Test(arguments: [
    (#"{"access_token":"AT","token_type":"bearer","expires_in":"3599"}"#, 3599.0 as Double?),
    (#"{"access_token":"AT","token_type":"bearer","expires_in":3599.5}"#, 3599.5),
    (#"{"access_token":"AT","token_type":"bearer"}"#, nil),
    (#"{"access_token":"AT","token_type":"bearer","expires_in":null}"#, nil),
    (#"{"access_token":"AT","token_type":"bearer","expires_in":"soon"}"#, nil),
  ])
  func readsExpiresIn(body: String, expected: Double?) throws {
    #expect(try Self.decode(body).expiresIn == expected)
  }

  /// The oauth-response fuzz target found `"expires_in":3608…880` (84 digits) trapping
  /// `description`; a NaN or an infinity (`"nan"`, as a string) did too, and all of them
  /// trapped storing the token set, whose expiry is kept as whole seconds.
  @Test(arguments: [#""nan""#, #""inf""#, #""-infinity""#, "1e300", #""1e300""#, "-1e300", "1e10000"])
  func anUnusableExpiresInCountsAsAbsent(expiresIn: String) throws {
    let response = try Self.decode(#"{"access_token":"AT","token_type":"Bearer","expires_in":\#(expiresIn)}"#)
    #expect(response.expiresIn == nil)
    #expect(response.description.contains("expires_in: none"))
    let tokens = response.tokenSet(receivedAt: F.now)
    #expect(tokens.expiresAt == nil)
    #expect(try TokenSet(storageJSON: tokens.storageJSON(), item: "corp").accessToken == "AT")
  }

  @Test func aLongButRealLifetimeIsKept() throws {
    // Int32.max seconds: what some servers send for a token that does not expire.
    let response = try Self.decode(#"{"access_token":"AT","token_type":"Bearer","expires_in":2147483647}"#)
    #expect(response.expiresIn == 2_147_483_647)
  }

  @Test func anEmptyRefreshTokenIsNone() throws {
    #expect(try Self.decode(#"{"access_token":"AT","token_type":"Bearer","refresh_token":""}"#).refreshToken == nil)
  }

  @Test(arguments: [
    (#"{"token_type":"Bearer","refresh_token":"RT-SECRET"}"#, "access_token"),
    (#"{"access_token":"","token_type":"Bearer","refresh_token":"RT-SECRET"}"#, "access_token"),
    (#"{"access_token":42,"token_type":"Bearer"}"#, "access_token"),
    (#"{"access_token":"AT-SECRET","refresh_token":"RT-SECRET"}"#, "token_type"),
    ("", "empty"),
    ("[1,2,3]", "not a JSON object"),
    (#""AT-SECRET""#, "not a JSON object"),
    ("{not json", "not a JSON object"),
    ("<html>AT-SECRET</html>", "not a JSON object"),
  ])
  func refusesAMalformedResponse(body: String, problem: String) {
    let error = #expect(throws: AuthorizationServiceError.self) { try Self.decode(body) }
    guard case .malformedResponse(let message)? = error else {
      Issue.record("expected a malformed response, got \(String(describing: error))")
      return
    }
    #expect(message.contains(problem))
    #expect(message.contains("token response"))
    #expect(!message.contains("SECRET"))
  }

  @Test func tokenSetKeepsThePreviousRefreshAndIDTokens() throws {
    let now = F.now
    let previous = TokenSet(
      accessToken: "AT-0", refreshToken: "RT-0", idToken: "ID-0", expiresAt: now, scope: ["a", "b"],
      issuedAt: now.addingTimeInterval(-3600))
    let response = try Self.decode(#"{"access_token":"AT-1","token_type":"Bearer","expires_in":600}"#)
    let tokens = response.tokenSet(receivedAt: now, previous: previous)
    #expect(tokens.accessToken == "AT-1")
    #expect(tokens.refreshToken == "RT-0")
    #expect(tokens.idToken == "ID-0")
    #expect(tokens.scope == ["a", "b"])
    #expect(tokens.issuedAt == now)
    #expect(tokens.expiresAt == now.addingTimeInterval(600))
    #expect(tokens.lifetime == 600)
  }

  @Test func tokenSetTakesWhatTheResponseCarries() throws {
    let previous = TokenSet(accessToken: "AT-0", refreshToken: "RT-0", idToken: "ID-0", scope: ["a"])
    let response = try Self.decode(
      #"{"access_token":"AT-1","token_type":"DPoP","refresh_token":"RT-1","id_token":"ID-1","scope":"c"}"#)
    let tokens = response.tokenSet(receivedAt: F.now, previous: previous, requestedScope: ["z"])
    #expect(tokens.refreshToken == "RT-1")
    #expect(tokens.idToken == "ID-1")
    #expect(tokens.scope == ["c"])
    #expect(tokens.tokenType == "DPoP")
    #expect(tokens.expiresAt == nil)
    #expect(tokens.issuedAt == F.now)
  }

  @Test func absentScopeMeansTheRequestedScope() throws {
    let response = try Self.decode(#"{"access_token":"AT","token_type":"Bearer"}"#)
    #expect(response.tokenSet(receivedAt: F.now, requestedScope: ["openid", "email"]).scope == ["openid", "email"])
    #expect(response.tokenSet(receivedAt: F.now).scope == nil)
    #expect(response.tokenSet(receivedAt: F.now).refreshToken == nil)
  }

  @Test func descriptionRedactsTokens() {
    let response = TokenResponse(
      accessToken: "AT-SECRET", expiresIn: 60, refreshToken: "RT-SECRET", idToken: "ID-SECRET")
    let text = response.description
    #expect(!text.contains("SECRET"))
    #expect(text.contains("expires_in: 60"))
    #expect(text.contains("<redacted>"))
  }
}
