import AgentFrontEnd
import ArgumentParser
import CredentialHelpers
import TokenKit

extension TokenCtl {
  /// `tokenctl docker-credential`: the Docker credential helper protocol, as
  /// `docker-credential-tokenctl`, answered by the same host → account rule as git's.
  struct DockerCredential: AsyncParsableCommand {
    static let commandName = ClientCommand.dockerCredentialName

    static let configuration = CommandConfiguration(
      commandName: commandName,
      abstract: "Answer Docker's, Podman's and skopeo's credential requests (docker-credential-tokenctl).",
      discussion: """
        Speaks the Docker credential helper protocol. 'get' reads a registry (such as \
        registry.example.org or 127.0.0.1:5000) on standard input and prints \
        {"ServerURL", "Username", "Secret"}: the username the account type wants and a \
        token valid for at least a minute, from the account that serves the host, chosen \
        as for git (tokenctl-types(5), [credentials.accounts] in tokenctl-config(5), \
        TOKENCTL_ACCOUNT). For a host no account serves it prints 'credentials not found \
        in native keychain' and exits 1, so the tool goes on without credentials. 'list' \
        prints the hosts an account answers now. 'store' and 'erase' change nothing and \
        say so: accounts are signed in with 'tokenctl login' and out with 'tokenctl \
        revoke'. 'tokenctl setup-docker' names this helper in the tools' configuration.
        """)

    @Argument(
      help: ArgumentHelp("get, list, store or erase, as the tool calls it.", valueName: "operation"),
      completion: .list(["get", "list", "store", "erase"]))
    var operation: String

    @OptionGroup var groupOption: GroupOption

    static let notFound = DockerCredentials.notFound
    static let name = "docker-credential-tokenctl"

    func run() async throws {
      let running = CLIContext.running
      let output = running.output
      switch operation {
      case "get":
        let server = ClientCommand.dockerServer(running.readInput(CredentialMessage.maximumInputLength))
        guard let request = CredentialMessage(requestFor: server) else { throw Self.refuse(Self.notFound, output) }
        let session = try CommandSession.open(group: groupOption.group)
        let answer = try await Credential.fill(request, session: session, name: Self.name)
        let status = Self.write(answer, server: server, output: output)
        if status != 0 { throw ExitCode(status) }
      case "list":
        let session = try CommandSession.open(group: groupOption.group)
        let helper = Credential.helper(session, name: Self.name)
        var served: [String: String] = [:]
        for host in helper.servedHosts() {
          guard let request = CredentialMessage(requestFor: host),
            case .account(let choice) = try helper.choose(for: request)
          else { continue }
          served[host] = choice.username
        }
        output.write(JSONOutput.compact(served))
      case "store":
        _ = running.readInput(CredentialMessage.maximumInputLength)
        throw Self.refuse(
          "tokenctl keeps no registry passwords; it answers with the tokens of accounts signed in with "
            + "'tokenctl login' (see 'tokenctl types')", output)
      case "erase":
        _ = running.readInput(CredentialMessage.maximumInputLength)
        throw Self.refuse(
          "tokenctl keeps its accounts until they are revoked; see them with 'tokenctl list' and sign out "
            + "with 'tokenctl revoke'", output)
      default:
        throw Self.refuse("unknown operation '\(TerminalSafe.text(operation))': use get, list, store or erase", output)
      }
    }

    /// Writes `get`'s answer from the helper's (nil: none) and returns the exit status: the
    /// credentials, or the words that tell the tool there are none.
    static func write(_ answer: CredentialMessage?, server: String, output: any OutputSink) -> Int32 {
      write(DockerCredentials.answer(answer, server: server), output: output)
    }

    /// Writes `get`'s JSON line (nil: none) and returns the exit status.
    static func write(_ json: String?, output: any OutputSink) -> Int32 {
      guard let json else {
        output.write(notFound + "\n")
        return ExitCode.failure.rawValue
      }
      output.write(json)
      return ExitCode.success.rawValue
    }

    /// Says `message` where the protocol's clients read it, on standard output, and exits 1.
    static func refuse(_ message: String, _ output: any OutputSink) -> ExitCode {
      output.write(message + "\n")
      return ExitCode.failure
    }
  }
}
