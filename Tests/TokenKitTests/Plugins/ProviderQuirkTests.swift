import GitHubAccount
import MicrosoftGraphAccount
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
}
