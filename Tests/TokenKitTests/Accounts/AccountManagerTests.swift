import Crypto
import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit

/// The authorization server of a browser sign-in: the token endpoint issues an ID token
/// for `subject` with the nonce of the presented request (or `nonce` when set), the
/// JWKS endpoint serves the signing key.
struct SignInServer {
  typealias F = OAuthFixtures
  var subject = "user-42"
  var name = "ada@example.org"
  var nonce: String?
  var idToken = true
  var accessToken = "AT-1"

  func handler(_ browser: ScriptedBrowser) -> ScriptedTransport.Handler {
    { request throws(TransportError) in
      switch request.url {
      case F.tokenURL:
        let claims = IDTokenSigner.claims(
          subject: subject, nonce: nonce ?? browser.request["nonce"], now: F.now, name: name)
        return ScriptedTransport.tokens(
          access: accessToken, refresh: "RT-1", idToken: idToken ? IDTokenSigner.sign(claims) : nil)
      case F.jwksURL:
        return ScriptedTransport.json(200, IDTokenSigner.jwks)
      case F.userinfoURL:
        return ScriptedTransport.json(200, #"{"sub":"user-7","preferred_username":"grace"}"#)
      default:
        return HTTPResponse(status: 404)
      }
    }
  }
}

@Suite(.timeLimit(.minutes(1))) struct AccountManagerSignInTests {
  typealias F = OAuthFixtures
  typealias T = ScriptedTransport
  typealias H = AccountHarness

  static func harness(
    _ server: SignInServer = SignInServer(), browser: ScriptedBrowser = ScriptedBrowser(),
    endpoints: Endpoints = F.endpoints()
  ) throws -> AccountHarness {
    try H(descriptors: [F.descriptor(endpoints: endpoints)], handler: server.handler(browser))
  }

  @Test func browserSignInStoresTheAccountOfTheIDToken() async throws {
    let browser = ScriptedBrowser()
    let harness = try Self.harness(browser: browser)
    let recorder = EventRecorder(harness.events)
    let account = try await harness.manager.signIn(type: "corp", method: browser.method)

    #expect(account.key == H.key)
    #expect(account.name == "ada@example.org")
    #expect(account.issuer == F.issuer)
    #expect(account.clientID == F.clientID)
    #expect(account.group == harness.store.group)
    #expect(account.scopes == ["openid", "profile", "offline_access"])
    #expect(account.createdAt == harness.clock.now)
    #expect(account.updatedAt == harness.clock.now)
    #expect(!account.needsSignIn)

    let stored = try #require(try harness.stored())
    #expect(stored.account == account)
    #expect(stored.tokens.accessToken == "AT-1")
    #expect(stored.tokens.refreshToken == "RT-1")
    #expect(stored.tokens.idToken != nil)
    #expect(stored.tokens.expiresAt == harness.clock.now.addingTimeInterval(3600))

    // The request the browser opened.
    let request = browser.request
    #expect(browser.url?.absoluteString.hasPrefix(F.authorizationURL.absoluteString + "?") == true)
    #expect(request["client_id"] == F.clientID)
    #expect(request["redirect_uri"] == browser.redirectURI)
    #expect(request["scope"] == "openid profile offline_access")
    #expect(request["code_challenge_method"] == "S256")
    #expect(request["nonce"] != nil)
    #expect(browser.verdicts == [.accept])

    // The code exchange, with the verifier that matches the challenge, then the keys.
    #expect(harness.transport.requests.map(\.url) == [F.tokenURL, F.jwksURL])
    let exchange = try #require(harness.transport.requests.first)
    #expect(exchange[field: "grant_type"] == "authorization_code")
    #expect(exchange[field: "code"] == "AUTH-CODE")
    #expect(exchange[field: "redirect_uri"] == browser.redirectURI)
    let verifier = try #require(exchange[field: "code_verifier"])
    #expect(Base64URL.encode(SHA256.hash(data: Array(verifier.utf8))) == request["code_challenge"])
    #expect(browser.url.map { !$0.absoluteString.contains(verifier) } == true)

    let events = await recorder.drain()
    #expect(events.map(\.kind) == [.added])
    #expect(events.first?.account == account)
  }

  @Test func signingInAgainAsTheSameUserUpdatesTheAccount() async throws {
    let harness = try H(responses: [])
    let first = ScriptedBrowser()
    var server = SignInServer()
    let manager = { (browser: ScriptedBrowser, server: SignInServer) in
      var manager = harness.manager
      manager.transport = ScriptedTransport(handler: server.handler(browser))
      return manager
    }
    let original = try await manager(first, server).signIn(type: "corp", method: first.method)
    harness.clock.advance(by: 90)
    server.name = "ada.lovelace@example.org"
    server.accessToken = "AT-2"
    let second = ScriptedBrowser()
    let renewed = try await manager(second, server).signIn(type: "corp", method: second.method)

    #expect(try harness.manager.accounts().count == 1)
    #expect(renewed.key == original.key)
    #expect(renewed.createdAt == original.createdAt)
    #expect(renewed.updatedAt == original.updatedAt.addingTimeInterval(90))
    #expect(renewed.name == "ada.lovelace@example.org")
    #expect(try harness.stored()?.tokens.accessToken == "AT-2")
  }

  @Test func signingInAgainClearsNeedsSignIn() async throws {
    let browser = ScriptedBrowser()
    let harness = try Self.harness(browser: browser)
    try harness.seed(left: -10, needsSignIn: true)
    let account = try await harness.manager.signIn(type: "corp", method: browser.method)
    #expect(!account.needsSignIn)
    #expect(try harness.stored()?.account.needsSignIn == false)
    #expect(try harness.manager.accounts().count == 1)
  }

  @Test func aDifferentUserIsAnotherAccount() async throws {
    let harness = try H(responses: [])
    for subject in ["user-42", "user-43"] {
      let browser = ScriptedBrowser()
      var manager = harness.manager
      manager.transport = ScriptedTransport(handler: SignInServer(subject: subject).handler(browser))
      try await manager.signIn(type: "corp", method: browser.method)
    }
    #expect(try harness.manager.accounts().map(\.account.id).sorted() == ["user-42", "user-43"])
  }

  @Test func aWrongNonceIsRefused() async throws {
    let browser = ScriptedBrowser()
    let harness = try Self.harness(SignInServer(nonce: "someone-elses-nonce"), browser: browser)
    let recorder = EventRecorder(harness.events)
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.manager.signIn(type: "corp", method: browser.method)
    }
    #expect(error?.code == .invalidIDToken)
    #expect(error?.message.contains("nonce") == true)
    #expect(error.map { !$0.fullText.contains("someone-elses-nonce") } == true)
    #expect(try harness.manager.accounts().isEmpty)
    #expect(await recorder.drain().isEmpty)
  }

