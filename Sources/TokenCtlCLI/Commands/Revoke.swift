import ArgumentParser
import TokenKit

extension TokenCtl {
  /// `tokenctl revoke`: forget an account.
  struct Revoke: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Remove an account and its tokens from the keyring.",
      discussion: """
        The tokens are removed from this machine only; this tokenctl does not yet revoke \
        them at the provider, where they stay valid until they expire.
        """)

    @Argument(help: ArgumentHelp("The account: TYPE:NAME, or a NAME that is unique.", valueName: "account"))
    var account: String

    @OptionGroup var groupOption: GroupOption

    func run() throws {
      let context = CLIContext.required
      let store = try groupOption.store(in: context)
      let reference = AccountReference(parsing: account, knownTypes: Set(context.registry.ids))
      let listing = try reference.resolve(in: store)
      guard try store.remove(listing.account.key) else {
        throw TokenKitError(.noSuchAccount, "no account '\(reference)' in group '\(store.group)'")
      }
      context.output.writeError(
        TerminalSafe.text(
          "Removed \(listing.account.qualifiedName) from group '\(store.group)'. Its tokens were not revoked at the provider."
        ) + "\n")
    }
  }
}
