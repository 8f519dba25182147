import MicrosoftGraphAccount
import OpenIDConnectAccount
import Testing
import TokenKit

/// The built-in types as the registry sees them once their plugins are registered.
@Suite struct PluginRegistrationTests {
  @Test func theBuiltInPluginsRegister() throws {
    var registry = AccountTypeRegistry()
    try registry.register(MicrosoftGraphPlugin.self)
    try registry.register(OpenIDConnectPlugin.self)
    #expect(registry.ids == ["graph", "oidc"])
    #expect(registry.entry("graph")?.source == "plugin MicrosoftGraph")

    let graph = try registry.descriptor("graph")
    guard case .fixed(let endpoints) = graph.endpoints else {
      Issue.record("graph should have fixed endpoints")
      return
    }
    #expect(endpoints.authorization?.absoluteString == "https://login.microsoftonline.com/common/oauth2/v2.0/authorize")
    #expect(endpoints.token.absoluteString == "https://login.microsoftonline.com/common/oauth2/v2.0/token")
    #expect(
      endpoints.deviceAuthorization?.absoluteString == "https://login.microsoftonline.com/common/oauth2/v2.0/devicecode"
    )
    #expect(endpoints.revocation == nil)
    #expect(graph.defaultScopes.contains("offline_access"))
    #expect(graph.redirect == .loopback(host: "localhost"))
    #expect(try registry.descriptor("oidc").endpoints == .discoveredFromUserIssuer)
  }
}
