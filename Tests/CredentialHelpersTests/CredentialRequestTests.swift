import CredentialHelpers
import Testing

/// What the chooser reads of a credential message.
@Suite struct CredentialRequestTests {
  @Test(
    arguments: [
      (
        "protocol=HTTPS\nhost=GitHub.com:8443\npath=Acme/App.git\nusername=Ada\n",
        CredentialRequest(scheme: "https", host: "github.com:8443", path: "Acme/App.git", username: "Ada")
      ),
      ("protocol=https\nhost=github.com\n", CredentialRequest(scheme: "https", host: "github.com")),
      ("host=a\nprotocol=http\nhost=b\n", CredentialRequest(scheme: "http", host: "b")),
      ("protocol=https\n", nil),
      ("host=github.com\n", nil),
      ("", nil),
    ] as [(String, CredentialRequest?)])
  func aRequestIsReadFromItsMessage(text: String, expected: CredentialRequest?) throws {
    #expect(CredentialRequest(try CredentialMessage.parse(Array(text.utf8))) == expected)
  }

  /// The request a tool other than git makes of its server's URL: Docker's registry names,
  /// cargo's index URLs (without `sparse+`), and what may never reach a rule.
  @Test(
    arguments: [
      ("registry.example.org", CredentialRequest(scheme: "https", host: "registry.example.org")),
      ("127.0.0.1:5000", CredentialRequest(scheme: "https", host: "127.0.0.1:5000")),
      ("https://Index.Docker.io/v1/", CredentialRequest(scheme: "https", host: "index.docker.io", path: "v1/")),
      ("http://127.0.0.1:8080/index/", CredentialRequest(scheme: "http", host: "127.0.0.1:8080", path: "index/")),
      ("[::1]:5000/a", CredentialRequest(scheme: "https", host: "[::1]:5000", path: "a")),
      ("", nil),
      ("https://", nil),
      ("https:///path", nil),
      ("ada@registry.example.org", CredentialRequest(scheme: "https", host: "registry.example.org", username: "ada")),
      (
        "https://Ada@Git.example.org/a.git",
        CredentialRequest(scheme: "https", host: "git.example.org", path: "a.git", username: "Ada")
      ),
      ("https://@git.example.org/", nil),
      ("https://ada:secret@registry.example.org/", nil),
      ("registry.example.org/?q=1", nil),
      ("registry.example.org/#top", nil),
      ("registry.example.org\nhost=evil.example", nil),
      ("registry .example.org", nil),
      ("ht tp://registry.example.org", nil),
      // Hosts that tools read otherwise: a URL inside the URL, a backslash, where urllib3
      // ends the host as at a slash, a percent-encoded host, which some decode, and
      // brackets not around an IPv6 address.
      ("http://trusted.example/@@http://evil.example/repo", nil),
      ("trusted.example/x://evil.example", nil),
      ("https://trusted.example/a/b://c", nil),
      ("http://evil.example\\@trusted.example/simple/", nil),
      ("https://trusted.example/a\\b", nil),
      ("https://%74rusted.example/", nil),
      ("http://[fe80::1%25eth0]:8080/", nil),
      ("http://[::1]:8080]/", nil),
      ("http://[::1]x/", nil),
      ("http://trusted.example]/", nil),
      ("http://[::1]]/", nil),
      (
        "https://ada%40corp@git.example.org/a%20b",
        CredentialRequest(scheme: "https", host: "git.example.org", path: "a%20b", username: "ada%40corp")
      ),
    ] as [(String, CredentialRequest?)])
  func aToolsServerURLMakesTheRequestGitWouldSend(url: String, expected: CredentialRequest?) {
    #expect(CredentialMessage(requestFor: url).flatMap(CredentialRequest.init) == expected)
  }
}
