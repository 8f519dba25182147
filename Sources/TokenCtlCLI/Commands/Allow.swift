import ApplicationConsent
import ArgumentParser
import NativeAppSupport
import TokenKit

extension TokenCtl {
  /// `tokenctl allow`: let an application get tokens from the agent.
  struct Allow: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "allow",
      abstract: "Allow an application to get the tokens of some accounts, or of all, from the agent.",
      discussion: """
        Desktop programs ask the agent for tokens over D-Bus or its socket. The agent names \
        each one by its executable (/proc/PID/exe), or a Flatpak app by its app id, and \
        refuses any but tokenctl's own until you allow it here. APP is a path, or a name \
        looked up in PATH; links are resolved, so 'python3' is allowed as \
        /usr/bin/python3.11. A Flatpak app is flatpak:APP_ID, such as \
        flatpak:org.example.App ('flatpak list --app' shows the ids); the agent tells it by \
        its sandbox, whatever program runs inside. Programs behind a D-Bus proxy outside \
        Flatpak, and in other containers, are refused and cannot be allowed: the agent \
        cannot tell them apart. Accounts are kept by type and id, so \
        a renamed account stays allowed; naming more accounts later adds to the grant, and \
        --all (every account of the group, present and future) replaces it. A grant replaces \
        an earlier denial ('tokenctl deny').

        What consent protects against: a well-behaved program asking for an account it was \
        never given, by mistake or because a script it runs asked, and a Flatpak app asking \
        for an account you allowed only another app. What it does not: a hostile program \
        running as you outside a sandbox can read the keyring directly, as the Secret Service \
        allows any program of the session to do (see tokenctl-keyring(5)), and can change \
        the grants file too. A script is run by its interpreter: allowing /usr/bin/python3.11 \
        allows every Python program you run, and a shell allows every shell script.

        --host HOST allows a host the agent is forwarded to ('tokenctl ssh'), named as ssh \
        connects to it ('ssh -G DESTINATION' shows it as hostname): every request through \
        that host's socket is the host's, whichever program there asks, for 'tokenctl token' \
        and every credential helper's get. It never signs in, revokes or changes anything. \
        Root on that host can use the socket while a session lasts, as with ssh-agent: allow \
        a host only accounts you would trust its administrators with.

        Grants are kept in $XDG_STATE_HOME/tokenctl/grants.json (0600); each change is \
        recorded in the audit log beside it (audit.log). 'tokenctl apps' lists them.
        """)

    @Argument(
      help: ArgumentHelp(
        "The program: a path, or a name looked up in PATH; or flatpak:APP_ID for a Flatpak app (not with --host).",
        valueName: "app"))
    var application: String?

    @Argument(
      help: ArgumentHelp("An account it may use: TYPE:NAME, or a NAME that is unique.", valueName: "account"),
      completion: ShellCompletion.accounts)
    var accounts: [String] = []

    @Flag(help: "Every account of the group, present and future, instead of the accounts named.")
    var all = false

    @Option(
      help: ArgumentHelp(
        "A host the agent is forwarded to (tokenctl ssh), as ssh -G names it, instead of an application.",
        valueName: "host"))
    var host: String?

    @OptionGroup var groupOption: GroupOption

    /// The accounts named: with --host, every word after the options.
    private var named: [String] { host == nil ? accounts : (application.map { [$0] } ?? []) + accounts }

    func validate() throws {
      if host == nil && application == nil {
        throw ValidationError("Name the application to allow (APP), or give --host HOST.")
      }
      if let host, HostName(host) == nil {
        throw ValidationError("'\(host)' is no host name: letters, digits, dots, dashes, underscores and colons.")
      }
      let accounts = named
      if all && !accounts.isEmpty {
        throw ValidationError("Name accounts or give --all, not both: --all already covers every account.")
      }
      if !all && accounts.isEmpty {
        throw ValidationError(
          "Name the accounts APP may use (TYPE:NAME), or give --all for every account of the group.")
      }
    }

    func run() throws {
      let context = CommandSession.runningContext()
      let identity: ApplicationIdentity
      if let host = host.flatMap(HostName.init) {
        identity = .host(host)
      } else {
        identity = try ApplicationArgument.resolve(
          application ?? "", environment: context.environment, currentDirectory: context.currentDirectory())
      }
      let group = try GroupOption.name(groupOption.group, in: context)
      if case .executable(let path) = identity {
        if OwnExecutables.contains(path: path) {
          context.output.write(TerminalSafe.text("\(path) is tokenctl's own and always allowed; nothing to do.") + "\n")
          return
        }
        if PeerApplication.isBusProxy(path) {
          throw TokenKitError(
            .invalidArgument,
            "\(path) is a D-Bus proxy: the agent refuses it, since allowing it would allow every program behind it",
            recovery: "Allow the Flatpak app behind it by its app id, such as flatpak:org.example.App.")
        }
      }
      let app = identity.name
      var granted: [GrantedAccount]?
      if !all {
        let session = try CommandSession.open(group: group, configured: false, in: context)
        let types = Set(session.context.registry.ids)
        granted = try named.map { name in
          let account = try AccountReference(parsing: name, knownTypes: types).resolve(in: session.store).account
          return GrantedAccount(key: account.key, name: account.qualifiedName)
        }
      }
      let now = context.clock.now
      try context.applicationGrants().allow(application: app, group: group, accounts: granted, at: now)
      let log = context.auditLog()
      for name in granted.map({ $0.map(\.name) }) ?? [nil] {
        log.record(AuditEvent(time: now, kind: .allowed, application: app, group: group, account: name, via: .cli))
      }
      let what = granted.map { $0.map(\.name).joined(separator: ", ") } ?? "every account"
      context.output.write(TerminalSafe.text("Allowed \(app) to get tokens of \(what) in group \(group).") + "\n")
      guard case .executable(let path) = identity else { return }
      if ApplicationPath.isScript(path) {
        context.output.write(
          TerminalSafe.text(
            "Note: \(path) is a script, and the agent sees the program that runs it (its #! interpreter, or "
              + "what it starts), never the script: allow that program instead.") + "\n")
      } else if let interpreter = Interpreter(path) {
        context.output.write(
          TerminalSafe.text("Note: \(path) runs \(interpreter.scripts); every one of them you run is allowed too.")
            + "\n")
      }
    }
  }
}
