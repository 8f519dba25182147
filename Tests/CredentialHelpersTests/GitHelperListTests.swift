import CredentialHelpers
import Testing

/// The order git asks credential helpers in (gitcredentials(7)), as the doctor reads it.
@Suite struct GitHelperListTests {
  typealias Entry = GitHelperList.Entry

  static func entry(_ value: String, _ context: String? = nil, scope: String = "global") -> Entry {
    Entry(scope: scope, context: context, value: value)
  }

  @Test func gitsOutputIsReadInItsOrderWithURLsAsWritten() {
    let output =
      "system\0credential.helper\ncache --timeout=60\0"
      + "global\0credential.https://GitHub.com/Acme.helper\ntokenctl\0"
      + "local\0credential.helper\n\0"
      + "global\0credential.helper\0"
    #expect(
      GitHelperList.entries(parsing: Array(output.utf8)) == [
        Self.entry("cache --timeout=60", scope: "system"), Self.entry("tokenctl", "https://GitHub.com/Acme"),
        Self.entry("", scope: "local"),
      ])
  }

  @Test func aHelperBeforeTokenctlIsAskedFirstWhateverTheURLsSpecificity() {
    let list = GitHelperList([Self.entry("cache"), Self.entry("tokenctl", "https://github.com")])
    #expect(list.helpersBeforeTokenctl == [Self.entry("cache")])
  }

  @Test func anEmptyValueClearsTheHelpersBeforeIt() {
    let first = GitHelperList([Self.entry("cache"), Self.entry("", "https://github.com"), Self.entry("tokenctl")])
    #expect(first.helpersBeforeTokenctl == [])
    #expect(first.helpers.map(\.value) == ["tokenctl"])

    let cleared = GitHelperList([Self.entry("tokenctl"), Self.entry("", scope: "local"), Self.entry("store")])
    #expect(cleared.helpersBeforeTokenctl == nil)
    #expect(cleared.clearingTokenctl == [Self.entry("", scope: "local")])
  }

  @Test(
    arguments: [
      ("tokenctl", true), ("tokenctl --verbose", true), ("/usr/local/bin/git-credential-tokenctl", true),
      ("!tokenctl credential", true), ("!/opt/bin/git-credential-tokenctl", true), ("cache", false),
      ("/usr/bin/tokenctl-other", false), ("tokenctlx", false),
    ])
  func tokenctlIsRecognisedInTheFormsGitRuns(value: String, isTokenctl: Bool) {
    #expect(Self.entry(value).isTokenctl == isTokenctl)
  }

  @Test func onlyURLEntriesAreLeftToGitsMatchingAndHostOnlyOnesGetTheScheme() {
    let entries = [Self.entry("cache"), Self.entry("tokenctl", "https://github.com"), Self.entry("x", "github.com")]
    let settings = GitHelperList.urlMatchSettings(entries, scheme: "https")
    #expect(settings["GIT_CONFIG_COUNT"] == "2")
    #expect(settings["GIT_CONFIG_KEY_0"] == "credential.https://github.com.h1")
    #expect(settings["GIT_CONFIG_KEY_1"] == "credential.https://github.com.h2")
    #expect(
      GitHelperList.entriesMatching(entries, urlMatchOutput: "credential.h2 2\n").map(\.value) == ["cache", "x"])
  }
}
