import Foundation
import GoogleAccount
import TestSupport
import Testing
import TokenKit

/// Google: offline access always, the consent screen only when no Google account here can
/// refresh, and RFC 7009 revocation at the endpoint its discovery document names.
@Suite(.timeLimit(.minutes(1))) struct GooglePluginTests {
  @Test(arguments: [
    (false, ["access_type": "offline", "prompt": "consent"]), (true, ["access_type": "offline"]),
  ])
  func authorizationParameters(hasRefreshableAccount: Bool, expected: [String: String]) {
    #expect(GoogleBehavior().authorizationParameters(hasRefreshableAccount: hasRefreshableAccount) == expected)
  }

  /// What is already stored, and whether the sign-in's URL asks for consent.
  struct Stored: Sendable, CustomTestStringConvertible {
    var type: String?
    var refreshToken: String?
    var expectsConsent: Bool
    var testDescription: String {
      type.map { "a \($0) account \(refreshToken == nil ? "without" : "with") a refresh token" } ?? "no account"
    }
  }

  @Test(arguments: [
    Stored(type: nil, refreshToken: nil, expectsConsent: true),
    Stored(type: "google", refreshToken: "RT-old", expectsConsent: false),
    Stored(type: "google", refreshToken: nil, expectsConsent: true),
    Stored(type: "github", refreshToken: "RT-other", expectsConsent: true),
  ])
  func consentIsAskedOnlyWithoutARefreshableGoogleAccount(_ stored: Stored) async throws {
    let browser = ScriptedBrowser()
    let harness = try PluginHarness(GooglePlugin.self, handler: PluginFixtures.providers(browser))
    if let type = stored.type { try harness.seed(type: type, refreshToken: stored.refreshToken) }
    _ = try await harness.manager.signIn(type: "google", method: browser.method)
    #expect(browser.request["access_type"] == "offline")
    #expect(browser.request["prompt"] == (stored.expectsConsent ? "consent" : nil))
  }

  @Test func signingOutRevokesAtTheDiscoveredEndpoint() async throws {
    let browser = ScriptedBrowser()
    let providers = PluginFixtures.providers(browser)
    let harness = try PluginHarness(GooglePlugin.self) { request throws(TransportError) in
      request.url.absoluteString == "https://oauth2.googleapis.com/revoke"
        ? HTTPResponse(status: 200) : try await providers(request)
    }
    let account = try await harness.manager.signIn(type: "google", method: browser.method)
    let result = try await harness.manager.signOut(AccountKey(type: "google", id: account.id))
    #expect(result.revokedAtServer)
    let revocations = harness.transport.requests(to: "/revoke")
    let revoke = try #require(revocations.first)
    #expect(revoke.url.host() == "oauth2.googleapis.com")
    #expect(revoke[field: "token"] == "RT-110169484474386276334")
    #expect(revoke[field: "client_id"] == PluginHarness.clientID)
    #expect(revoke[field: "client_secret"] == PluginHarness.secret)
  }

  @Test func theRedirectIsLoopbackNeverOutOfBand() {
    #expect(GooglePlugin.descriptor.redirect == .loopback())
    #expect(GooglePlugin.descriptor.tokenEndpointAuthentication == .clientSecretPost)
    #expect(GooglePlugin.descriptor.endpoints == .discovered(issuer: URL(string: "https://accounts.google.com")!))
  }
}
