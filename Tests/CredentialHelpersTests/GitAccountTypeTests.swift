import CredentialHelpers
import Foundation
import Testing
import TokenKit

/// What the chooser keeps of a descriptor.
@Suite struct GitAccountTypeTests {
  static let git = GitIntegration(hosts: ["git.example"], username: .literal("oauth2"))

  static func fixed(_ token: String) -> EndpointConfiguration {
    .fixed(Endpoints(authorization: nil, token: URL(string: token)!))
  }

  @Test(
    arguments: [
      (fixed("https://auth.example/token"), nil, false),
      (fixed("http://127.0.0.1:9000/token"), nil, true),
      (fixed("http://[::1]:9000/token"), nil, true),
      (fixed("http://localhost/token"), nil, true),
      (.discovered(issuer: URL(string: "https://id.example/")!), "https://id.example/", false),
      (.discovered(issuer: URL(string: "http://127.0.0.1:8000/o")!), "http://127.0.0.1:8000/o", true),
      (.discoveredFromUserIssuer, nil, false),
    ] as [(EndpointConfiguration, String?, Bool)])
  func aTypeKeepsItsConfiguredIssuerAndWhetherItsServerIsHere(
    endpoints: EndpointConfiguration, issuer: String?, loopback: Bool
  ) throws {
    let type = try #require(
      GitAccountType(EndpointDescriptor(id: "t", displayName: "T", endpoints: endpoints, git: Self.git)))
    #expect(type.id == "t" && type.git == Self.git)
    #expect(type.configuredIssuer?.absoluteString == issuer)
    #expect(type.hasLoopbackServer == loopback)
  }

  @Test func aTypeWithoutGitSettingsIsNoneOfGits() {
    #expect(GitAccountType(EndpointDescriptor(id: "t", displayName: "T", endpoints: .discoveredFromUserIssuer)) == nil)
  }
}
