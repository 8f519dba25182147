import AgentProtocol
import ArgumentParser
import TokenKit

extension TokenCtl {
  /// `tokenctl list`: the accounts of a group and the state of their tokens.
  struct List: ParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "List accounts and whether their tokens are usable. Never prints a token.")

    @Option(help: ArgumentHelp("Only accounts of this type.", valueName: "type"), completion: ShellCompletion.types)
    var type: String?

    @OptionGroup var groupOption: GroupOption

    @Flag(help: "Print JSON (with a format version) instead of a table.")
    var json = false

    func run() throws {
      let session = try CommandSession.open(group: groupOption.group, configured: false)
      let context = session.context
      if let type { _ = try context.registry.descriptor(type) }
      let store = session.store
      let listings: [AccountListing]
      switch context.agent?.list(type: type, group: store.group) {
      case .answered(let answer, _, _): listings = answer.accountRecords ?? []
      case .failed(let error, _): throw error
      case nil: listings = try store.list(AccountQuery(type: type))
      }
      if json {
        context.output.write(
          JSONOutput.render(AccountsDocument(accounts: listings.map { AccountDocument($0, clock: context.clock) })))
        return
      }
      guard !listings.isEmpty else {
        context.output.writeError(
          "No accounts in group '\(store.group)'.\n"
            + "hint: Run `tokenctl types` to see the account types, then `tokenctl login` with one of them.\n")
        return
      }
      let style = Style(context: context)
      var table = Table(header: ["TYPE", "ACCOUNT", "GROUP", "STATUS"])
      var usable: [Bool] = []
      for listing in listings {
        let status = AccountStatusText(listing, clock: context.clock)
        let account = listing.account
        table.rows.append([account.type, account.name, account.group, status.text].map(TerminalSafe.text))
        usable.append(status.usable)
      }
      context.output.write(
        table.render(style: style) { row, column, text in
          column == 3 ? (usable[row] ? style.green(text) : style.yellow(text)) : text
        })
    }
  }
}

/// The STATUS column: "valid for 42 min, refreshable", "expired, needs sign-in", ….
struct AccountStatusText {
  let text: String
  let usable: Bool

  init(_ listing: AccountListing, clock: some WallClock) {
    let summary = listing.tokens
    let renewable = listing.renewable
    let refresh =
      listing.account.isServiceAccount ? "renews itself" : renewable ? "refreshable" : "needs sign-in when expired"
    if listing.account.needsSignIn {
      text = "needs sign-in (refresh token rejected)"
      usable = false
      return
    }
    switch summary.status(clock: clock) {
    case .valid(let seconds):
      text = "valid for \(DurationText.format(seconds: seconds)), \(refresh)"
      usable = true
    case .noExpiry:
      text = "valid (no expiry), \(refresh)"
      usable = true
    case .expired:
      text = renewable ? "expired, \(refresh)" : "expired, needs sign-in"
      usable = false
    }
  }
}

struct AccountsDocument: Encodable {
  let format = JSONOutput.formatVersion
  var accounts: [AccountDocument]
}

/// One account in `list --json`. It has no token field, by design.
struct AccountDocument: Encodable {
  var type: String
  var id: String
  var name: String
  var group: String
  var scopes: [String]
  var created_at: String
  var updated_at: String
  var expires_at: String?
  var expires_in: Int?
  var valid: Bool
  /// A new token can be had without the user: a refresh token, or a service account.
  var refreshable: Bool
  var needs_sign_in: Bool
  var service_account: Bool
  var issuer: String?

  init(_ listing: AccountListing, clock: some WallClock) {
    let account = listing.account
    type = account.type
    id = account.id
    name = account.name
    group = account.group
    scopes = account.scopes
    created_at = JSONOutput.timestamp(account.createdAt)
    updated_at = JSONOutput.timestamp(account.updatedAt)
    expires_at = listing.tokens.expiresAt.map(JSONOutput.timestamp)
    switch listing.tokens.status(clock: clock) {
    case .valid(let seconds):
      expires_in = seconds
      valid = true
    case .noExpiry:
      valid = true
    case .expired:
      expires_in = 0
      valid = false
    }
    refreshable = listing.renewable
    needs_sign_in = account.needsSignIn
    service_account = account.isServiceAccount
    issuer = account.issuer
  }
}
