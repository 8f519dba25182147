import GitCredentialHelper
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
}
