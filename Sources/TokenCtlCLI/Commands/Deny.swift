import ApplicationConsent
import ArgumentParser
import NativeAppSupport
import TokenKit

extension TokenCtl {
  /// `tokenctl deny`: take an application's grants away.
  struct Deny: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "deny",
      abstract: "Take an application's grants away, and refuse it without asking again.",
      discussion: """
        Removes what 'tokenctl allow' gave APP, in one group with --group or else in every \
        group (TOKENCTL_GROUP does not narrow it), and records the denial, so that the agent \
        refuses the application at once instead of asking you again. A later 'tokenctl \
        allow' replaces the denial. APP is named as for 'tokenctl allow' (a program, or \
        flatpak:APP_ID for a Flatpak app); a program that is no longer installed can still \
        be denied by the path 'tokenctl apps' shows.

        --host HOST denies a host the agent is forwarded to ('tokenctl ssh'), named as for \
        'tokenctl allow --host': its requests are refused from then on, the sessions open \
        now included.

        tokenctl's own executables are always allowed and cannot be denied. A hostile \
        program running as you is not stopped by a denial: it can read the keyring directly.
        """)

    @Argument(
      help: ArgumentHelp(
        "The program: a path, or a name looked up in PATH; or flatpak:APP_ID for a Flatpak app (not with --host).",
        valueName: "app"))
    var application: String?

    @Option(
      help: ArgumentHelp(
        "A host the agent is forwarded to (tokenctl ssh), as ssh -G names it, instead of an application.",
        valueName: "host"))
    var host: String?

    @Option(help: ArgumentHelp("Deny it in this group only (default: in every group).", valueName: "group"))
    var group: String?

    func validate() throws {
      if (host == nil) == (application == nil) {
        throw ValidationError("Name the application to deny (APP), or give --host HOST, not both.")
      }
      if let host, HostName(host) == nil {
        throw ValidationError("'\(host)' is no host name: letters, digits, dots, dashes, underscores and colons.")
      }
      if group?.isEmpty == true { throw ValidationError("The group name must not be empty.") }
    }

    func run() throws {
      let context = CommandSession.runningContext()
      let grants = context.applicationGrants()
      let identity: ApplicationIdentity
      if let host = host.flatMap(HostName.init) {
        identity = .host(host)
      } else if let application {
        identity = try Self.resolve(application, grants: grants, context: context)
      } else {
        return
      }
      if case .executable(let path) = identity, OwnExecutables.contains(path: path) {
        context.output.write(
          TerminalSafe.text("\(path) is tokenctl's own and always allowed; it cannot be denied.") + "\n")
        return
      }
      let app = identity.name
      let now = context.clock.now
      try grants.deny(application: app, group: group, at: now)
      context.auditLog().record(
        AuditEvent(time: now, kind: .denied, application: app, group: group ?? "*", via: .cli))
      let scope = group.map { "in group \($0)" } ?? "in every group"
      context.output.write(
        TerminalSafe.text("Denied \(app) \(scope): its grants there are removed, and the agent refuses it.") + "\n")
    }

    /// The application `application` names; a program removed since it was allowed keeps
    /// its grants until denied by its path.
    private static func resolve(
      _ application: String, grants: ApplicationGrants, context: CLIContext
    ) throws -> ApplicationIdentity {
      do {
        return try ApplicationArgument.resolve(
          application, environment: context.environment, currentDirectory: context.currentDirectory())
      } catch let error as TokenKitError {
        guard application.hasPrefix("/"),
          (try? grants.entries())?.contains(where: { $0.application == application }) == true
        else { throw error }
        return .executable(application)
      }
    }
  }
}
