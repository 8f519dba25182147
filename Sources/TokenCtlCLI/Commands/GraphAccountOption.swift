import ArgumentParser
import MicrosoftGraphAccount
import TokenKit

/// `--account` and `--group` for the graph commands: which signed-in account talks to
/// Microsoft Graph, by default the group's only graph account.
struct GraphAccountOption: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "The account: TYPE:NAME, or a NAME that is unique (default: the group's only graph account).",
      valueName: "account"),
    completion: ShellCompletion.accounts)
  var account: String?

  @OptionGroup var groupOption: GroupOption

  /// The account type the commands look for when no account is named.
  static let type = MicrosoftGraphPlugin.descriptor.id

  /// The command's context, with a Graph client for the chosen account, and that account.
  func open() throws -> (context: CLIContext, client: GraphClient, account: Account) {
    let session = try CommandSession.open(group: groupOption.group, configured: false)
    let (client, account) = try client(in: session)
    return (session.context, client, account)
  }

  private func client(in session: CommandSession) throws -> (client: GraphClient, account: Account) {
    let store = session.store
    let chosen: Account
    if let account {
      chosen = try AccountReference(parsing: account, knownTypes: Set(session.registry.ids)).resolve(in: store).account
    } else {
      let found = try store.list(AccountQuery(type: Self.type)).map(\.account)
      let login = "tokenctl login \(Self.type)" + (store.group == Account.defaultGroup ? "" : " --group \(store.group)")
      switch found.count {
      case 0:
        throw TokenKitError(
          .noSuchAccount, "no \(Self.type) account in group '\(store.group)'",
          recovery: "Run `\(login)` to sign in.")
      case 1:
        chosen = found[0]
      default:
        let names = found.map { "  \($0.type):\($0.id)  (\($0.name))" }.sorted()
        throw TokenKitError(
          .ambiguousAccount,
          "group '\(store.group)' has \(found.count) \(Self.type) accounts:\n" + names.joined(separator: "\n"),
          recovery: "Choose one with --account \(Self.type):NAME.")
      }
    }
    let authorized = AuthorizedClient(
      manager: try session.configured().manager, account: chosen.key, sleep: session.context.sleep)
    return (try GraphClient(client: authorized), chosen)
  }
}
