import Crypto
import Foundation
import TestSupport
import Testing
import TokenKit

@Suite struct OAuthAuthorizationRequestTests {
  typealias F = OAuthFixtures

  /// RFC 7636 Appendix B's verifier, so the expected challenge is known.
  static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

  static func request(
    endpoint: String = "https://login.example/authorize", scopes: [String] = ["openid", "email"],
    expectedIssuer: String? = nil, additional: [String: String] = [:]
  ) throws -> AuthorizationRequest {
    AuthorizationRequest(
      endpoint: try #require(URL(string: endpoint)), clientID: "client id/1", redirectURI: "http://127.0.0.1:4711/cb",
      scopes: scopes, expectedIssuer: expectedIssuer, additionalParameters: additional, state: "state-123",
      pkce: try PKCE(verifier: verifier), nonce: scopes.contains("openid") ? "nonce-456" : nil)
  }

  /// The query of `url`, decoded, in order.
  static func query(_ url: URL) -> [(String, String)] {
    url.query(percentEncoded: true).map { FormEncoding.decode($0) } ?? []
  }

  static func values(_ url: URL, _ name: String) -> [String] { query(url).filter { $0.0 == name }.map(\.1) }

  // MARK: The URL

  @Test func urlCarriesTheProtocolParameters() throws {
    let url = try Self.request().url
    #expect(url.absoluteString.hasPrefix("https://login.example/authorize?"))
    #expect(Self.values(url, "response_type") == ["code"])
    #expect(Self.values(url, "client_id") == ["client id/1"])
    #expect(Self.values(url, "redirect_uri") == ["http://127.0.0.1:4711/cb"])
    #expect(Self.values(url, "scope") == ["openid email"])
    #expect(Self.values(url, "state") == ["state-123"])
    #expect(Self.values(url, "code_challenge_method") == ["S256"])
    #expect(Self.values(url, "nonce") == ["nonce-456"])
    // S256: BASE64URL(SHA256(verifier)), computed independently here (RFC 7636 §4.2).
    let expected = Base64URL.encode(SHA256.hash(data: Array(Self.verifier.utf8)))
    #expect(expected == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    #expect(Self.values(url, "code_challenge") == [expected])
    // The verifier itself never travels through the browser.
    #expect(!url.absoluteString.contains(Self.verifier))
  }

  @Test func urlEscapesValuesSoTheyCannotAddParameters() throws {
    var request = try Self.request()
    request.state = "a&b=c d"
    let url = request.url
    #expect(Self.values(url, "state") == ["a&b=c d"])
    #expect(Self.values(url, "b").isEmpty)
    #expect(url.absoluteString.contains("client_id=client+id%2F1"))
  }

  @Test func nonceIsSentOnlyWithTheOpenIDScope() throws {
    let plain = try Self.request(scopes: ["repo", "read:org"])
    #expect(plain.nonce == nil)
    #expect(Self.values(plain.url, "nonce").isEmpty)
    #expect(Self.values(plain.url, "scope") == ["repo read:org"])

    // The default initializer makes a fresh nonce for openid, and fresh state and PKCE.
    let endpoint = try #require(URL(string: "https://login.example/authorize"))
    let first = AuthorizationRequest(endpoint: endpoint, clientID: "c", redirectURI: "r", scopes: ["openid"])
    let second = AuthorizationRequest(endpoint: endpoint, clientID: "c", redirectURI: "r", scopes: ["openid"])
    let firstNonce = try #require(first.nonce)
    #expect(Self.values(first.url, "nonce") == [firstNonce])
    #expect(first.nonce != second.nonce)
    #expect(first.state != second.state)
    #expect(first.pkce.verifier != second.pkce.verifier)
    #expect(AuthorizationRequest(endpoint: endpoint, clientID: "c", redirectURI: "r", scopes: ["email"]).nonce == nil)
  }

  @Test func additionalParametersAreAddedButCannotOverrideTheProtocol() throws {
    let url = try Self.request(additional: [
      "prompt": "select_account", "code_challenge_method": "plain", "state": "forged", "code_challenge": "x",
      "response_type": "token", "redirect_uri": "https://evil.example/", "nonce": "n", "client_id": "other",
      "scope": "admin",
    ]).url
    #expect(Self.values(url, "prompt") == ["select_account"])
    #expect(Self.values(url, "code_challenge_method") == ["S256"])
    #expect(Self.values(url, "state") == ["state-123"])
    #expect(Self.values(url, "response_type") == ["code"])
    #expect(Self.values(url, "redirect_uri") == ["http://127.0.0.1:4711/cb"])
    #expect(Self.values(url, "nonce") == ["nonce-456"])
    #expect(Self.values(url, "client_id") == ["client id/1"])
    #expect(Self.values(url, "scope") == ["openid email"])
    #expect(Self.values(url, "code_challenge").count == 1)
    #expect(Self.query(url).count == 9)
  }

