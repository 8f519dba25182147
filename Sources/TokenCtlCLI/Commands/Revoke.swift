import ArgumentParser
import TokenKit

extension TokenCtl {
  /// `tokenctl revoke`: sign out of an account.
  struct Revoke: AsyncParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "revoke",
      abstract: "Revoke an account's tokens at the server, then remove the account (also: logout).",
      discussion: """
        When the account type has a revocation endpoint (RFC 7009), the refresh token and \
        the access token are revoked there first; if that fails the account is kept and \
        the exit status is 15. Types without an endpoint are removed locally, and tokenctl \
        says so: their tokens stay valid at the server until they expire. --local skips \
        the server entirely.
        """,
      aliases: ["logout"])

    @Argument(
      help: ArgumentHelp("The account: TYPE:NAME, or a NAME that is unique.", valueName: "account"),
      completion: ShellCompletion.accounts)
    var account: String

    @Flag(help: "Remove the account from this computer without telling the server.")
    var local = false

    @OptionGroup var groupOption: GroupOption

    @Flag(help: "Print what was done as JSON.")
    var json = false

    func run() async throws {
      let session = try CommandSession.open(group: groupOption.group, configured: false)
      let context = session.context
      let store = session.store
      let reference = AccountReference(parsing: account, knownTypes: Set(context.registry.ids))
      let listing = try reference.resolve(in: store)
      var result: AccountManager.SignOut
      if local {
        // No network, and no need of config.toml: `--local` must work when either is
        // broken. The hook, which config.toml names, hears of it when the file is usable.
        let manager: AccountManager
        do {
          manager = try session.configured().manager
        } catch let error as TokenKitError {
          context.warnings.add("no hook was told of the removal: \(error.message)")
          manager = session.manager
        }
        result = try await manager.signOut(listing.account.key, localOnly: true)
        result.note = result.note.map { $0 + " (--local)" }
      } else {
        result = try await session.configured().manager.signOut(listing.account.key)
      }
      let name = result.account.qualifiedName
      if json {
        context.output.write(
          JSONOutput.render(
            RevokeDocument(
              account: name, id: result.account.id, group: store.group, revoked_at_server: result.revokedAtServer,
              note: result.note)))
        return
      }
      context.inform(
        result.revokedAtServer
          ? "Revoked the tokens of \(name) at the server and removed the account from group '\(store.group)'."
          : "Removed \(name) from group '\(store.group)'; \(result.note ?? "its tokens were not revoked").")
    }
  }

  /// `revoke --json`: the account removed, and whether the server was told.
  struct RevokeDocument: Encodable {
    let format = JSONOutput.formatVersion
    var account: String
    var id: String
    var group: String
    var revoked_at_server: Bool
    /// Why the tokens were not revoked at the server, when they were not.
    var note: String?
  }
}
