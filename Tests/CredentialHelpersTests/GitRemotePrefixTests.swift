import CredentialHelpers
import Testing

struct GitRemotePrefixTests {
  @Test(
    arguments: [
      ("https://github.com/acme/", "https", "github.com", "acme/tools.git", 5),
      ("https://github.com/acme", "https", "github.com", "acme/tools.git", 4),
      ("https://github.com/acme", "https", "github.com", "acme", 4),
      ("https://github.com/acme/tools", "https", "github.com", "acme/tools.git", 10),
      ("https://GitHub.com/acme/", "HTTPS", "github.COM", "acme/x", 5),
      ("https://github.com", "https", "github.com", "anything/at/all", 0),
      ("https://github.com/", "https", "github.com", nil, 0),
      ("http://127.0.0.1:8080/repo", "http", "127.0.0.1:8080", "repo/.git", 4),
    ] as [(String, String, String, String?, Int)])
  func matches(prefix: String, scheme: String, host: String, path: String?, length: Int) throws {
    let rule = try #require(GitRemotePrefix(prefix))
    #expect(rule.match(scheme: scheme, host: host, path: path) == length)
  }

  @Test(
    arguments: [
      ("https://github.com/acme", "https", "github.com", "acme-corp/tools.git"),
      ("https://github.com/acme/", "https", "github.com", "acme"),
      ("https://github.com/acme/", "https", "github.com", nil),
      ("https://github.com/acme/", "http", "github.com", "acme/tools"),
      ("https://github.com/acme/", "https", "github.com.evil.example", "acme/tools"),
      ("https://github.com/acme/", "https", "github.com:444", "acme/tools"),
      ("https://github.com/acme/tools", "https", "github.com", "acme/tools-old.git"),
    ] as [(String, String, String, String?)])
  func doesNotMatch(prefix: String, scheme: String, host: String, path: String?) throws {
    let rule = try #require(GitRemotePrefix(prefix))
    #expect(rule.match(scheme: scheme, host: host, path: path) == nil)
  }

  @Test(arguments: [
    "github.com/acme", "ssh://github.com/acme", "https://", "https:///acme", "https://ada@github.com/",
    "https://github.com/acme?x=1", "https://github.com/#x", "file:///srv/git",
  ])
  func refusesWhatIsNotARemotePrefix(_ text: String) {
    #expect(GitRemotePrefix(text) == nil)
  }
}
