import Testing
import TokenCtlCLI
import TokenKit

@Suite struct BuiltinPluginsTests {
  @Test func theRegistryHoldsEveryBuiltInType() throws {
    let registry = try BuiltinPlugins.registry()
    #expect(registry.ids == ["bitbucket", "gitea", "github", "gitlab", "google", "graph", "oidc"])
    // Types whose provider departs from the standards come with their behavior.
    for id in ["bitbucket", "github", "google"] { #expect(registry.behavior(id) != nil, "\(id)") }
    for id in ["gitea", "gitlab", "oidc"] { #expect(registry.behavior(id) == nil, "\(id)") }
  }

  @Test func everyBuiltInTypeWaitsForTheUsersClient() throws {
    for entry in try BuiltinPlugins.registry().all {
      #expect(entry.descriptor.clientID == nil, "\(entry.descriptor.id) ships a client id")
      #expect(entry.descriptor.clientSecret == nil, "\(entry.descriptor.id) ships a client secret")
    }
  }
}
