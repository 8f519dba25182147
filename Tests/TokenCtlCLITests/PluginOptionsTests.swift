import AccountTypeFiles
import Testing
import TokenKit

@testable import TokenCtlCLI

/// Settings a plugin defines for itself in `[types.ID]`: Graph's tenant and cloud.
@Suite struct PluginOptionsTests {
  func registry(_ toml: String) throws -> AccountTypeRegistry {
    let configuration = try Configuration(parsing: Array(toml.utf8), path: "config.toml")
    return try BuiltinPlugins.registry().applying(configuration.types)
  }

  func endpoints(_ registry: AccountTypeRegistry) throws -> Endpoints {
    guard case .fixed(let endpoints) = try registry.descriptor("graph").endpoints else {
      throw TokenKitError(.invalidDescriptor, "graph endpoints are not fixed")
    }
    return endpoints
  }

  @Test func aTenantNarrowsTheAuthority() throws {
    let endpoints = try endpoints(registry("[types.graph]\ntenant = \"organizations\"\n"))
    #expect(endpoints.token.absoluteString == "https://login.microsoftonline.com/organizations/oauth2/v2.0/token")
    #expect(endpoints.jwks?.absoluteString == "https://login.microsoftonline.com/organizations/discovery/v2.0/keys")
  }

  @Test func aNationalCloudMovesTheAuthorityAndTheAPI() throws {
    let registry = try registry(
      "[types.graph]\nauthority_host = \"login.microsoftonline.us\"\ngraph_host = \"graph.microsoft.us\"\n")
    #expect(try endpoints(registry).authorization?.host() == "login.microsoftonline.us")
    #expect(try registry.descriptor("graph").apiBase?.absoluteString == "https://graph.microsoft.us/v1.0")
    #expect(try registry.descriptor("graph").servedHosts.contains("graph.microsoft.us"))
  }

  @Test(arguments: [
    ("tenant = \"evil.example/x?\"", "tenant 'evil.example/x?' is not a valid tenant"),
    ("graph_host = \"a@b\"", "graph_host 'a@b' is not a valid host name"),
    ("colour = \"blue\"", "unknown key 'colour'"),
  ])
  func badOrUnknownSettingsAreRefused(line: String, message: String) throws {
    let error = #expect(throws: TokenKitError.self) { try registry("[types.graph]\n\(line)\n") }
    #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
  }

  @Test func aTypeWithoutSettingsOfItsOwnRefusesThem() throws {
    let error = #expect(throws: TokenKitError.self) { try registry("[types.oidc]\ntenant = \"x\"\n") }
    #expect(error?.message == "config.toml: [types.oidc]: unknown key 'tenant'")
  }

  @Test func aTypoOfACommonKeyIsStillCaughtWithItsLine() throws {
    let error = #expect(throws: TokenKitError.self) { try registry("[types.graph]\nclient_di = \"x\"\n") }
    #expect(error?.message.hasPrefix("config.toml:2:1: unknown key 'client_di'") == true, "\(error?.message ?? "")")
  }
}
