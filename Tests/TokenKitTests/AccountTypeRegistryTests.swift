import Foundation
import Testing
import TokenKit

@Suite struct AccountTypeRegistryTests {
  static func descriptor(_ id: String, token: String = "https://auth.example.org/token") -> EndpointDescriptor {
    EndpointDescriptor(
      id: id, displayName: "Example \(id)",
      endpoints: .fixed(
        Endpoints(authorization: URL(string: "https://auth.example.org/authorize")!, token: URL(string: token)!)))
  }

  @Test func registersLooksUpAndListsInIdOrder() throws {
    var registry = AccountTypeRegistry()
    try registry.register(Self.descriptor("zeta"), source: "test")
    try registry.register(Self.descriptor("alpha"), source: "/etc/xdg/tokenctl/types/alpha.toml")
    #expect(registry.ids == ["alpha", "zeta"])
    #expect(try registry.descriptor("zeta") == Self.descriptor("zeta"))
    #expect(registry.entry("alpha")?.source == "/etc/xdg/tokenctl/types/alpha.toml")
    #expect(registry.all.map(\.descriptor.id) == ["alpha", "zeta"])
  }

  @Test func aDuplicateIdNamesBothSources() throws {
    var registry = AccountTypeRegistry()
    try registry.register(Self.descriptor("corp"), source: "plugin Corp")
    let error = #expect(throws: TokenKitError.self) {
      try registry.register(Self.descriptor("corp"), source: "/home/ada/.config/tokenctl/types/corp.toml")
    }
    #expect(error?.code == .duplicateAccountType)
    #expect(error?.message.contains("plugin Corp") == true)
    #expect(error?.message.contains("/home/ada/.config/tokenctl/types/corp.toml") == true)
    #expect(registry.ids == ["corp"])
  }

  @Test func anUnknownIdListsTheKnownOnes() throws {
    var registry = AccountTypeRegistry()
    try registry.register(Self.descriptor("corp"), source: "test")
    let error = #expect(throws: TokenKitError.self) { try registry.descriptor("crop") }
    #expect(error?.code == .unknownAccountType)
    #expect(error?.recovery?.contains("corp") == true)
  }

  @Test(arguments: [
    ("Bad_Id", "https://auth.example.org/token", "id 'Bad_Id'"),
    ("-lead", "https://auth.example.org/token", "id '-lead'"),
    ("plain", "http://auth.example.org/token", "token_endpoint http://auth.example.org/token must be https"),
  ])
  func anInvalidDescriptorIsRefusedWithItsProblem(id: String, token: String, problem: String) {
    var registry = AccountTypeRegistry()
    let error = #expect(throws: TokenKitError.self) {
      try registry.register(Self.descriptor(id, token: token), source: "file.toml")
    }
    #expect(error?.code == .invalidDescriptor)
    #expect(error?.message.contains(problem) == true, "\(error?.message ?? "")")
    #expect(error?.message.contains("file.toml") == true)
  }

  @Test func loopbackHttpEndpointsAreAllowed() throws {
    var registry = AccountTypeRegistry()
    try registry.register(Self.descriptor("local", token: "http://127.0.0.1:8080/token"), source: "test")
    try registry.register(Self.descriptor("local6", token: "http://localhost:8080/token"), source: "test")
    #expect(registry.ids == ["local", "local6"])
  }

  /// The core names no provider: their quirks belong in `Plugins/`.
  @Test func theCoreSourcesNameNoProvider() throws {
    let core = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../Sources/TokenKit").standardizedFileURL
    // Every file below, as for the wording check: a provider's name in a subfolder counts.
    let walker = FileManager.default.enumerator(at: core, includingPropertiesForKeys: nil)
    let files = (walker?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }
    #expect(files.count > 40)
    let providers = [
      "microsoft", "azure", "contoso", "github", "gitlab", "google", "bitbucket", "gitea", "forgejo", "keycloak",
    ]
    for file in files where file.pathExtension == "swift" {
      let text = try String(contentsOf: file, encoding: .utf8).lowercased()
      for provider in providers {
        #expect(!text.contains(provider), "\(file.lastPathComponent) names \(provider)")
      }
    }
  }
}
