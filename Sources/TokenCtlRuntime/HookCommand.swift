import ProcessRuntime
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The user's hook: a command line run by `/bin/sh -c` for every account event, with
/// the event and the account in its environment and never a token.
///
/// `TOKENCTL_EVENT` (added, refreshed, needs-sign-in, revoked, failed), `TOKENCTL_ACCOUNT`
/// (`type:name`), `TOKENCTL_ACCOUNT_TYPE`, `TOKENCTL_ACCOUNT_ID`, `TOKENCTL_ACCOUNT_NAME`,
/// `TOKENCTL_GROUP`, and `TOKENCTL_MESSAGE` when there is one. A hook that needs the token
/// asks for it with `tokenctl token`, like any other program.
public struct HookCommand: Sendable {
  public var command: String
  /// The environment the hook starts from (tokenctl's own), minus secrets.
  public var environment: [String: String]

  public init(command: String, environment: [String: String]) {
    self.command = command
    self.environment = environment
  }

  /// The hook's environment for `event`.
  public func environment(for event: AccountEvent) -> [String: String] {
    var environment = ChildEnvironment.sanitized(self.environment)
    let account = event.account
    environment["TOKENCTL_EVENT"] = event.kind.rawValue
    environment["TOKENCTL_ACCOUNT"] = account.qualifiedName
    environment["TOKENCTL_ACCOUNT_TYPE"] = account.type
    environment["TOKENCTL_ACCOUNT_ID"] = account.id
    environment["TOKENCTL_ACCOUNT_NAME"] = account.name
    environment["TOKENCTL_GROUP"] = account.group
    environment["TOKENCTL_MESSAGE"] = event.message
    return environment
  }

  /// Starts the hook for `event` and returns without waiting: a slow hook must not delay
  /// the token a script is waiting for. Returns the child's pid, or nil if it could not
  /// be started.
  @discardableResult
  public func run(_ event: AccountEvent) -> pid_t? {
    ChildProcess.spawn(["/bin/sh", "-c", command], environment: environment(for: event))
  }
}
