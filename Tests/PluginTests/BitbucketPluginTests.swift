import BitbucketAccount
import Foundation
import TestSupport
import Testing
import TokenKit

/// Bitbucket Cloud: identity from `GET /2.0/user`, HTTP Basic client authentication for
/// every grant, and a new refresh token with every refresh.
@Suite(.timeLimit(.minutes(1))) struct BitbucketPluginTests {
  typealias T = ScriptedTransport
  static let key = AccountKey(type: "bitbucket", id: "{e1a5b2c3-0000-4d4e-9f00-1234567890ab}")

  static func configuration() -> ServiceConfiguration {
    var descriptor = BitbucketPlugin.descriptor
    descriptor.clientID = PluginHarness.clientID
    descriptor.clientSecret = PluginHarness.secret
    return OAuthFixtures.configuration(descriptor)
  }

  @Test func identityAsksTheRESTAPIWithTheToken() async throws {
    let transport = T(responses: [T.json(200, PluginFixtures.bitbucketUser)])
    let identity = try await BitbucketBehavior().identity(
      accessToken: "bb-access", configuration: Self.configuration(), transport: transport)
    #expect(identity == AccountIdentity(id: "{e1a5b2c3-0000-4d4e-9f00-1234567890ab}", name: "tutorials", issuer: nil))
    let request = try #require(transport.requests.first)
    #expect(request.method == "GET")
    #expect(request.url.absoluteString == "https://api.bitbucket.org/2.0/user")
    #expect(request.header("Authorization") == "Bearer bb-access")
  }

  @Test func withoutAUsernameTheDisplayNameNamesTheAccount() async throws {
    let transport = T(responses: [T.json(200, #"{"uuid":"{u-1}","display_name":"Ada Lovelace","type":"user"}"#)])
    let identity = try await BitbucketBehavior().identity(
      accessToken: "t", configuration: Self.configuration(), transport: transport)
    #expect(identity == AccountIdentity(id: "{u-1}", name: "Ada Lovelace", issuer: nil))
  }

  @Test func aConsumerWithoutAccountPermissionIsToldSo() async throws {
    let transport = T(responses: [
      T.json(
        403, #"{"type":"error","error":{"message":"Your credentials lack one or more required privilege scopes."}}"#)
    ])
    let error = await #expect(throws: TokenKitError.self) {
      try await BitbucketBehavior().identity(
        accessToken: "t", configuration: Self.configuration(), transport: transport)
    }
    #expect(error?.code == .signInFailed)
    #expect(error?.recovery?.contains("Account: Read") == true)
  }

  @Test func aRefreshAuthenticatesWithBasicAndKeepsTheNewRefreshToken() async throws {
    let browser = ScriptedBrowser()
    let providers = PluginFixtures.providers(browser)
    let harness = try PluginHarness(BitbucketPlugin.self) { request throws(TransportError) in
      let form = ScriptedTransport.RecordedRequest(request)
      if form[field: "grant_type"] == "refresh_token" {
        return T.json(
          200,
          #"{"access_token":"bb-access-2","scopes":"account repository:write","expires_in":7200,"refresh_token":"bb-refresh-2","token_type":"bearer"}"#
        )
      }
      return try await providers(request)
    }
    _ = try await harness.manager.signIn(type: "bitbucket", method: browser.method)
    let refreshed = try await harness.manager.refresh(Self.key)
    #expect(refreshed.tokens.accessToken == "bb-access-2")
    #expect(refreshed.tokens.refreshToken == "bb-refresh-2")
    #expect(try harness.store.load(Self.key)?.tokens.refreshToken == "bb-refresh-2")

    let refresh = try #require(harness.transport.requests.last)
    #expect(refresh[field: "refresh_token"] == "bb-refresh-1")
    let pair = Data("\(PluginHarness.clientID):\(PluginHarness.secret)".utf8).base64EncodedString()
    #expect(refresh.header("Authorization") == "Basic \(pair)")
    #expect(!refresh.fieldNames.contains("client_secret"))
  }

  @Test func signingOutForgetsTheTokensAndSaysTheyStayValid() async throws {
    let browser = ScriptedBrowser()
    let harness = try PluginHarness(BitbucketPlugin.self, handler: PluginFixtures.providers(browser))
    _ = try await harness.manager.signIn(type: "bitbucket", method: browser.method)
    let before = harness.transport.requestCount
    let result = try await harness.manager.signOut(Self.key)
    #expect(!result.revokedAtServer)
    #expect(result.note?.contains("no revocation endpoint") == true)
    #expect(harness.transport.requestCount == before)
    #expect(try harness.store.load(Self.key) == nil)
  }

  @Test func gitSendsTheTokenAsXTokenAuth() {
    #expect(
      BitbucketPlugin.descriptor.git == GitIntegration(hosts: ["bitbucket.org"], username: .literal("x-token-auth")))
    #expect(BitbucketPlugin.descriptor.servedHosts == ["bitbucket.org", "api.bitbucket.org"])
  }
}
