import ArgumentParser
import CredentialHelpers
import ProcessRuntime
import TokenKit

extension TokenCtl {
  /// `tokenctl setup-git`: tell git to ask tokenctl for credentials of the hosts it serves.
  struct SetupGit: ParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "setup-git",
      abstract: "Configure git to get credentials from tokenctl for the hosts its account types serve.",
      discussion: """
        Adds `tokenctl` to credential.https://HOST.helper for each host (by default every \
        git host of every account type), once, next to any helper already configured: git \
        asks them in order. For a loopback host (127.0.0.1, ::1, localhost) whose account \
        type's authorization server is on this machine too, the helper also answers plain \
        http, and credential.http://HOST.helper is set as well. --unset removes tokenctl's \
        entries and leaves the others. `tokenctl doctor` shows which helper git asks first.
        """)

    @Option(
      name: .customLong("host"),
      help: ArgumentHelp("A git host to configure (repeatable; default: all known).", valueName: "host"))
    var hosts: [String] = []

    @Flag(help: "Where to write: the user's git configuration (default) or this repository's.")
    var scope: Scope = .global

    @Flag(help: "Remove tokenctl's entry instead of adding it.")
    var unset = false

    @OptionGroup var groupOption: GroupOption

    @Flag(help: "Print the URLs configured as JSON.")
    var json = false

    enum Scope: String, EnumerableFlag {
      case global, local
    }

    func validate() throws { try HostArgument.validate(hosts) }

    func run() throws {
      let session = try CommandSession.open(group: groupOption.group)
      let context = session.context
      // The group's accounts name the hosts of forge types that list none (Gitea).
      let helper = CredentialHelper(
        registry: session.registry, store: session.store,
        environment: context.environment, clock: context.clock, locks: context.accountLocks, explain: { _ in })
      // The very rule the helper answers by: https, and http where it answers http too.
      let urls =
        unset
        ? (hosts.isEmpty ? helper.servedHosts() : hosts).flatMap(GitServedURL.everyURL(of:))
        : helper.servedURLs(hosts: hosts.isEmpty ? nil : hosts)
      // A host no type serves gets no answer from the helper: say so now, not at the first
      // failed clone.
      if !unset {
        let served = Set(helper.servedHosts())
        for host in hosts.map({ $0.lowercased() }) where !served.contains(host) {
          context.warnings.add(
            "no account type serves \(host), so git will ask tokenctl for it in vain: add it to a type's "
              + "[credentials] hosts (tokenctl-types(5)); 'tokenctl types' lists the types")
        }
      }
      guard !urls.isEmpty else {
        throw TokenKitError(
          .notConfigured, "no account type names a git host", recovery: "Pass --host HOST.")
      }
      let environment = ChildEnvironment.sanitized(context.environment)
      for url in urls {
        let key = "credential.\(url).helper"
        // --replace-all with a value pattern touches only tokenctl's own line, so other
        // helpers keep their place; run twice, it still leaves one line.
        let arguments =
          unset
          ? ["git", "config", "--\(scope.rawValue)", "--unset-all", key, "^tokenctl$"]
          : ["git", "config", "--\(scope.rawValue)", "--replace-all", key, "tokenctl", "^tokenctl$"]
        guard let status = ChildProcess.run(arguments, environment: environment) else {
          throw TokenKitError(.notConfigured, "could not run git", recovery: "Install git (apt-get install git).")
        }
        // `git config --unset-all` exits 5 when there was nothing to remove: that is done too.
        guard status == 0 || (unset && status == 5) else {
          throw TokenKitError(.notConfigured, "git config failed for \(url) (exit status \(status))")
        }
        if !json {
          context.inform(
            unset
              ? "git no longer asks tokenctl for \(url) (\(scope.rawValue))."
              : "git asks tokenctl for \(url) (\(scope.rawValue)).")
        }
      }
      if json {
        context.output.write(
          JSONOutput.render(
            SetupGitDocument(scope: scope.rawValue, unset: unset, urls: urls.map(\.description))))
      }
    }
  }

  /// `setup-git --json`: the URLs whose helper line was added (or removed, `unset`), and
  /// in which of git's configuration files (`global` or `local`).
  struct SetupGitDocument: Encodable {
    let format = JSONOutput.formatVersion
    var scope: String
    var unset: Bool
    var urls: [String]
  }
}
