import ArgumentParser
import MicrosoftGraphAccount
import NativeAppSupport
import SecretServiceStore
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// The app of Microsoft's Azure AD v2.0 walkthrough, written against tokenctl's library
/// products as an app outside this package would be: it signs in to Microsoft Graph,
/// searches the organisation's users, and prints their names and mail.
///
/// Its accounts are tokenctl's: the same keyring group and the same refresh locks, so
/// `tokenctl list` shows the account it signed in, and either program may refresh it
/// without spoiling the other's tokens.
@main
struct GraphSearch: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "graph-search-example",
    abstract: "List the users of your organisation whose given name starts with PREFIX.",
    discussion: """
      Uses the Microsoft Graph account of the keyring group, the one `tokenctl login graph` \
      signs in, or signs in through the browser first. The app registration is tokenctl's: \
      a public client with the redirect URI http://localhost.
      """)

  @Argument(help: "The start of the given name to look for.")
  var prefix: String

  @Option(
    help: ArgumentHelp("The application (client) id to sign in with (default: $GRAPH_CLIENT_ID).", valueName: "id"))
  var clientID: String?

  @Option(
    help: ArgumentHelp(
      "The keyring group shared with tokenctl (default: $TOKENCTL_GROUP, else 'default').", valueName: "group"))
  var group: String?

  @Option(
    help: ArgumentHelp(
      "An OpenID Connect issuer to sign in through instead of Microsoft's multi-tenant endpoints,"
        + " such as https://login.microsoftonline.com/TENANT-ID/v2.0.", valueName: "url"),
    transform: GraphSearch.url)
  var issuer: URL?

  @Option(
    help: ArgumentHelp(
      "Microsoft Graph's address, for a national cloud (default: https://graph.microsoft.com/v1.0).",
      valueName: "url"), transform: GraphSearch.url)
  var graphAPI: URL?

  func run() async throws {
    let environment = ProcessInfo.processInfo.environment
    let group = self.group ?? environment["TOKENCTL_GROUP"] ?? Account.defaultGroup
    guard !group.isEmpty else { throw ValidationError("The group name must not be empty.") }
    let directories = XDGDirectories(environment: environment)
    let manager = AccountManager(
      registry: try registry(), store: SecretServiceTokenStore(group: group), transport: CurlHTTPTransport(),
      clock: SystemClock(), locks: FileAccountLocks(directories: directories),
      discoveryCache: FileDiscoveryCache(directories: directories))
    let account = try await account(of: manager, environment: environment)
    let graph = try GraphClient(client: AuthorizedClient(manager: manager, account: account.key))
    let found = try await graph.searchUsers(GraphUserFilter(field: .givenName, prefix: prefix), limit: 25)
    for user in found.users {
      // The directory's words, not ours: escaped, so that no name can drive the terminal.
      print(ServerText.escaped(user.displayName ?? "") + "\t" + ServerText.escaped(user.mail ?? ""))
    }
  }

  /// The group's Graph account, else one signed in now through the browser, which comes
  /// back to a listener on this machine (RFC 8252): the walkthrough's
  /// `requestAccessToAccountWithType:`.
  func account(of manager: AccountManager, environment: [String: String]) async throws -> Account {
    if let account = try manager.accounts(AccountQuery(type: "graph")).first?.account { return account }
    guard let clientID = clientID ?? environment["GRAPH_CLIENT_ID"] else {
      throw ValidationError(
        "The group has no Microsoft Graph account yet: give your app's client id (--client-id or GRAPH_CLIENT_ID).")
    }
    // The redirect Microsoft registers for desktop apps: http://localhost, on any port.
    let listener = try LoopbackRedirectListener(host: "localhost")
    let method = SignInMethod.browser(receiver: listener) { url in
      Self.tell("Sign in at \(url.absoluteString)\n")
      _ = BrowserLauncher(environment: environment).open(url.absoluteString)
    }
    return try await manager.signIn(type: "graph", options: SignInOptions(clientID: clientID), method: method)
  }

  /// The Microsoft Graph account type, moved to `issuer` and `graphAPI` when given. The
  /// type keeps its id, `graph`, so that its accounts are tokenctl's graph accounts.
  func registry() throws -> AccountTypeRegistry {
    var registry = AccountTypeRegistry()
    guard issuer != nil || graphAPI != nil else {
      try registry.register(MicrosoftGraphPlugin.self)
      return registry
    }
    var graph = MicrosoftGraphPlugin.descriptor
    if let issuer { graph.endpoints = .discovered(issuer: issuer) }
    if let graphAPI { graph.apiBase = graphAPI }
    try registry.register(graph, source: "--issuer and --graph-api")
    registry.setBehavior(MicrosoftGraphBehavior(), for: graph.id)
    return registry
  }

  /// Writes to standard error, so that standard output holds only the users.
  static func tell(_ text: String) {
    let bytes = Array(text.utf8)
    _ = write(STDERR_FILENO, bytes, bytes.count)
  }

  static func url(_ text: String) throws -> URL {
    guard let url = URL(string: text), url.scheme != nil, url.host() != nil else {
      throw ValidationError("'\(text)' is not an absolute URL.")
    }
    return url
  }
}
