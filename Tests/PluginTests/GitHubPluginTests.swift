import Foundation
import GitHubAccount
import TestSupport
import Testing
import TokenKit

/// GitHub's departures from the standards: errors with HTTP 200, no ID token (identity
/// from `GET /user`), revocation through `DELETE /applications/{client_id}/token`.
@Suite(.timeLimit(.minutes(1))) struct GitHubPluginTests {
  typealias T = ScriptedTransport
  static let key = AccountKey(type: "github", id: "583231")

  static func configuration() throws -> ServiceConfiguration {
    var descriptor = GitHubPlugin.descriptor
    descriptor.clientID = PluginHarness.clientID
    descriptor.clientSecret = PluginHarness.secret
    return OAuthFixtures.configuration(descriptor)
  }

  @Test func theDocumentedTokenResponseParses() throws {
    let response = try TokenResponse(json: Array(PluginFixtures.githubTokens.utf8))
    #expect(response.accessToken == "gho_16C7e42F292c6912E7710c838347Ae178B4a")
    #expect(response.tokenType == "bearer")
    // OAuth app tokens do not expire and come without a refresh token.
    #expect(response.expiresIn == nil)
    #expect(response.refreshToken == nil)
  }

  @Test func anErrorSentWithStatus200IsAnError() async throws {
    let transport = T(responses: [T.json(200, PluginFixtures.githubBadVerificationCode)])
    let service = try Self.configuration().service(transport: transport)
    let error = await #expect(throws: AuthorizationServiceError.self) {
      try await service.token(.authorizationCode(code: "used", redirectURI: "http://127.0.0.1:1/", codeVerifier: "v"))
    }
    guard case .oauth(let oauth, let status) = error else {
      Issue.record("expected an OAuth error, got \(String(describing: error))")
      return
    }
    #expect(oauth.code == "bad_verification_code")
    #expect(status == 200)
  }

  @Test func aBadVerificationCodeEndsTheSignInAndStoresNothing() async throws {
    let browser = ScriptedBrowser()
    let harness = try PluginHarness(GitHubPlugin.self) { request throws(TransportError) in
      T.json(200, PluginFixtures.githubBadVerificationCode)
    }
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.manager.signIn(type: "github", method: browser.method)
    }
    #expect(error?.message.contains("bad_verification_code") == true)
    #expect(try harness.manager.accounts().isEmpty)
    // The error came from the token endpoint: no identity lookup followed.
    #expect(harness.transport.requests.map { $0.url.host() } == ["github.com"])
  }

  @Test func identityAsksTheRESTAPIWithTheToken() async throws {
    let transport = T(responses: [T.json(200, PluginFixtures.githubUser)])
    let identity = try await GitHubBehavior().identity(
      accessToken: "gho_token", configuration: try Self.configuration(), transport: transport)
    #expect(identity == AccountIdentity(id: "583231", name: "octocat", issuer: nil))
    let request = try #require(transport.requests.first)
    #expect(request.method == "GET")
    #expect(request.url.absoluteString == "https://api.github.com/user")
    #expect(request.header("Authorization") == "Bearer gho_token")
    #expect(request.header("Accept") == "application/vnd.github+json")
    #expect(request.header("X-GitHub-Api-Version") == "2022-11-28")
  }

  @Test func identityFollowsTheDescriptorsAPIBase() async throws {
    // GitHub Enterprise Server: the same calls under `https://HOST/api/v3`.
    var configuration = try Self.configuration()
    configuration.descriptor.apiBase = URL(string: "https://github.example.com/api/v3")
    let transport = T(responses: [T.json(200, PluginFixtures.githubUser)])
    _ = try await GitHubBehavior().identity(accessToken: "t", configuration: configuration, transport: transport)
    #expect(transport.requests.first?.url.absoluteString == "https://github.example.com/api/v3/user")
  }

  @Test(arguments: [
    (401, #"{"message":"Bad credentials"}"#), (200, #"{"login":"octocat"}"#), (200, #"{"id":"583231","login":"x"}"#),
  ])
  func anUnusableUserAnswerFailsTheSignIn(status: Int, body: String) async throws {
    let transport = T(responses: [T.json(status, body)])
    let error = await #expect(throws: TokenKitError.self) {
      try await GitHubBehavior().identity(
        accessToken: "gho_token", configuration: try Self.configuration(), transport: transport)
    }
    #expect(error?.code == .signInFailed)
    #expect(error.map { !$0.fullText.contains("gho_token") } == true)
  }

  @Test func signingOutDeletesTheTokenWithTheAppsCredentials() async throws {
    let browser = ScriptedBrowser()
    let providers = PluginFixtures.providers(browser)
    let harness = try PluginHarness(GitHubPlugin.self) { request throws(TransportError) in
      request.method == "DELETE" ? HTTPResponse(status: 204) : try await providers(request)
    }
    _ = try await harness.manager.signIn(type: "github", method: browser.method)
    let result = try await harness.manager.signOut(Self.key)
    #expect(result.revokedAtServer)
    #expect(try harness.store.load(Self.key) == nil)

    let delete = try #require(harness.transport.requests.last)
    #expect(delete.method == "DELETE")
    #expect(delete.url.absoluteString == "https://api.github.com/applications/\(PluginHarness.clientID)/token")
    let pair = Data("\(PluginHarness.clientID):\(PluginHarness.secret)".utf8).base64EncodedString()
    #expect(delete.header("Authorization") == "Basic \(pair)")
    #expect(delete.header("Content-Type") == "application/json")
    #expect(delete.header("Accept") == "application/vnd.github+json")
    let body = try #require(JSONValue.parseObject(delete.request.body ?? []))
    #expect(body == ["access_token": "gho_16C7e42F292c6912E7710c838347Ae178B4a"])
  }

  @Test func aRefusedRevocationKeepsTheAccount() async throws {
    let browser = ScriptedBrowser()
    let providers = PluginFixtures.providers(browser)
    let harness = try PluginHarness(GitHubPlugin.self) { request throws(TransportError) in
      request.method == "DELETE"
        ? T.json(404, #"{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}"#)
        : try await providers(request)
    }
    _ = try await harness.manager.signIn(type: "github", method: browser.method)
    let error = await #expect(throws: TokenKitError.self) { try await harness.manager.signOut(Self.key) }
    #expect(error?.code == .revocationFailed)
    #expect(error?.message.contains("404") == true)
    #expect(error.map { !$0.fullText.contains(PluginHarness.secret) && !$0.fullText.contains("gho_") } == true)
    #expect(try harness.store.load(Self.key) != nil)
  }

  @Test func theDescriptorSaysWhatGitHubNeeds() {
    let descriptor = GitHubPlugin.descriptor
    #expect(descriptor.tokenEndpointAuthentication == .clientSecretPost)
    #expect(descriptor.defaultScopes == ["repo", "read:org"])
    #expect(descriptor.servedHosts == ["github.com", "api.github.com"])
    #expect(descriptor.git?.username == .literal("oauth2"))
    guard case .fixed(let endpoints) = descriptor.endpoints else {
      Issue.record("github has fixed endpoints")
      return
    }
    #expect(endpoints.deviceAuthorization?.absoluteString == "https://github.com/login/device/code")
    #expect(endpoints.revocation == nil)
  }
}
