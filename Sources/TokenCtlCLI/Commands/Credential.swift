import ArgumentParser
import TokenKit

extension TokenCtl {
  /// `tokenctl credential`: git's credential helper protocol, as `git-credential-tokenctl`.
  struct Credential: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "credential",
      abstract: "Answer git's credential requests with fresh tokens (git-credential-tokenctl).",
      discussion: """
        Reads a git-credential(1) request on standard input. 'get' prints the username and \
        a token valid for at least a minute for the account that serves the host, refreshing \
        it first; 'erase' marks that account's access token expired (its refresh token is \
        kept); 'store' does nothing. When no account serves the host, or several do, nothing \
        is printed, so git asks its next helper. Git runs this as the helper 'tokenctl' \
        (see 'tokenctl setup-git' and git-credential-tokenctl(1)).

        Environment:
          TOKENCTL_ACCOUNT  The account to answer with, when its type serves the host.
        """)

    @Argument(help: ArgumentHelp("get, store or erase, as git calls it.", valueName: "operation"))
    var operation: String

    @OptionGroup var groupOption: GroupOption

    func run() async throws {
      let context = CLIContext.required
      let input = context.readInput(CredentialMessage.maximumInputLength)
      // Git may learn new operations; an unknown one, like `store`, is not refused.
      guard operation == "get" || operation == "erase" else { return }
      let request: CredentialMessage
      do {
        request = try CredentialMessage.parse(input)
        try request.requireProtocolAndHost()
      } catch {
        context.output.writeError("tokenctl credential: refused the request: \(error)\n")
        throw ExitCode.failure
      }
      let store = try groupOption.store(in: context)
      let helper = CredentialHelper(
        registry: try context.effectiveRegistry(context.configuration()), store: store,
        environment: context.environment, clock: context.clock,
        warn: { [output = context.output] text in
          // Names come from the keyring and the request; keep their control characters off
          // the terminal, but not our own line breaks.
          let lines = text.split(separator: "\n").map { TerminalSafe.text(String($0)) }
          output.writeError("tokenctl credential: " + lines.joined(separator: "\n") + "\n")
        })
      if operation == "erase" { return try helper.erase(request) }
      let answer = try await helper.get(request) { key in
        try await context.manager(store: store).freshTokens(
          for: key, minimumValidity: CredentialHelper.minimumValidity)
      }
      if let answer { context.output.write(try answer.serialized()) }
    }
  }
}
