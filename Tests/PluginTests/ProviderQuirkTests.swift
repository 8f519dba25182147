import GitHubAccount
import MicrosoftGraphAccount
import TestSupport
import Testing
import TokenKit

/// Quirks a plugin translates into the standard's terms.
@Suite struct ProviderQuirkTests {
  /// An unsigned compact JWT with `claims`, enough for `IDTokenClaims(unverified:)`.
  static func idToken(_ claims: String) -> String {
    let header = Base64URL.encode(Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8))
    return "\(header).\(Base64URL.encode(Array(claims.utf8))).c2ln"
  }

  @Test func aGraphAccountIsNamedByObjectAndTenantNotByItsPairwiseSubject() throws {
    let claims = try IDTokenClaims(
      unverified: Self.idToken(
        #"{"iss":"https://login.microsoftonline.com/t-1/v2.0","sub":"pairwise-x","aud":"app","exp":2000000000,"#
          + #""iat":1900000000,"oid":"o-42","tid":"t-1","preferred_username":"ada@contoso.com"}"#))
    let identity = try #require(MicrosoftGraphBehavior().identity(claims: claims))
    #expect(identity.id == "o-42.t-1")
    #expect(identity.name == "ada@contoso.com")
    #expect(identity.issuer == "https://login.microsoftonline.com/t-1/v2.0")
  }

  @Test func withoutObjectIDTheSubjectIsUsed() throws {
    let claims = try IDTokenClaims(
      unverified: Self.idToken(#"{"iss":"https://i","sub":"s","aud":"a","exp":2000000000,"iat":1900000000}"#))
    #expect(MicrosoftGraphBehavior().identity(claims: claims) == nil)
  }

  @Test(arguments: [
    ("repo,gist", ["repo", "gist"]), ("repo", ["repo"]), ("", []), ("repo,,read:org", ["repo", "read:org"]),
  ])
  func gitHubScopesSeparatedByCommasAreSplit(scope: String, expected: [String]) throws {
    let response = try TokenResponse(
      json: Array(#"{"access_token":"gho_x","token_type":"bearer","scope":"\#(scope)"}"#.utf8))
    let registry = try { () throws -> AccountTypeRegistry in
      var registry = AccountTypeRegistry()
      try registry.register(GitHubPlugin.self)
      return registry
    }()
    let behavior = try #require(registry.behavior("github"))
    #expect(behavior.normalized(response).scope ?? [] == expected)
  }

  /// Microsoft declines a device sign-in with `authorization_declined`; the Graph type's
  /// table of device grant errors makes it the standard `access_denied`.
  @Test(.timeLimit(.minutes(1))) func aDeviceSignInMicrosoftDeclinesIsAccessDenied() async throws {
    typealias T = ScriptedTransport
    let transport = T(responses: [
      T.json(
        200,
        #"{"device_code":"DEVICE-SECRET","user_code":"WDJB-MJHT","verification_uri":"https://e.example/device","expires_in":600,"interval":5}"#
      ),
      T.oauthError("authorization_pending"), T.oauthError("authorization_declined"),
    ])
    let descriptor = OAuthFixtures.descriptor(aliases: MicrosoftGraphPlugin.descriptor.deviceGrantErrorAliases)
    let clock = TestClock()
    let flow = DeviceAuthorizationFlow(
      configuration: OAuthFixtures.configuration(descriptor), scopes: ["openid", "offline_access"],
      transport: transport, clock: clock, sleep: { clock.advance(by: $0) }, present: { _, _ in })
    let error = await #expect(throws: TokenKitError.self) { try await flow.run() }
    #expect(error?.code == .accessDenied)
    #expect(transport.requests(to: OAuthFixtures.tokenURL.path()).count == 2)
    #expect(error.map { !$0.fullText.contains("DEVICE-SECRET") } == true)
  }
}
