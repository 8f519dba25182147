import Testing
import TokenKit

@testable import TokenCtlCLI

/// The command line words the core's remedies, and only it names commands.
@Suite struct RemedyWordingTests {
  static let remedies: [TokenKitError.Remedy] = [
    .signIn(type: "corp", device: false), .signIn(type: "corp", device: true), .signIn(type: nil, device: false),
    .allowAccess(type: nil), .finishSignIn(type: "corp"), .signInAnotherWay(type: "corp", device: true),
    .signInAnotherWay(type: "corp", device: false), .listAccounts(group: nil), .listAccounts(group: "work"),
    .forgetLocally(account: "corp:ada"), .removeUnreadableAccount, .configure(type: "corp", setting: "client_id"),
    .configure(type: "corp", setting: "issuer"), .configure(type: "corp", setting: "client_secret"),
    .allowOrigin("https://api.example"), .requestScope("openid"), .chooseType(known: ["corp", "oidc"]),
    .signInAgain(account: "oidc:ada@example.org", group: "default"),
  ]

  /// What a user of the command line needs: the command to run, the flag to pass or the
  /// file to edit.
  @Test(arguments: remedies) func theCommandLineNamesWhatToRunOrSet(_ remedy: TokenKitError.Remedy) {
    let sentence = RemedyWording.sentence(remedy)
    #expect(
      sentence.contains("tokenctl ") || sentence.contains("--") || sentence.contains("config.toml"), "\(sentence)")
    #expect(!remedy.advice.contains("tokenctl") && !remedy.advice.contains("--"), "\(remedy.advice)")
    #expect(!remedy.advice.contains("config.toml"))
  }

  @Test func theFactsAreInTheSentence() {
    #expect(RemedyWording.sentence(.signIn(type: "corp", device: true)) == "Run `tokenctl login corp --device` again.")
    #expect(RemedyWording.sentence(.signIn(type: "corp", device: false)) == "Run `tokenctl login corp`.")
    #expect(
      RemedyWording.sentence(.listAccounts(group: "work"))
        == "Run `tokenctl list --group work` to see the accounts there.")
    #expect(
      RemedyWording.sentence(.forgetLocally(account: "corp:ada"))
        == "Try again later, or run `tokenctl revoke --local corp:ada` to forget it here only.")
    #expect(
      RemedyWording.sentence(.configure(type: "corp", setting: "client_secret"))
        == "Set client_secret in the [types.corp] table of config.toml.")
  }

  /// Signing in again names the account, which records how it signed in (issuer, client,
  /// scopes), quoted for the shell, and its group when that is not the default one.
  @Test func signingInAgainNamesTheAccount() {
    #expect(
      RemedyWording.sentence(.signInAgain(account: "oidc:ada@example.org", group: "default"))
        == "Run `tokenctl login oidc:ada@example.org`.")
    #expect(
      RemedyWording.sentence(.signInAgain(account: "oidc:Ada Lovelace", group: "my work"))
        == "Run `tokenctl login 'oidc:Ada Lovelace' --group 'my work'`.")
    #expect(
      RemedyWording.sentence(.signInAgain(account: "corp:ada", group: "default"), for: .tokenNotValid)
        == "Run `tokenctl login corp:ada` to get a new one.")
  }

  /// An error without a remedy keeps the core's words; one with a remedy gets ours.
  @Test func theHintIsTheRemedyWhenThereIsOne() {
    let plain = TokenKitError(.serverError, "the server failed", recovery: "Try again later.")
    #expect(RemedyWording.recovery(for: plain) == "Try again later.")
    let withRemedy = TokenKitError(.unknownAccountType, "no account type 'x'", remedy: .chooseType(known: ["a"]))
    #expect(withRemedy.recovery == "Known types: a.")
    #expect(RemedyWording.recovery(for: withRemedy) == "Known types: a. Run `tokenctl types` for details.")
  }
}