  @Test func anEndpointWithAQueryKeepsIt() throws {
    let url = try Self.request(endpoint: "https://login.example/authorize?tenant=abc&p=B2C_1_signin").url
    #expect(
      url.absoluteString.hasPrefix("https://login.example/authorize?tenant=abc&p=B2C_1_signin&response_type=code&"))
    #expect(Self.values(url, "tenant") == ["abc"])
    #expect(Self.values(url, "p") == ["B2C_1_signin"])
    #expect(url.absoluteString.components(separatedBy: "?").count == 2)
  }

  @Test func descriptionShowsNeitherStateNorVerifierNorNonce() throws {
    let text = try Self.request().description
    #expect(!text.contains("state-123"))
    #expect(!text.contains(Self.verifier))
    #expect(!text.contains("nonce-456"))
  }

  // MARK: Judging callbacks

  enum Expected: Sendable {
    case accept, reject, ignore
  }

  static func callback(_ pairs: [(String, String)]) -> AuthorizationCallback {
    AuthorizationCallback(parameters: pairs.map { AuthorizationCallback.Parameter($0.0, $0.1) })
  }

  static let judgements: [(String, [(String, String)], String?, Bool, Expected)] = [
    ("right state and code", [("code", "c-1"), ("state", "state-123")], nil, false, .accept),
    ("wrong state", [("code", "c-1"), ("state", "state-999")], nil, false, .ignore),
    ("missing state", [("code", "c-1")], nil, false, .ignore),
    ("empty state", [("code", "c-1"), ("state", "")], nil, false, .ignore),
    ("no code", [("state", "state-123")], nil, false, .ignore),
    ("empty code", [("code", ""), ("state", "state-123")], nil, false, .ignore),
    ("access denied", [("error", "access_denied"), ("state", "state-123")], nil, false, .reject),
    ("access denied, wrong state", [("error", "access_denied"), ("state", "nope")], nil, false, .ignore),
    ("access denied without state", [("error", "access_denied")], nil, false, .ignore),
    ("other error", [("error", "invalid_scope"), ("state", "state-123")], nil, false, .reject),
    (
      "iss matches", [("code", "c-1"), ("state", "state-123"), ("iss", "https://issuer.example")],
      "https://issuer.example", false, .accept
    ),
    (
      "iss mismatch", [("code", "c-1"), ("state", "state-123"), ("iss", "https://evil.example")],
      "https://issuer.example", false, .reject
    ),
    // RFC 9207 §2.4: a server that sends iss must send it with every code.
    ("iss missing", [("code", "c-1"), ("state", "state-123")], "https://issuer.example", false, .reject),
    // An error without iss still ends the sign-in as the refusal it is.
    (
      "error without iss", [("error", "access_denied"), ("state", "state-123")], "https://issuer.example", false,
      .reject
    ),
    (
      "error with a wrong iss", [("error", "access_denied"), ("state", "state-123"), ("iss", "https://evil.example")],
      "https://issuer.example", false, .reject
    ),
    (
      "iss mismatch, wrong state", [("code", "c-1"), ("state", "x"), ("iss", "https://evil.example")],
      "https://issuer.example", false, .ignore
    ),
    (
      "iss not expected", [("code", "c-1"), ("state", "state-123"), ("iss", "https://anything.example")], nil,
      false, .accept
    ),
    ("repeated state", [("code", "c-1"), ("state", "state-123"), ("state", "state-123")], nil, false, .ignore),
    ("repeated code", [("code", "c-1"), ("code", "c-2"), ("state", "state-123")], nil, false, .ignore),
    (
      "repeated iss", [("code", "c-1"), ("state", "state-123"), ("iss", "a"), ("iss", "a")], nil, false,
      .ignore
    ),
    ("repeated error", [("error", "a"), ("error", "b"), ("state", "state-123")], nil, false, .ignore),
    ("bare code allowed", [("code", "c-1")], nil, true, .accept),
    ("bare code allowed with expected issuer", [("code", "c-1")], "https://issuer.example", true, .accept),
    ("bare code not allowed", [("code", "c-1")], nil, false, .ignore),
    ("bare empty code", [("code", "")], nil, true, .ignore),
    ("code and state with bare allowed", [("code", "c-1"), ("state", "state-123")], nil, true, .accept),
    ("code and wrong state with bare allowed", [("code", "c-1"), ("state", "x")], nil, true, .ignore),
  ]

  @Test(arguments: judgements)
  func judge(_ name: String, _ pairs: [(String, String)], issuer: String?, bare: Bool, expected: Expected) throws {
    let request = try Self.request(expectedIssuer: issuer)
    let verdict = request.judge(Self.callback(pairs), bareCodeAllowed: bare)
    switch (verdict, expected) {
    case (.accept, .accept), (.reject, .reject), (.ignore, .ignore): break
    default: Issue.record("\(name): got \(verdict), expected \(expected)")
    }
  }

  @Test func outcomeOfAnAcceptedCallbackIsItsCode() throws {
    let request = try Self.request()
    #expect(try request.outcome(of: Self.callback([("state", "state-123"), ("code", "the-code")])) == "the-code")
    #expect(try request.outcome(of: Self.callback([("code", "pasted")]), bareCodeAllowed: true) == "pasted")
  }

  @Test func outcomeOfAccessDeniedIsAccessDenied() throws {
    let request = try Self.request()
    let callback = Self.callback([
      ("error", "access_denied"), ("error_description", "The user said no"), ("state", "state-123"),
    ])
    guard case .reject(let message) = request.judge(callback) else {
      Issue.record("access_denied was not rejected")
      return
    }
    #expect(message.contains("access_denied"))
    let error = #expect(throws: TokenKitError.self) { try request.outcome(of: callback) }
    #expect(error?.code == .accessDenied)
    #expect(error?.message.contains("The user said no") == true)
  }

  /// Some servers (django-oauth-toolkit) send `iss` with codes but not with errors.
  @Test func outcomeOfAccessDeniedWithoutIssFromAnIssSendingServerIsAccessDenied() throws {
    let request = try Self.request(expectedIssuer: "https://issuer.example")
    let callback = Self.callback([("error", "access_denied"), ("state", "state-123")])
    let error = #expect(throws: TokenKitError.self) { try request.outcome(of: callback) }
    #expect(error?.code == .accessDenied)
  }

  @Test func outcomeOfAnotherErrorIsSignInFailed() throws {
    let request = try Self.request()
    let error = #expect(throws: TokenKitError.self) {
      try request.outcome(of: Self.callback([("error", "invalid_scope"), ("state", "state-123")]))
    }
    #expect(error?.code == .signInFailed)
    #expect(error?.message.contains("invalid_scope") == true)
  }

  @Test func outcomeOfAnIssuerMismatchIsSignInFailed() throws {
    let request = try Self.request(expectedIssuer: "https://issuer.example")
    for pairs in [
      [("code", "c-1"), ("state", "state-123"), ("iss", "https://evil.example")],
      [("code", "c-1"), ("state", "state-123")],
    ] {
      let error = #expect(throws: TokenKitError.self) { try request.outcome(of: Self.callback(pairs)) }
      #expect(error?.code == .signInFailed)
      #expect(error?.message.contains("https://issuer.example") == true)
    }
    // An error response from the wrong issuer is a mix-up too, not the user's refusal.
    let mixedUp = Self.callback([("error", "access_denied"), ("state", "state-123"), ("iss", "https://evil.example")])
    let error = #expect(throws: TokenKitError.self) { try request.outcome(of: mixedUp) }
    #expect(error?.code == .signInFailed)
  }

  @Test func outcomeOfAnUnusableCallbackIsSignInFailed() throws {
    let request = try Self.request()
    for pairs in [[("state", "state-123")], [("code", "c"), ("state", "other")], [("code", "c")]] {
      let error = #expect(throws: TokenKitError.self) { try request.outcome(of: Self.callback(pairs)) }
      #expect(error?.code == .signInFailed)
    }
  }

  @Test func callbackParsesAQueryAndDescribesNoValues() {
    let callback = AuthorizationCallback(query: "code=abc%2Fdef&state=s+1&iss=https%3A%2F%2Fissuer.example")
    #expect(callback["code"] == "abc/def")
    #expect(callback["state"] == "s 1")
    #expect(callback["iss"] == "https://issuer.example")
    #expect(callback.description == "AuthorizationCallback(code, state, iss)")
  }
}
