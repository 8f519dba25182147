import Foundation
import GitLabAccount
import TestSupport
import Testing
import TokenKit

/// GitLab.com: a public client with the device grant, ID tokens, and RFC 7009 revocation.
@Suite(.timeLimit(.minutes(1))) struct GitLabPluginTests {
  typealias T = ScriptedTransport

  @Test func deviceSignInUsesTheDeviceEndpointAsAPublicClient() async throws {
    let providers = PluginFixtures.providers(ScriptedBrowser())
    let harness = try PluginHarness(GitLabPlugin.self, secret: nil) { request throws(TransportError) in
      guard request.url.absoluteString == "https://gitlab.com/oauth/authorize_device" else {
        return try await providers(request)
      }
      return T.json(
        200,
        #"{"device_code":"gl-device","user_code":"ABCD-EFGH","verification_uri":"https://gitlab.com/oauth/device","verification_uri_complete":"https://gitlab.com/oauth/device?user_code=ABCD-EFGH","expires_in":300,"interval":5}"#
      )
    }
    let account = try await harness.manager.signIn(
      type: "gitlab", method: .device(present: { _, _ in }, sleep: { _ in }))
    #expect(account.id == "1234567")
    #expect(account.name == "ada")
    let device = try #require(harness.transport.requests(to: "/oauth/authorize_device").first)
    #expect(device[field: "client_id"] == PluginHarness.clientID)
    #expect(device[field: "scope"] == "openid profile read_repository write_repository")
    let token = try #require(harness.transport.requests(to: "/oauth/token").first)
    #expect(token[field: "grant_type"] == "urn:ietf:params:oauth:grant-type:device_code")
    #expect(token[field: "device_code"] == "gl-device")
    #expect(!token.fieldNames.contains("client_secret"))
  }

  @Test func signingOutRevokesAtOAuthRevoke() async throws {
    let browser = ScriptedBrowser()
    let providers = PluginFixtures.providers(browser)
    let harness = try PluginHarness(GitLabPlugin.self, secret: nil) { request throws(TransportError) in
      request.url.absoluteString == "https://gitlab.com/oauth/revoke"
        ? T.json(200, "{}") : try await providers(request)
    }
    _ = try await harness.manager.signIn(type: "gitlab", method: browser.method)
    let result = try await harness.manager.signOut(AccountKey(type: "gitlab", id: "1234567"))
    #expect(result.revokedAtServer)
    let revoke = try #require(harness.transport.requests(to: "/oauth/revoke").first)
    #expect(revoke[field: "token"] == "RT-1234567")
    #expect(revoke[field: "client_id"] == PluginHarness.clientID)
    #expect(revoke.header("Authorization") == nil)
  }

  @Test func gitAndTheAPIAreGitLabs() {
    let descriptor = GitLabPlugin.descriptor
    #expect(descriptor.git == GitIntegration(hosts: ["gitlab.com"], username: .literal("oauth2")))
    #expect(descriptor.apiBase?.absoluteString == "https://gitlab.com/api/v4")
    #expect(descriptor.tokenEndpointAuthentication == .none)
    #expect(!descriptor.defaultScopes.contains("api"))
  }
}
