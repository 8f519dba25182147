import AgentFrontEnd
import CredentialHelpers
import Foundation
import Testing

/// What a client sends the agent of git's request (``CredentialInput``): what the agent
/// reads to choose and answer, and nothing else; and nothing at all where the direct path
/// would refuse the request, so that the agent's answer stays the direct path's.
@Suite struct CredentialInputTests {
  @Test func itsLineLimitIsTheCores() {
    #expect(CredentialInput.lineLimit == CredentialMessage.maximumLineLength)
  }

  /// The committed seeds of the credential fuzzer, and a few more with what must not leave.
  static var requests: [[UInt8]] {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Fuzz/Corpus/credential")
    let seeds = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted().compactMap {
      try? Array(Data(contentsOf: folder.appendingPathComponent($0)))
    }
    let more = [
      "protocol=https\nhost=git.example.org\nusername=ada\npassword=hunter2-secret\n\n",
      "capability[]=authtype\ncapability[]=state\nprotocol=https\nhost=git.example.org\npath=a/b.git\n"
        + "wwwauth[]=Bearer realm=\"x\"\nstate[]=helper:secret-state\noauth_refresh_token=secret-refresh\n\n",
      "url=https://git.example.org/a.git\npassword=hunter2-secret\n",
      "protocol=https\nhost=git.example.org\ncredential=secret-credential\nauthtype=Bearer\nephemeral=1\n",
      "protocol=https\nhost=h\n\npassword=after-the-blank-line\n",
    ]
    return seeds + more.map { Array($0.utf8) }
  }

  /// The agent chooses the account from `protocol`, `host`, `path` and `username`, and the
  /// answer's form from `capability[]`: the same from what it is sent as from git's whole
  /// request. Nothing else is sent.
  @Test func theAgentIsSentWhatItChoosesByAndNothingElse() throws {
    var sent = 0
    for request in Self.requests {
      let whole = try? CredentialMessage.parse(request)
      guard let text = CredentialInput.forAgent(request) else {
        // Not sent: the direct path refuses it, or its URL has a user's part.
        let url = whole?["url"] ?? String(decoding: request, as: UTF8.self)
        #expect(whole == nil || url.contains("@"), "\(String(decoding: request, as: UTF8.self).debugDescription)")
        continue
      }
      sent += 1
      let original = try #require(whole, "sent a request the direct path refuses")
      let cut = try CredentialMessage.parse(Array(text.utf8))
      #expect(CredentialRequest(cut) == CredentialRequest(original), "\(text.debugDescription)")
      #expect(cut.values("capability") == original.values("capability"))
      let keys = Set(cut.attributes.map(\.key))
      #expect(keys.isSubset(of: ["protocol", "host", "path", "username", "capability[]"]), "\(keys)")
      #expect(!text.contains("secret") && !text.contains("hunter2"), "\(text.debugDescription)")
    }
    #expect(sent >= 10)
  }

  /// Each of these the direct path refuses, in its own words: the agent is not asked.
  @Test(arguments: [
    "protocol=https\nhost=h\nno-equals-sign\n", "protocol=https\n=empty key\nhost=h\n",
    "protocol=https\r\nhost=h\n", "protocol=https\nhost=h\u{0}\n",
    "protocol=https\nhost=h\nwwwauth[]=" + String(repeating: "x", count: 64 * 1024) + "\n",
  ])
  func aRequestTheDirectPathRefusesIsNotSent(_ request: String) {
    #expect(throws: (any Error).self) { try CredentialMessage.parse(Array(request.utf8)) }
    #expect(CredentialInput.forAgent(Array(request.utf8)) == nil)
  }

  @Test func textThatIsNotUTF8IsNotSent() {
    #expect(CredentialInput.forAgent(Array("protocol=https\nhost=h\npassword=".utf8) + [0xFF, 10]) == nil)
  }

  /// A URL's user part may carry a password (`https://ada:secret@host/`).
  @Test func aURLWithAUserPartIsNotSent() {
    #expect(CredentialInput.forAgent(Array("url=https://ada:secret@git.example.org/\n".utf8)) == nil)
    #expect(
      CredentialInput.forAgent(Array("url=https://git.example.org/a.git\n".utf8))
        == "url=https://git.example.org/a.git\n")
  }
}
