import CredentialHelpers
import Foundation
import Testing
import TokenKit

/// What git is answered with, for each kind of type and git.
@Suite struct CredentialChoiceTests {
  static let ada = ChooserFixtures.account("corp", "7", "ada")
  static let expiry = Date(timeIntervalSince1970: 1_800_003_600)

  @Test(
    arguments: [
      // Bearer only when both the type and git can.
      (
        true, "capability[]=authtype\n", true,
        "capability[]=authtype\nauthtype=Bearer\ncredential=T\npassword_expiry_utc=1800003600\n"
      ),
      (true, "", true, "username=ada\npassword=T\npassword_expiry_utc=1800003600\n"),
      (false, "capability[]=authtype\n", true, "username=ada\npassword=T\npassword_expiry_utc=1800003600\n"),
      // An empty element clears what git announced before it.
      (
        true, "capability[]=authtype\ncapability[]=\n", true,
        "username=ada\npassword=T\npassword_expiry_utc=1800003600\n"
      ),
      (
        true, "capability[]=state\ncapability[]=authtype\n", false,
        "capability[]=authtype\nauthtype=Bearer\ncredential=T\n"
      ),
      // Without a known expiry, git is told none.
      (false, "", false, "username=ada\npassword=T\n"),
    ] as [(Bool, String, Bool, String)])
  func theAnswerIsABearerTokenOrAUsernameAndPassword(
    bearer: Bool, capabilities: String, expires: Bool, expected: String
  )
    throws
  {
    let choice = CredentialChoice(
      account: Self.ada, git: GitIntegration(hosts: ["h"], username: .accountName, bearer: bearer))
    let request = try CredentialMessage.parse(Array((capabilities + "protocol=https\nhost=h\n").utf8))
    let answer = choice.answer(with: TokenSet(accessToken: "T", expiresAt: expires ? Self.expiry : nil), to: request)
    #expect(try answer.serialized() == expected)
  }

  @Test(
    arguments: [
      (GitUsername.literal("oauth2"), "oauth2"),
      (.literal("x-token-auth"), "x-token-auth"),
      (.accountName, "ada"),
    ])
  func theUsernameIsTheOneTheTypeWants(username: GitUsername, expected: String) {
    let choice = CredentialChoice(account: Self.ada, git: GitIntegration(hosts: ["h"], username: username))
    let answer = choice.answer(with: TokenSet(accessToken: "T"), to: CredentialMessage())
    #expect(answer["username"] == expected)
    #expect(answer["password"] == "T")
  }
}
