import AccountTypeFiles
import Foundation
import TestSupport
import Testing
import TokenKit

/// A browser sign-in to each built-in provider type, start to end: the authorization URL
/// it opens, where the token request puts the client's credentials, and who it finds
/// signed in.
@Suite(.timeLimit(.minutes(1))) struct AccountTypePluginTests {
  /// How a type's client presents itself at the token endpoint.
  enum ClientAuthentication: Sendable {
    /// `client_id` and `client_secret` in the form body.
    case post
    /// HTTP Basic, nothing about the client in the body.
    case basic
    /// A public client: `client_id` only.
    case publicClient
  }

  struct Case: Sendable, CustomTestStringConvertible {
    var type: String
    var issuer: String?
    var authorizationEndpoint: String
    var tokenEndpoint: String
    var authentication: ClientAuthentication
    /// Parameters beyond the protocol's the authorization URL must carry.
    var extraParameters: [String: String] = [:]
    var accountID: String
    var accountName: String
    var testDescription: String { type }
  }

  static let cases: [Case] = [
    Case(
      type: "github", authorizationEndpoint: "https://github.com/login/oauth/authorize",
      tokenEndpoint: "https://github.com/login/oauth/access_token", authentication: .post,
      accountID: "583231", accountName: "octocat"),
    Case(
      type: "gitlab", authorizationEndpoint: "https://gitlab.com/oauth/authorize",
      tokenEndpoint: "https://gitlab.com/oauth/token", authentication: .publicClient, accountID: "1234567",
      accountName: "ada"),
    Case(
      type: "google", authorizationEndpoint: "https://accounts.google.com/o/oauth2/v2/auth",
      tokenEndpoint: "https://oauth2.googleapis.com/token", authentication: .post,
      extraParameters: ["access_type": "offline", "prompt": "consent"], accountID: "110169484474386276334",
      accountName: "ada@gmail.com"),
    Case(
      type: "bitbucket", authorizationEndpoint: "https://bitbucket.org/site/oauth2/authorize",
      tokenEndpoint: "https://bitbucket.org/site/oauth2/access_token", authentication: .basic,
      accountID: "{e1a5b2c3-0000-4d4e-9f00-1234567890ab}", accountName: "tutorials"),
    Case(
      type: "gitea", issuer: PluginFixtures.giteaIssuer,
      authorizationEndpoint: "https://code.example.org/login/oauth/authorize",
      tokenEndpoint: "https://code.example.org/login/oauth/access_token", authentication: .publicClient,
      accountID: "code.example.org|7", accountName: "ada"),
  ]

  @Test(arguments: cases) func browserSignIn(_ expected: Case) async throws {
    let browser = ScriptedBrowser()
    let harness = try PluginHarness(type: expected.type, handler: PluginFixtures.providers(browser))
    let descriptor = try harness.registry.descriptor(expected.type)
    let account = try await harness.manager.signIn(
      type: expected.type, options: SignInOptions(issuer: expected.issuer), method: browser.method)

    // The authorization URL.
    let url = try #require(browser.url)
    #expect(url.absoluteString.hasPrefix(expected.authorizationEndpoint + "?"))
    let request = browser.request
    #expect(request["response_type"] == "code")
    #expect(request["client_id"] == PluginHarness.clientID)
    #expect(request["redirect_uri"] == browser.redirectURI)
    #expect(request["scope"] == descriptor.defaultScopes.joined(separator: " "))
    #expect(request["code_challenge_method"] == "S256")
    #expect(request["nonce"] != nil || !descriptor.defaultScopes.contains("openid"))
    for (name, value) in expected.extraParameters { #expect(request[name] == value, "\(name)") }
    // No type slips in parameters the table does not know of.
    let protocolParameters: Set = [
      "response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method",
      "nonce",
    ]
    #expect(Set(request.keys).subtracting(protocolParameters) == Set(expected.extraParameters.keys))

    // The token request.
    let tokenRequests = harness.transport.requests.filter { $0.url.absoluteString == expected.tokenEndpoint }
    let token = try #require(tokenRequests.first)
    #expect(tokenRequests.count == 1)
    #expect(token.method == "POST")
    #expect(token[field: "grant_type"] == "authorization_code")
    #expect(token[field: "code"] == "AUTH-CODE")
    #expect(token[field: "redirect_uri"] == browser.redirectURI)
    #expect(token[field: "code_verifier"] != nil)
    #expect(token.header("Accept") == "application/json")
    switch expected.authentication {
    case .post:
      #expect(token[field: "client_id"] == PluginHarness.clientID)
      #expect(token[field: "client_secret"] == PluginHarness.secret)
      #expect(token.header("Authorization") == nil)
    case .basic:
      let pair = Data("\(PluginHarness.clientID):\(PluginHarness.secret)".utf8).base64EncodedString()
      #expect(token.header("Authorization") == "Basic \(pair)")
      #expect(token[field: "client_id"] == nil)
      #expect(token[field: "client_secret"] == nil)
    case .publicClient:
      #expect(token[field: "client_id"] == PluginHarness.clientID)
      #expect(!token.fieldNames.contains("client_secret"))
      #expect(token.header("Authorization") == nil)
    }

    // Who signed in.
    #expect(account.type == expected.type)
    #expect(account.id == expected.accountID)
    #expect(account.name == expected.accountName)
    #expect(try harness.store.load(AccountKey(type: expected.type, id: expected.accountID)) != nil)
  }

  /// A client id is all a user must configure: the types ship none, and a type that
  /// needs a secret says so once the id is set.
  @Test(arguments: ["bitbucket", "gitea", "github", "gitlab", "google"])
  func typesShipNoClient(_ id: String) throws {
    let plugin = PluginFixtures.plugin(id)
    var registry = AccountTypeRegistry()
    try registry.register(plugin)
    let descriptor = try registry.descriptor(id)
    #expect(descriptor.clientID == nil)
    #expect(descriptor.clientSecret == nil)
    #expect(descriptor.problems.isEmpty)
    guard descriptor.tokenEndpointAuthentication != .none else { return }
    let error = #expect(throws: TokenKitError.self) {
      try registry.applying([id: AccountTypeSettings(clientID: "registered-app")])
    }
    #expect(error?.message.contains("needs a client secret") == true)
  }

  @Test func aGiteaSignInNeedsTheInstance() async throws {
    let browser = ScriptedBrowser()
    let harness = try PluginHarness(type: "gitea", handler: PluginFixtures.providers(browser))
    let error = await #expect(throws: TokenKitError.self) {
      try await harness.manager.signIn(type: "gitea", method: browser.method)
    }
    #expect(error?.code == .notConfigured)
    #expect(error?.remedy == .configure(type: "gitea", setting: "issuer"))
    #expect(harness.transport.requestCount == 0)
  }
}
