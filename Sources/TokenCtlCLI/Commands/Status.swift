import AgentProtocol
import ArgumentParser
import CredentialHelpers
import ProcessRuntime
import TokenAgent
import TokenKit

extension TokenCtl {
  /// `tokenctl status` (also `whoami`): what a new user wants to see at a glance.
  struct Status: ParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "Show the accounts, which one each tool would use here, and whether the agent runs (also: whoami).",
      discussion: """
        The accounts of the group and the state of their tokens, as `list` shows them; then \
        for each host the account types serve, and each remote of the git repository in \
        the current directory, the account git and the other tools' helpers (Docker, \
        cargo, pip, kubectl) would answer with, by the same rule they follow \
        (TOKENCTL_ACCOUNT, config.toml's [credentials.accounts], the URL's user name), or \
        why none would; then whether the agent runs. Never prints a token.
        """,
      aliases: ["whoami"])

    @OptionGroup var groupOption: GroupOption

    @Flag(help: "Print JSON (with a format version) instead of text.")
    var json = false

    func run() throws {
      let session = try CommandSession.open(group: groupOption.group)
      let context = session.context
      let store = session.store
      let listings = try store.list(.all)
      let helper = Credential.helper(session, name: "tokenctl")
      var urls = helper.servedURLs().map(\.description)
      for remote in Self.remotes(environment: context.environment) where !urls.contains(remote) { urls.append(remote) }
      let hosts = try urls.map { url in
        guard let request = CredentialMessage(requestFor: url) else { return HostDocument(url: url, reason: nil) }
        switch try helper.choose(for: request) {
        case .account(let choice): return HostDocument(url: url, account: choice.account.qualifiedName)
        case .notOurs: return HostDocument(url: url, reason: "no account type serves it")
        case .declined(let decline): return HostDocument(url: url, reason: decline.warning)
        }
      }
      let path = AgentSocketLocation.path(environment: context.environment)
      let agent = AgentStatusQuery.ask(path).map { AgentStatusDocument($0, socket: path) }
      if json {
        context.output.write(
          JSONOutput.render(
            StatusDocument(
              group: store.group, accounts: listings.map { AccountDocument($0, clock: context.clock) }, hosts: hosts,
              agent: .init(running: agent != nil, pid: agent?.pid, socket: path))))
        return
      }
      var text = "Accounts in group '\(TerminalSafe.text(store.group))':\n"
      if listings.isEmpty {
        text += "  none. Run `tokenctl types` to see the account types, then `tokenctl login` with one of them.\n"
      }
      for listing in listings {
        let name = TerminalSafe.text(listing.account.qualifiedName)
        text += "  \(name): \(AccountStatusText(listing, clock: context.clock).text)\n"
      }
      if !hosts.isEmpty { text += "Tools would use:\n" }
      for host in hosts {
        let answer = host.account ?? "none; \(host.reason ?? "not a URL")"
        text += "  \(TerminalSafe.text(host.url)): \(TerminalSafe.text(answer))\n"
      }
      if let agent {
        text += "Agent: running (pid \(agent.pid ?? 0)).\n"
      } else {
        text += "Agent: not running; commands do the work themselves (`tokenctl agent start` keeps tokens fresh).\n"
      }
      context.output.write(text)
    }

    /// The fetch URLs of the remotes of the git repository in the current directory, as
    /// git reads its configuration; none outside a repository or without git.
    static func remotes(environment: [String: String]) -> [String] {
      guard
        let listing = ChildProcess.capture(
          ["git", "config", "--get-regexp", #"^remote\..*\.url$"#], environment: ChildEnvironment.sanitized(environment)
        ), listing.status == 0
      else { return [] }
      return String(decoding: listing.output, as: UTF8.self).split(separator: "\n").compactMap { line in
        line.split(separator: " ", maxSplits: 1).last.map { withoutPassword(String($0)) }
      }
      .filter { $0.contains("://") }
    }

    /// `url` without the password a remote's URL may hold (`https://user:secret@host/`),
    /// which is printed nowhere.
    static func withoutPassword(_ url: String) -> String {
      let parts = url.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
      guard parts.count == 2 else { return url }
      let authority = parts[1].prefix { $0 != "/" }
      guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return url }
      return String(url[..<colon]) + String(url[at...])
    }
  }

  /// `status --json`. It has no token field, by design.
  struct StatusDocument: Encodable {
    let format = JSONOutput.formatVersion
    var group: String
    var accounts: [AccountDocument]
    var hosts: [HostDocument]
    var agent: AgentDocument

    struct AgentDocument: Encodable {
      var running: Bool
      var pid: Int?
      var socket: String
    }
  }

  /// A URL the helpers serve or a remote here, and the account that would answer for it,
  /// or why none would.
  struct HostDocument: Encodable {
    var url: String
    var account: String?
    var reason: String?
  }
}
