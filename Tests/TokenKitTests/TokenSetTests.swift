import Foundation
import Testing
import TokenKit

@Suite struct TokenSetTests {
  static let now = Date(timeIntervalSince1970: 1_800_000_000)

  @Test(arguments: [
    (expiresIn: 3600.0, margin: 60.0, valid: true),
    (expiresIn: 61, margin: 60, valid: true),
    (expiresIn: 60, margin: 60, valid: true),
    (expiresIn: 59, margin: 60, valid: false),
    (expiresIn: 0, margin: 0, valid: true),
    (expiresIn: -1, margin: 0, valid: false),
    (expiresIn: -3600, margin: 60, valid: false),
  ])
  func validityIsJudgedAgainstTheInjectedClock(expiresIn: Double, margin: Double, valid: Bool) {
    let tokens = TokenSet(accessToken: "a", expiresAt: Self.now.addingTimeInterval(expiresIn))
    #expect(tokens.isValid(forAtLeast: margin, clock: FixedClock(Self.now)) == valid)
  }

  @Test func aTokenWithoutExpiryIsAlwaysValid() {
    let tokens = TokenSet(accessToken: "a")
    #expect(tokens.isValid(forAtLeast: 86_400 * 365, clock: FixedClock(Self.now)))
    #expect(tokens.summary.status(clock: FixedClock(Self.now)) == .noExpiry)
  }

  @Test func summaryStatusCountsDownAndExpires() {
    let summary = TokenSet(accessToken: "a", refreshToken: "r", expiresAt: Self.now.addingTimeInterval(2520)).summary
    #expect(summary.refreshable)
    #expect(summary.status(clock: FixedClock(Self.now)) == .valid(secondsLeft: 2520))
    #expect(summary.status(clock: FixedClock(Self.now.addingTimeInterval(2520))) == .expired)
  }

  @Test func descriptionsAndMirrorsRedactEveryToken() {
    let tokens = TokenSet(
      accessToken: "SECRET-ACCESS", refreshToken: "SECRET-REFRESH", idToken: "SECRET-ID",
      expiresAt: Self.now)
    var dumped = ""
    dump(tokens, to: &dumped)
    for text in [tokens.description, tokens.debugDescription, String(reflecting: tokens), "\(tokens)", dumped] {
      #expect(!text.contains("SECRET"), "leaked in: \(text)")
      #expect(text.contains("<redacted>"))
    }
  }

  @Test func storageJSONRoundTripsAndIsVersioned() throws {
    let tokens = TokenSet(
      accessToken: "at", refreshToken: "rt", idToken: "it", expiresAt: Self.now, scope: ["openid", "User.Read"],
      tokenType: "Bearer")
    let json = try tokens.storageJSON()
    #expect(try TokenSet(storageJSON: json, item: "x") == tokens)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
    #expect(object["version"] as? Int == 1)
    #expect(object["expires_at"] as? Int == 1_800_000_000)
    #expect(object["scope"] as? String == "openid User.Read")
  }

  @Test(arguments: [
    (#"{"version":2,"access_token":"SECRET","token_type":"Bearer"}"#, "format 2"),
    (#"{"access_token":"SECRET"}"#, "not a token set tokenctl can read"),
    ("SECRET not json", "not a token set tokenctl can read"),
    (#"{"version":1,"access_token":42,"token_type":"Bearer"}"#, "malformed"),
  ])
  func unreadableStorageIsACorruptItemErrorWithoutTheSecret(json: String, expected: String) {
    let error = #expect(throws: TokenKitError.self) {
      try TokenSet(storageJSON: Array(json.utf8), item: "graph:ada")
    }
    #expect(error?.code == .corruptItem)
    #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    #expect(error?.message.contains("graph:ada") == true)
    #expect(error?.description.contains("SECRET") == false)
  }
}
