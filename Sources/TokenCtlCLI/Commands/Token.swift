import ArgumentParser
import TokenKit

extension TokenCtl {
  /// `tokenctl token`: print an account's access token for a script or a tool.
  struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Print an account's access token, if it is valid for long enough.",
      discussion: """
        Prints the access token alone on standard output, for use as \
        `curl -H "Authorization: Bearer $(tokenctl token graph:ada@contoso.com)" URL`. \
        When the token expires within --min-valid seconds nothing is printed and the exit \
        status is 4.
        """)

    @Argument(help: ArgumentHelp("The account: TYPE:NAME, or a NAME that is unique.", valueName: "account"))
    var account: String

    // One minute covers a request's round trip and a little clock skew, so that a token
    // handed out is not rejected as expired on arrival.
    @Option(help: ArgumentHelp("Seconds the token must stay valid for.", valueName: "seconds"))
    var minValid: Int = 60

    @OptionGroup var groupOption: GroupOption

    func validate() throws {
      guard minValid >= 0 else { throw ValidationError("--min-valid must be 0 or more seconds.") }
    }

    func run() throws {
      let context = CLIContext.required
      let store = try groupOption.store(in: context)
      let reference = AccountReference(parsing: account, knownTypes: Set(context.registry.ids))
      let stored = try reference.load(from: store)
      let tokens = stored.tokens
      guard tokens.isValid(forAtLeast: Double(minValid), clock: context.clock) else {
        throw notValid(stored, clock: context.clock)
      }
      context.output.write(tokens.accessToken + "\n")
    }

    private func notValid(_ stored: StoredAccount, clock: some WallClock) -> TokenKitError {
      let name = stored.account.qualifiedName
      let left = Int(stored.tokens.expiresAt?.timeIntervalSince(clock.now) ?? 0)
      let message =
        left <= 0
        ? "the access token of \(name) expired \(DurationText.format(seconds: -left)) ago"
        : "the access token of \(name) is valid for \(DurationText.format(seconds: left)), less than --min-valid \(minValid) s"
      return TokenKitError(
        .tokenNotValid, message,
        recovery: "This tokenctl cannot refresh tokens yet: sign in to \(stored.account.type) again to get a new one.")
    }
  }
}
