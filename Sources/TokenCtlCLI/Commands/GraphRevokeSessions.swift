import ArgumentParser
import MicrosoftGraphAccount
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

extension TokenCtl.Graph {
  /// `tokenctl graph revoke-sessions`: sign the user out everywhere.
  struct RevokeSessions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "revoke-sessions",
      abstract: "Sign the user out of every app and browser, as after a lost laptop.",
      discussion: """
        Calls Graph's `POST /me/revokeSignInSessions`: every refresh token and session \
        cookie Microsoft issued to the user stops working, in every app on every device, \
        this account's included, so `tokenctl login graph` is needed afterwards. Asks \
        first on the terminal; without a terminal it refuses unless --yes is given.

        Needs the delegated permission User.RevokeSessions.All, which is asked for this \
        one call (a token for other scopes from the account's sign-in): a user or an \
        administrator must have consented to it. Refused for a guest account, whose \
        sessions at home Graph does not revoke.
        """)

    @Flag(help: "Do not ask for confirmation.")
    var yes = false

    @OptionGroup var accountOption: GraphAccountOption

    func run() async throws {
      let (context, graph, account) = try accountOption.open()
      let name = TerminalSafe.text(account.name)
      if !yes {
        // The question needs a person to answer it: a script or a pipe on standard input
        // must not be taken for a "yes" by accident.
        guard context.output.isTerminal, isatty(STDIN_FILENO) == 1 else {
          throw ValidationError(
            "Not signing \(name) out of every app without asking, and there is no terminal to ask on."
              + " Pass --yes to do it anyway.")
        }
        context.output.writeError(
          "This signs \(name) out of every app and browser on every device, tokenctl included.\n"
            + "Sign out everywhere? [y/N] ")
        let answer = context.readLine()?.filter { !$0.isWhitespace }.lowercased()
        guard answer == "y" || answer == "yes" else {
          context.output.writeError("Nothing was revoked.\n")
          throw ExitCode.failure
        }
      }
      try await graph.revokeSignInSessions()
      context.output.write(
        "Signed \(name) out of every app. Run `tokenctl login \(account.type)` to sign in again.\n")
    }
  }
}