  @Test func anIDTokenSignedByAnotherKeyIsRefused() async throws {
    let browser = ScriptedBrowser()
    let other = P256.Signing.PrivateKey().publicKey.x963Representation.dropFirst()
    let jwks =
      #"{"keys":[{"kty":"EC","crv":"P-256","kid":"\#(IDTokenSigner.keyID)","x":"\#(Base64URL.encode(other.prefix(32)))","y":"\#(Base64URL.encode(other.suffix(32)))"}]}"#
    let server = SignInServer().handler(browser)
    let harness = try H { request throws(TransportError) in
      if request.url == F.jwksURL { return T.json(200, jwks) }
      return try await server(request)
    }
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.manager.signIn(type: "corp", method: browser.method)
    }
    #expect(error?.code == .invalidIDToken)
    #expect(try harness.manager.accounts().isEmpty)
  }

  @Test func aForgedCallbackIsIgnoredAndTheGenuineOneUsed() async throws {
    let browser = ScriptedBrowser { request in
      [
        [("code", "FORGED-CODE"), ("state", "guessed")],
        [("code", "FORGED-CODE")],
        [("code", "AUTH-CODE"), ("state", request["state"] ?? "")],
      ]
    }
    let harness = try Self.harness(browser: browser)
    try await harness.manager.signIn(type: "corp", method: browser.method)
    #expect(browser.verdicts.count == 3)
    #expect(browser.verdicts.last == .accept)
    #expect(harness.transport.requests(to: "/token").map { $0[field: "code"] } == ["AUTH-CODE"])
  }

  @Test func aRefusalEndsTheSignInWithoutAnExchange() async throws {
    let browser = ScriptedBrowser { request in
      [[("error", "access_denied"), ("state", request["state"] ?? "")]]
    }
    let harness = try Self.harness(browser: browser)
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.manager.signIn(type: "corp", method: browser.method)
    }
    #expect(error?.code == .accessDenied)
    #expect(harness.transport.requestCount == 0)
    #expect(try harness.manager.accounts().isEmpty)
  }

  @Test func withoutAnIDTokenTheUserinfoEndpointNamesTheUser() async throws {
    let browser = ScriptedBrowser()
    let harness = try Self.harness(
      SignInServer(idToken: false), browser: browser, endpoints: F.endpoints(userinfo: true))
    let account = try await harness.manager.signIn(type: "corp", method: browser.method)
    #expect(account.id == "user-7")
    #expect(account.name == "grace")
    let userinfo = try #require(harness.transport.requests(to: "/userinfo").first)
    #expect(userinfo.header("Authorization") == "Bearer AT-1")
    #expect(userinfo.method == "GET")
  }

  @Test func withoutIDTokenOrUserinfoTheSignInFails() async throws {
    let browser = ScriptedBrowser()
    let harness = try Self.harness(SignInServer(idToken: false), browser: browser)
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.manager.signIn(type: "corp", method: browser.method)
    }
    #expect(error?.code == .signInFailed)
    #expect(try harness.manager.accounts().isEmpty)
  }

  @Test func aFailedCodeExchangeIsReported() async throws {
    let browser = ScriptedBrowser()
    let harness = try H(responses: [T.oauthError("invalid_client", status: 401)])
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.manager.signIn(type: "corp", method: browser.method)
    }
    #expect(error?.code == .serverError)
    #expect(error?.message.contains("exchange the authorization code") == true)
    #expect(error.map { !$0.fullText.contains("AUTH-CODE") } == true)
  }

  @Test func clientCredentialsSignInIsTheClient() async throws {
    let descriptor = F.descriptor(
      clientSecret: F.secret, authentication: .clientSecretBasic, scopes: ["api://backend/.default"])
    let harness = try H(descriptors: [descriptor], responses: [T.tokens(access: "AT-cc", expiresIn: 3599)])
    let recorder = EventRecorder(harness.events)
    let account = try await harness.manager.signIn(type: "corp", method: .clientCredentials)
    #expect(account.id == F.clientID)
    #expect(account.name == F.clientID)
    #expect(account.issuer == F.issuer)
    #expect(account.scopes == ["api://backend/.default"])

    let request = try #require(harness.transport.requests.first)
    #expect(harness.transport.requestCount == 1)
    #expect(request[field: "grant_type"] == "client_credentials")
    #expect(request[field: "scope"] == "api://backend/.default")
    #expect(request[field: "client_secret"] == nil)
    let basic = try #require(request.header("Authorization"))
    #expect(basic == "Basic " + Data("\(F.clientID):\(F.secret)".utf8).base64EncodedString())

    let stored = try #require(try harness.store.load(account.key))
    #expect(stored.tokens.accessToken == "AT-cc")
    #expect(await recorder.drain().map(\.kind) == [.added])
  }

  @Test func clientCredentialsNeedASecret() async throws {
    let harness = try H(responses: [T.tokens(access: "AT")])
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.manager.signIn(type: "corp", method: .clientCredentials)
    }
    #expect(error?.code == .notConfigured)
    #expect(harness.transport.requestCount == 0)
  }

  @Test func scopesAndClientIDFromTheOptionsWin() async throws {
    let descriptor = F.descriptor(clientSecret: F.secret, authentication: .clientSecretPost)
    let harness = try H(descriptors: [descriptor], responses: [T.tokens(access: "AT")])
    let account = try await harness.manager.signIn(
      type: "corp", options: SignInOptions(scopes: ["a", "b"], clientID: "other-client"), method: .clientCredentials)
    #expect(account.id == "other-client")
    #expect(account.clientID == "other-client")
    #expect(account.scopes == ["a", "b"])
    let request = try #require(harness.transport.requests.first)
    #expect(request[field: "client_id"] == "other-client")
    #expect(request[field: "scope"] == "a b")
  }

  @Test func deviceSignInStoresTheAccount() async throws {
    let harness = try H { request throws(TransportError) in
      switch request.url {
      case F.deviceURL:
        return T.json(
          200, #"{"device_code":"DC","user_code":"U","verification_uri":"https://e.example/d","expires_in":60}"#)
      case F.tokenURL:
        return T.tokens(
          access: "AT-d", refresh: "RT-d", idToken: IDTokenSigner.sign(IDTokenSigner.claims(nonce: nil, now: F.now)))
      case F.jwksURL: return T.json(200, IDTokenSigner.jwks)
      default: return HTTPResponse(status: 404)
      }
    }
    let clock = harness.clock
    let account = try await harness.manager.signIn(
      type: "corp", method: .device(present: { _, _ in }, sleep: { clock.advance(by: $0) }))
    #expect(account.key == H.key)
    #expect(try harness.stored()?.tokens.accessToken == "AT-d")
  }

  @Test func deviceSignInNeedsADeviceEndpoint() async throws {
    let harness = try H(descriptors: [F.descriptor(endpoints: F.endpoints(device: false))], responses: [])
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.manager.signIn(type: "corp", method: .device(present: { _, _ in }, sleep: { _ in }))
    }
    #expect(error?.code == .notConfigured)
    #expect(harness.transport.requestCount == 0)
  }

  @Test func anUnknownTypeIsReported() async throws {
    let harness = try H(responses: [])
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.manager.signIn(type: "nope", method: .clientCredentials)
    }
    #expect(error?.code == .unknownAccountType)
  }
}

