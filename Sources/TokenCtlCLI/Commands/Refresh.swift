import ArgumentParser
import TokenKit

extension TokenCtl {
  /// `tokenctl refresh`: refresh an account's tokens now.
  struct Refresh: AsyncParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "refresh",
      abstract: "Refresh the tokens of an account, or of every account, now.",
      discussion: """
        Uses the refresh token whatever the access token's expiry, and stores what the \
        server returns, including a rotated refresh token. A rejected refresh token \
        marks the account "needs sign-in" (exit status 5); network and server errors \
        leave the tokens as they were. With --all, every account of the group is \
        refreshed and the exit status is that of the first failure.
        """)

    @Argument(
      help: ArgumentHelp("The account: TYPE:NAME, or a NAME that is unique.", valueName: "account"),
      completion: ShellCompletion.accounts)
    var account: String?

    @Flag(help: "Refresh every refreshable account of the group.")
    var all = false

    @OptionGroup var groupOption: GroupOption

    @Flag(help: "Print the refreshed accounts as JSON.")
    var json = false

    func validate() throws {
      guard (account == nil) == all else { throw ValidationError("Name one account, or give --all.") }
    }

    func run() async throws {
      let session = try CommandSession.open(group: groupOption.group, configured: false)
      let context = session.context
      let store = session.store
      let keys: [AccountKey]
      if all {
        keys = try store.list(.all).filter { $0.renewable && !$0.account.needsSignIn }.map(\.account.key)
      } else {
        let reference = AccountReference(parsing: account ?? "", knownTypes: Set(context.registry.ids))
        keys = [try reference.resolve(in: store).account.key]
      }
      let manager = try session.configured().manager
      var refreshed: [AccountListing] = []
      var firstFailure: TokenKitError?
      for key in keys {
        do {
          let stored = try await manager.refresh(key)
          let listing = AccountListing(account: stored.account, tokens: stored.tokens.summary)
          refreshed.append(listing)
          if !json {
            context.output.write(
              TerminalSafe.text(
                "Refreshed \(stored.account.qualifiedName): \(AccountStatusText(listing, clock: context.clock).text).")
                + "\n")
          }
        } catch let error as TokenKitError where all {
          // One account's failure must not keep the others from being refreshed.
          context.output.writeError(TerminalSafe.text("tokenctl: \(key): \(error.message)") + "\n")
          firstFailure = firstFailure ?? error
        }
      }
      if json {
        context.output.write(
          JSONOutput.render(AccountsDocument(accounts: refreshed.map { AccountDocument($0, clock: context.clock) })))
      }
      if let firstFailure { throw firstFailure }
    }
  }
}
