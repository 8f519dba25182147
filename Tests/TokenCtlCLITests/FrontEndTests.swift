import AgentFrontEnd
import CLinux
import CredentialHelpers
import Testing
import TokenKit

@testable import TokenCtlCLI

/// The front end links neither the core nor the credential helper, so it keeps its own
/// copies of the few values it shares with them; these must not drift.
@Suite struct FrontEndTests {
  @Test func itsCopiesOfTheCoresValuesAgree() {
    #expect(AgentAsk.defaultGroup == Account.defaultGroup)
    #expect(AgentAsk.answerTimeoutMilliseconds == Int32(2 * HTTPTransportLimits.totalTimeoutSeconds + 15) * 1000)
    #expect(FrontEnd.credentialInputLimit == CredentialMessage.maximumInputLength)
    #expect(ClientCommand.kubeExecInfoVariable == ExecCredential.variable)
    #expect(ClientCommand.dockerNotFound == DockerCredentials.notFound)
    #expect(FrontEnd.cargoHello == CargoCredentialResponse.hello)
    #expect(FrontEnd.cargoLineLimit == TokenCtl.CargoCredential.maximumLineLength)
  }

  /// The front end reads its arguments where CLinux saved them before main, not from
  /// CommandLine (which Embedded Swift has not): the same words, in order.
  @Test func theArgumentsSavedBeforeMainAreTheProcesses() {
    let saved = (0..<Int(tokenctl_argument_count())).map { tokenctl_arguments()[$0].map { String(cString: $0) } }
    #expect(saved == CommandLine.arguments.map { Optional($0) })
    #expect(saved.count >= 1)
  }

  /// cargo runs a provider with `--cargo-plugin` alone; anything more is the parser's.
  @Test func cargoPluginIsTakenAlone() {
    #expect(ClientCommand(["--cargo-plugin"]) == .cargoPlugin)
    #expect(ClientCommand(["--cargo-plugin", "--group", "g"]) == nil)
    #expect(ClientCommand(["cargo-credential", "--cargo-plugin"]) == nil)
  }

  /// `token URL` names no account: the one test of it, for the front end and the full
  /// program alike, is `://` anywhere in the word.
  @Test func anAccountWithASchemeSeparatorNamesAURL() {
    for url in ["https://git.example.org/", "ssh://a", "://", "x://", "caf\u{E9}://h", "a:b://c"] {
      #expect(ClientCommand.namesURL(url), "\(url)")
    }
    for name in ["ada", "", ":", "//", ":/", "a:/b", "graph:ada", "a/:/b", "https:/x", "caf\u{E9}"] {
      #expect(!ClientCommand.namesURL(name), "\(name)")
    }
    #expect(ClientCommand(["token", "https://example.org/"]) == nil)
    #expect(ClientCommand(["token", "graph:ada"]) == .token(account: "graph:ada", minValid: nil, group: nil))
  }

  /// kubectl's plugin as the parser reads it, and nothing odder.
  @Test func kubeCredentialIsTakenWithAtMostItsServerAndGroup() {
    #expect(ClientCommand(["kube-credential"]) == .kubeCredential(server: nil, group: nil))
    #expect(
      ClientCommand(["kube-credential", "--server", "https://k8s.example", "--group", "g"])
        == .kubeCredential(server: "https://k8s.example", group: "g"))
    #expect(ClientCommand(["kube-credential", "--server"]) == nil)
    #expect(ClientCommand(["kube-credential", "--server", "a", "--server", "b"]) == nil)
    #expect(ClientCommand(["kube-credential", "extra"]) == nil)
    #expect(ClientCommand(["kube-credential", "--server=https://k8s.example"]) == nil)
    #expect(ClientCommand(["token", "ada", "--server", "https://k8s.example"]) == nil)
  }

  /// Each name the front end is installed under runs the command the full program's own
  /// executable of that name runs.
  @Test func eachNameRunsItsCommand() {
    #expect(FrontEnd.prefix(forProgram: "tokenctl") == [])
    #expect(FrontEnd.prefix(forProgram: "git-credential-tokenctl") == ["credential"])
    #expect(FrontEnd.prefix(forProgram: "docker-credential-tokenctl") == [TokenCtl.DockerCredential.commandName])
  }
}