@Suite(.timeLimit(.minutes(1))) struct AccountManagerSignOutTests {
  typealias F = OAuthFixtures
  typealias T = ScriptedTransport
  typealias H = AccountHarness

  @Test func revokesBothTokensThenRemovesTheAccount() async throws {
    let harness = try H(responses: [HTTPResponse(status: 200), HTTPResponse(status: 200)])
    let seeded = try harness.seed(left: 600)
    let recorder = EventRecorder(harness.events)
    let result = try await harness.manager.signOut(H.key)
    #expect(result.revokedAtServer)
    #expect(result.note == nil)
    #expect(result.account == seeded.account)
    let requests = harness.transport.requests
    #expect(requests.map(\.url) == [F.revocationURL, F.revocationURL])
    #expect(requests.map { $0[field: "token_type_hint"] } == ["refresh_token", "access_token"])
    #expect(requests.map { $0[field: "token"] } == ["RT-1", "AT-1"])
    #expect(requests.allSatisfy { $0[field: "client_id"] == F.clientID })
    #expect(try harness.stored() == nil)
    let events = await recorder.drain()
    #expect(events.map(\.kind) == [.revoked])
    #expect(events.first?.account == seeded.account)
  }

  @Test func withoutARefreshTokenRevokesTheAccessToken() async throws {
    let harness = try H(responses: [HTTPResponse(status: 200)])
    try harness.seed(left: 600, refreshToken: nil)
    try await harness.manager.signOut(H.key)
    #expect(harness.transport.requests.map { $0[field: "token_type_hint"] } == ["access_token"])
    #expect(try harness.stored() == nil)
  }

  @Test(arguments: [
    Result<HTTPResponse, TransportError>.success(HTTPResponse(status: 503)),
    .success(T.oauthError("unsupported_token_type")),
    .failure(TransportError(.connectionFailed, "refused")),
  ])
  func aFailedRevocationKeepsTheAccount(answer: Result<HTTPResponse, TransportError>) async throws {
    let harness = try H { _ throws(TransportError) in try answer.get() }
    let seeded = try harness.seed(left: 600)
    let recorder = EventRecorder(harness.events)
    let error = await #expect(throws: TokenKitError.self) { try await harness.manager.signOut(H.key) }
    #expect(error?.code == .revocationFailed)
    #expect(error?.message.contains("the account is kept") == true)
    #expect(error?.remedy == .forgetLocally(account: seeded.account.qualifiedName))
    #expect(error.map { !$0.fullText.contains("RT-1") && !$0.fullText.contains("AT-1") } == true)
    #expect(try harness.stored() == seeded)
    #expect(await recorder.drain().map(\.kind) == [.failed])
  }

  @Test func withoutARevocationEndpointTheAccountIsRemovedAndTheNoteSaysSo() async throws {
    let harness = try H(descriptors: [F.descriptor(endpoints: F.endpoints(revocation: false))], responses: [])
    try harness.seed(left: 600)
    let recorder = EventRecorder(harness.events)
    let result = try await harness.manager.signOut(H.key)
    #expect(!result.revokedAtServer)
    #expect(result.note?.contains("no revocation endpoint") == true)
    #expect(harness.transport.requestCount == 0)
    #expect(try harness.stored() == nil)
    let events = await recorder.drain()
    #expect(events.map(\.kind) == [.revoked])
    #expect(events.first?.message == result.note)
  }

  @Test func localOnlyNeverTellsTheServerButTellsTheObservers() async throws {
    let harness = try H(responses: [])
    try harness.seed(left: 600)
    let recorder = EventRecorder(harness.events)
    let result = try await harness.manager.signOut(H.key, localOnly: true)
    #expect(!result.revokedAtServer)
    #expect(result.note == "the server was not told")
    #expect(harness.transport.requestCount == 0)
    #expect(try harness.stored() == nil)
    let events = await recorder.drain()
    #expect(events.map(\.kind) == [.revoked])
    #expect(events.first?.account.key == H.key)
  }

  @Test func anUnknownAccountIsNoSuchAccount() async throws {
    let harness = try H(responses: [])
    let error = await #expect(throws: TokenKitError.self) { try await harness.manager.signOut(H.key) }
    #expect(error?.code == .noSuchAccount)
  }

  @Test func freshTokensAndRefreshGoThroughTheRefresher() async throws {
    let harness = try H(responses: [T.tokens(access: "AT-2", refresh: "RT-2"), T.tokens(access: "AT-3")])
    try harness.seed(left: -1)
    #expect(try await harness.manager.freshTokens(for: H.key).accessToken == "AT-2")
    #expect(try await harness.manager.refresh(H.key).tokens.accessToken == "AT-3")
    #expect(harness.transport.requests.map { $0[field: "refresh_token"] } == ["RT-1", "RT-2"])
  }
}
