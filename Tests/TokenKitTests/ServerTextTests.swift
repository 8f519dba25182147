import Testing
import TokenKit

@Suite struct ServerTextTests {
  @Test(arguments: [
    ("line\nhint: x", #"line\u{a}hint: x"#), ("cr\rlf", #"cr\u{d}lf"#), ("\u{1B}[2J", #"\u{1b}[2J"#),
    ("csi\u{9B}31m", #"csi\u{9b}31m"#), ("sep\u{2028}para\u{2029}", #"sep\u{2028}para\u{2029}"#),
    ("bidi\u{202E}txt\u{2066}", #"bidi\u{202e}txt\u{2066}"#), ("tab\there", #"tab\u{9}here"#),
    ("plain ünïcödé text", "plain ünïcödé text"),
  ])
  func unsafeCharactersAreEscaped(text: String, expected: String) {
    #expect(ServerText.escaped(text) == expected)
  }

  @Test func longTextIsCut() {
    let long = String(repeating: "a", count: 1000)
    #expect(ServerText.escaped(long) == String(repeating: "a", count: ServerText.maximumLength) + "…")
    #expect(ServerText.escaped(long, limit: nil) == long)
  }

  @Test func oauthErrorsKeepEveryFieldOnOneLine() {
    let error = OAuthError(code: "x\ny", errorDescription: "a\rb", errorURI: "https://e.example/\n")
    #expect(!error.description.contains("\n") && !error.description.contains("\r"))
    #expect(error.code == #"x\u{a}y"#)
    #expect(error.errorURI == #"https://e.example/\u{a}"#)
  }
}
