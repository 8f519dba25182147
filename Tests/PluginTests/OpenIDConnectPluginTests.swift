import AccountTypeFiles
import Foundation
import OpenIDConnectAccount
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// The built-in `oidc` type at an issuer that follows OpenID Connect Core §11 to the
/// letter: `offline_access` brings a refresh token only with `prompt=consent`, so the
/// sign-in asks for consent until the account has one, and what the user sets in
/// `[types.oidc]` wins.
@Suite(.timeLimit(.minutes(1))) struct OpenIDConnectPluginTests {
  /// A Forgejo issuer from the fixtures, as the user names it in config.toml.
  static func configuration(_ extra: String = "") -> String {
    """
    [types.oidc]
    issuer = "\(PluginFixtures.giteaIssuer)"
    client_id = "\(PluginHarness.clientID)"
    \(extra)
    """
  }

  struct Harness {
    let clock = TestClock()
    let store = InMemoryTokenStore()
    let browser = ScriptedBrowser()
    let transport: ScriptedTransport
    let registry: AccountTypeRegistry

    init(config: String = OpenIDConnectPluginTests.configuration()) throws {
      var registry = AccountTypeRegistry()
      try registry.register(OpenIDConnectPlugin.self)
      let settings = try Configuration(parsing: Array(config.utf8), path: "config.toml").types
      self.registry = try registry.applying(settings)
      transport = ScriptedTransport(handler: PluginFixtures.providers(browser))
    }

    var manager: AccountManager {
      AccountManager(
        registry: registry, store: store, transport: transport, clock: clock, locks: MemoryAccountLocks(),
        discoveryCache: nil)
    }

    /// Stores an `oidc` account, with a refresh token or without.
    @discardableResult func seed(id: String, refreshToken: String?) throws -> Account {
      let account = Account(
        type: "oidc", id: id, name: id, group: store.group, scopes: ["openid", "offline_access"],
        createdAt: clock.now, updatedAt: clock.now, issuer: PluginFixtures.giteaIssuer,
        clientID: PluginHarness.clientID)
      try store.save(
        account,
        tokens: TokenSet(accessToken: "AT-\(id)", refreshToken: refreshToken, expiresAt: clock.now + 3600))
      return account
    }

    /// The `prompt` of the authorization URL a sign-in presents.
    func prompt(scopes: [String]? = nil, again: Account? = nil) async throws -> String? {
      var options = SignInOptions(scopes: scopes)
      options.signingInAgain = again
      _ = try await manager.signIn(type: "oidc", options: options, method: browser.method)
      #expect(browser.url != nil)
      return browser.request["prompt"]
    }
  }

  @Test func aNewSignInAsksForConsentWithOfflineAccess() async throws {
    let harness = try Harness()
    #expect(try await harness.prompt() == "consent")
    #expect(harness.browser.request["scope"]?.split(separator: " ").contains("offline_access") == true)
  }

  /// The issuer grants offline access per request: another user's refresh token here
  /// says nothing about the one signing in now.
  @Test func anotherAccountsRefreshTokenDoesNotSkipConsent() async throws {
    let harness = try Harness()
    try harness.seed(id: "someone-else", refreshToken: "RT-other")
    #expect(try await harness.prompt() == "consent")
  }

  @Test func signingInAgainToAnAccountWithARefreshTokenForcesNoPrompt() async throws {
    let harness = try Harness()
    let account = try harness.seed(id: "kept", refreshToken: "RT-kept")
    #expect(try await harness.prompt(again: account) == nil)
  }

  @Test func signingInAgainToAnAccountWithoutARefreshTokenAsksForConsent() async throws {
    let harness = try Harness()
    let account = try harness.seed(id: "kept", refreshToken: nil)
    #expect(try await harness.prompt(again: account) == "consent")
  }

  /// A repair of an account whose refresh token the server refused (it needs a sign-in):
  /// that token is dead, and without consent the new sign-in would get no other.
  @Test func signingInAgainToAnAccountWhoseRefreshTokenDiedAsksForConsent() async throws {
    let harness = try Harness()
    var account = try harness.seed(id: "stale", refreshToken: "RT-dead")
    account.needsSignIn = true
    try harness.store.save(
      account, tokens: TokenSet(accessToken: "AT-stale", refreshToken: "RT-dead", expiresAt: harness.clock.now))
    #expect(try await harness.prompt(again: account) == "consent")
  }

  @Test func withoutOfflineAccessThereIsNoForcedPrompt() async throws {
    let harness = try Harness()
    #expect(try await harness.prompt(scopes: ["openid", "email"]) == nil)
  }

  @Test func aPromptSetInTheConfigurationWins() async throws {
    let harness = try Harness(config: Self.configuration("authorization_parameters = { prompt = \"login consent\" }"))
    #expect(try await harness.prompt() == "login consent")
  }

  @Test func otherAuthorizationParametersFromTheConfigurationAreSent() async throws {
    let harness = try Harness(
      config: Self.configuration(
        """
        [types.oidc.authorization_parameters]
        acr_values = "loa-2"
        """))
    #expect(try await harness.prompt() == "consent")
    #expect(harness.browser.request["acr_values"] == "loa-2")
  }

  @Test(arguments: ["state", "redirect_uri", "code_challenge"])
  func theConfigurationCannotSetAProtocolParameter(_ name: String) throws {
    let error = #expect(throws: TokenKitError.self) {
      try Harness(config: Self.configuration("authorization_parameters = { \(name) = \"x\" }"))
    }
    #expect(error?.message.contains("must not set \(name)") == true)
  }

  /// The rule is the `oidc` type's: types whose provider says otherwise do not get it.
  @Test func onlyTheOpenIDConnectTypeFollowsTheRule() throws {
    #expect(OpenIDConnectPlugin.descriptor.offlineAccessNeedsConsent)
    #expect(
      OfflineAccessConsent.parameters(
        scopes: ["openid", "offline_access"], accountHasRefreshToken: false, configured: [:]) == ["prompt": "consent"])
    #expect(
      OfflineAccessConsent.parameters(
        scopes: ["openid", "offline_access"], accountHasRefreshToken: false, configured: ["prompt": "login"]) == [:])
  }
}
