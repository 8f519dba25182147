import AgentProtocol
import ArgumentParser
import CredentialHelpers
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

        When a type serves the host but no account of it is signed in, and a terminal is \
        attached and GIT_TERMINAL_PROMPT is not 0, 'get' offers to sign in there first \
        (the browser with a display, the device grant without one).

        Environment:
          TOKENCTL_ACCOUNT     The account to answer with, when its type serves the host.
          GIT_TERMINAL_PROMPT  0: never offer to sign in, only say which login to run.
        """)

    @Argument(
      help: ArgumentHelp("get, store or erase, as git calls it.", valueName: "operation"),
      completion: .list(["get", "store", "erase"]))
    var operation: String

    @OptionGroup var groupOption: GroupOption

    func run() async throws {
      try await Self.answer(operation: operation, group: groupOption.group)
    }

    /// The command's work, on its parsed values. `TokenCtl.main` calls it directly, without
    /// parsing, for the plain `credential OPERATION` git runs (see ``TokenCtl/Shortcut``).
    static func answer(operation: String, group: String?) async throws {
      let running = CLIContext.running
      let input = running.readInput(CredentialMessage.maximumInputLength)
      // Git may learn new operations; an unknown one, like `store`, is not refused, and
      // costs no reading of files.
      guard operation == "get" || operation == "erase" else { return }
      let request: CredentialMessage
      do {
        request = try CredentialMessage.parse(input)
        try request.requireProtocolAndHost()
      } catch {
        running.output.writeError("tokenctl credential: refused the request: \(error)\n")
        throw ExitCode.failure
      }
      let session = try CommandSession.open(group: group)
      if operation == "erase" { return try helper(session, name: "tokenctl credential").erase(request) }
      let answer = try await fill(
        request, session: session, name: "tokenctl credential", signIn: GitSignInOffer(session: session))
      if let answer { session.context.output.write(try answer.serialized()) }
    }

    /// The helper that answers for `session`'s group, telling the user on standard error,
    /// after `name`, why a request of ours got no answer.
    static func helper(_ session: CommandSession, name: String) -> CredentialHelper {
      let context = session.context
      return CredentialHelper(
        registry: session.registry, store: session.store,
        environment: context.environment, rules: session.configuration?.gitAccounts ?? [:], clock: context.clock,
        locks: context.accountLocks,
        explain: { [output = context.output] decline in
          // Names come from the keyring and the request; keep their control characters off
          // the terminal, but not our own line breaks.
          let lines = decline.warning.split(separator: "\n").map { TerminalSafe.text(String($0)) }
          output.writeError("\(name): " + lines.joined(separator: "\n") + "\n")
        })
    }

    /// The account that answers for `url` by the one host → account rule, as TYPE:NAME,
    /// for a command given a URL where it takes an account (`token`); what stops one from
    /// answering is the core's error, the same words as the helpers'.
    static func account(forURL url: String, session: CommandSession) throws -> String {
      guard let request = CredentialMessage(requestFor: url) else {
        throw TokenKitError(
          .noSuchAccount, "'\(TerminalSafe.text(url))' is not a URL with a host",
          recovery: "Give a URL such as https://git.example.org/, or an account: 'tokenctl list' shows them.")
      }
      let session = try session.configured()
      switch try helper(session, name: "tokenctl").choose(for: request) {
      case .account(let choice): return choice.account.qualifiedName
      case .notOurs: throw noTypeServes(request, url: url)
      case .declined(let reason):
        if case .ambiguous = reason { throw TokenKitError(.ambiguousAccount, reason.warning) }
        throw TokenKitError(.noSuchAccount, reason.warning)
      }
    }

    /// The error for a URL whose host no account type serves, for a command that has no
    /// other helper to leave it to (git's helper stays silent so that git asks the next).
    static func noTypeServes(_ request: CredentialMessage, url: String) -> TokenKitError {
      TokenKitError(
        .noSuchAccount, "no account type serves \(request["host"] ?? url)",
        recovery:
          "List the host in a type's [credentials] hosts (tokenctl-types(5)); 'tokenctl types' lists the types.")
    }

    /// The answer to a `get` request (git's, or one a helper for another tool made of its
    /// server's URL): from the agent when it runs, else from the keyring here, with the
    /// account's lock and refresh rules either way; nil when no account may answer.
    /// `signIn`, when given, may sign an account in for a host a type serves.
    static func fill(
      _ request: CredentialMessage, session: CommandSession, name: String, signIn: GitSignInOffer? = nil
    ) async throws -> CredentialMessage? {
      let context = session.context
      let helper = helper(session, name: name)
      switch context.agent?.credential(
        input: Array(try request.serialized().utf8), group: session.store.group, { context.environment[$0] })
      {
      case .answered(let answer, _, let warnings):
        for warning in warnings { context.warnings.add(warning) }
        guard let text = answer["answer"], !text.isEmpty else { return nil }
        return try CredentialMessage.parse(Array(text.utf8))
      case .failed(let error, _): throw error
      case nil: break
      }
      return try await helper.get(
        request,
        freshTokens: { key, stored in
          let manager = session.manager
          let validity = CredentialHelper.minimumValidity
          if let stored { return try await manager.freshTokens(for: stored, minimumValidity: validity) }
          return try await manager.freshTokens(for: key, minimumValidity: validity)
        },
        signIn: signIn.map { offer in { try await offer(types: $0, host: $1) } })
    }
  }
}
