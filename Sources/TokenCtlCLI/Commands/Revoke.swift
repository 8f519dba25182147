import ArgumentParser
import TokenKit

extension TokenCtl {
  /// `tokenctl revoke`: sign out of an account.
  struct Revoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "revoke",
      abstract: "Revoke an account's tokens at the server, then remove the account.",
      discussion: """
        When the account type has a revocation endpoint (RFC 7009), the refresh token and \
        the access token are revoked there first; if that fails the account is kept and \
        the exit status is 15. Types without an endpoint are removed locally, and tokenctl \
        says so: their tokens stay valid at the server until they expire. --local skips \
        the server entirely.
        """)

    @Argument(help: ArgumentHelp("The account: TYPE:NAME, or a NAME that is unique.", valueName: "account"))
    var account: String

    @Flag(help: "Remove the account from this computer without telling the server.")
    var local = false

    @OptionGroup var groupOption: GroupOption

    func run() async throws {
      let context = CLIContext.required
      let store = try groupOption.store(in: context)
      let reference = AccountReference(parsing: account, knownTypes: Set(context.registry.ids))
      let listing = try reference.resolve(in: store)
      let result: AccountManager.SignOut
      if local {
        // No configuration, no network: `--local` must work when both are broken, and it
        // reads no token, so it also removes an item whose secret is unreadable.
        guard try store.remove(listing.account.key) else {
          throw TokenKitError(.noSuchAccount, "no account '\(reference)' in group '\(store.group)'")
        }
        result = AccountManager.SignOut(
          account: listing.account, revokedAtServer: false, note: "the server was not told (--local)")
      } else {
        result = try await context.manager(store: store).signOut(listing.account.key)
      }
      let name = result.account.qualifiedName
      let text =
        result.revokedAtServer
        ? "Revoked the tokens of \(name) at the server and removed the account from group '\(store.group)'."
        : "Removed \(name) from group '\(store.group)'; \(result.note ?? "its tokens were not revoked")."
      context.output.writeError(TerminalSafe.text(text) + "\n")
    }
  }
}
