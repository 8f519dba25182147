import AgentFrontEnd
import ArgumentParser
import CredentialHelpers
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension TokenCtl {
  /// `tokenctl kube-credential`: a Kubernetes exec credential plugin, answered by the same
  /// host → account rule as git's.
  struct KubeCredential: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: ClientCommand.kubeCredentialName,
      abstract: "Answer kubectl's exec credential requests with fresh tokens.",
      discussion: """
        A Kubernetes exec credential plugin (client.authentication.k8s.io/v1 or v1beta1). \
        Prints an ExecCredential with the token and its expirationTimestamp, so that kubectl \
        runs it again only once the token has expired, for the account that serves the API \
        server, chosen as for git (tokenctl-types(5), [credentials.accounts] in tokenctl-config(5), \
        TOKENCTL_ACCOUNT, which the exec section's env may set). The server is the one \
        kubectl names in KUBERNETES_EXEC_INFO when the exec section says \
        provideClusterInfo: true, else --server. In a kubeconfig's user:

          exec:
            apiVersion: client.authentication.k8s.io/v1
            command: tokenctl
            args: [kube-credential]
            provideClusterInfo: true
            interactiveMode: Never
        """)

    @Option(
      help: ArgumentHelp(
        "The API server's URL, when kubectl does not give it (provideClusterInfo).", valueName: "url"))
    var server: String?

    @OptionGroup var groupOption: GroupOption

    static let name = "tokenctl kube-credential"

    func run() async throws {
      let session = try CommandSession.open(group: groupOption.group)
      let context = session.context
      let request = ExecCredential.request(context.environment[ExecCredential.variable])
      guard let server = ExecCredential.server(option: server, request: request) else {
        throw TokenKitError(
          .notConfigured, "kubectl named no API server",
          recovery: "Add 'provideClusterInfo: true' to the exec section of the kubeconfig's user, "
            + "or pass --server URL in its args.")
      }
      guard let message = CredentialMessage(requestFor: server) else {
        throw ValidationError("'\(TerminalSafe.text(server))' is not an API server URL.")
      }
      guard let answer = try await Credential.fill(message, session: session, name: Self.name),
        let json = ExecCredential.answer(answer, request: request)
      else {
        // kubectl has no next helper to ask: a host no type serves is said here. Otherwise
        // the helper said why on standard error, and what to run.
        if case .notOurs = try Credential.helper(session.configured(), name: Self.name).choose(for: message) {
          throw Credential.noTypeServes(message, url: server)
        }
        throw ExitCode.failure
      }
      context.output.write(json)
    }
  }
}
