import AgentFrontEnd
import CredentialHelpers
import Foundation
import Testing

@testable import TokenCtlCLI

/// The wire formats of the helpers for tools other than git, as the tools' own
/// documentation gives them: cargo's credential provider protocol (The Cargo Book,
/// "Credential Provider Protocol"), Kubernetes' ExecCredential, Docker's `get` input.
@Suite struct ToolProtocolTests {
  func json(_ response: CargoCredentialResponse) -> String {
    JSONOutput.compact(response)
  }

  @Test func cargoResponsesAreTheCrateSerdeEncoding() {
    #expect(
      json(.token("Bearer t", expiration: 1_800_000_000))
        == #"{"Ok":{"cache":"expires","expiration":1800000000,"kind":"get","operation_independent":true,"token":"Bearer t"}}"#
        + "\n")
    #expect(
      json(.token("Bearer t", expiration: nil))
        == #"{"Ok":{"cache":"session","kind":"get","operation_independent":true,"token":"Bearer t"}}"# + "\n")
    #expect(json(.urlNotSupported) == #"{"Err":{"kind":"url-not-supported"}}"# + "\n")
    #expect(json(.notFound) == #"{"Err":{"kind":"not-found"}}"# + "\n")
    #expect(json(.operationNotSupported) == #"{"Err":{"kind":"operation-not-supported"}}"# + "\n")
    #expect(json(.other("why")) == #"{"Err":{"kind":"other","message":"why"}}"# + "\n")
  }

  @Test(
    arguments: [
      ("sparse+https://cargo.example.org/index/", "https://cargo.example.org/index/"),
      ("registry+https://github.com/rust-lang/crates.io-index", "https://github.com/rust-lang/crates.io-index"),
      ("https://cargo.example.org/index/", "https://cargo.example.org/index/"),
    ])
  func cargoRequestsNameTheIndexWithoutHowCargoReadsIt(indexURL: String, expected: String) throws {
    let line =
      #"{"v":1,"registry":{"index-url":"\#(indexURL)","name":"corp","headers":["WWW-Authenticate: Cargo"]},"#
      + #""kind":"get","operation":"read","args":["--cargo-plugin"]}"#
    let request = try JSONDecoder().decode(CargoCredentialRequest.self, from: Data(line.utf8))
    #expect(request.version == 1)
    #expect(request.kind == "get")
    #expect(request.registry.name == "corp")
    #expect(request.indexURL == expected)
  }

  @Test func execCredentialRequestsAreReadFromKubectlsEnvironment() {
    let info =
      #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","#
      + #""spec":{"cluster":{"server":"https://k8s.example.org:6443","certificate-authority-data":"AA=="},"#
      + #""interactive":false}}"#
    let request = ExecCredential.request(info)
    #expect(request?.apiVersion == "client.authentication.k8s.io/v1beta1")
    #expect(request?.spec?.cluster?.server == "https://k8s.example.org:6443")
    #expect(ExecCredential.request(nil) == nil)
    #expect(ExecCredential.request(#"{"kind":"Pod","apiVersion":"v1"}"#) == nil)
    #expect(ExecCredential.request("not json") == nil)
  }

  @Test func anExecCredentialAnswerHasNoSpec() {
    let answer = ExecCredential(
      apiVersion: "client.authentication.k8s.io/v1",
      status: .init(token: "t", expirationTimestamp: "2027-01-15T08:00:00Z"))
    #expect(
      JSONOutput.compact(answer)
        == #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","#
        + #""status":{"expirationTimestamp":"2027-01-15T08:00:00Z","token":"t"}}"# + "\n")
  }

  @Test(arguments: [
    ("registry.example.org\n", "registry.example.org"), (" \t127.0.0.1:5000\r\n", "127.0.0.1:5000"), ("\n", ""),
  ])
  func dockersServerURLLosesTheLineBreakAroundIt(input: String, expected: String) {
    #expect(ClientCommand.dockerServer(Array(input.utf8)) == expected)
  }
}
