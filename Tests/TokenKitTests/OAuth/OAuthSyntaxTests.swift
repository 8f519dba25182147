import Foundation
import Testing
import TokenKit

/// The syntax rules every reader of settings shares ("one rule, one place").
@Suite struct OAuthSyntaxTests {
  @Test(arguments: [
    ("app", true), ("app with spaces~", true), ("", false), ("tab\there", false), ("ünï", false), ("del\u{7F}", false),
  ])
  func visibleASCII(text: String, valid: Bool) {
    #expect(OAuthSyntax.isVisibleASCII(text) == valid)
  }

  @Test(arguments: [
    ("openid", true), ("User.Read", true), ("api://x/.default", true), ("a!#[]~", true), ("", false),
    ("two words", false), ("quo\"te", false), ("back\\slash", false), ("ünï", false),
  ])
  func scopeTokens(text: String, valid: Bool) {
    #expect(OAuthSyntax.isScopeToken(text) == valid)
  }

  @Test(arguments: [
    ("https://id.example/realms/x", true), ("http://127.0.0.1:8080/", true), ("http://id.example", false),
    ("https://id.example?tenant=1", false), ("https://id.example#f", false), ("https://", false),
    ("ftp://id.example", false), ("http://127.0.0.1.attacker.example", false),
  ])
  func issuers(text: String, valid: Bool) {
    #expect((OAuthSyntax.issuerURL(text) != nil) == valid)
  }

  @Test(arguments: [
    ("corp", true), ("my-corp2", true), ("", false), ("-corp", false), ("Corp", false), ("co_rp", false),
    ("cörp", false), ("co rp", false),
  ])
  func accountTypeIDs(id: String, valid: Bool) {
    #expect(EndpointDescriptor.isValidID(id) == valid)
  }
}
