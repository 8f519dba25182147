import NativeAppSupport
import TokenKit

extension AccountManager {
  /// The manager as tokenctl's front ends run it, the command line and the agent alike:
  /// file locks and the discovery cache under `directories`, refreshes in a child process
  /// when `isolation` is given, and config.toml's `hook` run on every account event.
  /// Failures that do not stop an operation (an event that failed, a hook that could not
  /// start) go to `warn`.
  public static func configured(
    registry: AccountTypeRegistry, store: any TokenStore, transport: any HTTPTransport, clock: any WallClock,
    directories: XDGDirectories, isolation: ProcessRefreshIsolation?, hook: String?, environment: [String: String],
    warn: @escaping @Sendable (String) -> Void
  ) -> AccountManager {
    var manager = AccountManager(
      registry: registry, store: store, transport: transport, clock: clock,
      locks: FileAccountLocks(directories: directories), discoveryCache: FileDiscoveryCache(directories: directories))
    manager.refreshIsolation = isolation
    manager.pauseForTests = RefreshTestPause.hook(environment: environment)
    manager.pauseSignInForTests = RefreshTestPause.hook(
      environment: environment, variable: RefreshTestPause.signInVariable)
    manager.events.observe { event in
      if event.kind == .failed, let message = event.message { warn(message) }
    }
    if let hook, !hook.isEmpty {
      let command = HookCommand(command: hook, environment: environment)
      // A hook never fails a command (a slow or broken one must not cost anyone a token),
      // but one that cannot even start is worth a warning.
      manager.events.observe { event in
        if command.run(event) == nil {
          warn("the hook could not be started for the event '\(event.kind.rawValue)' of \(event.account.qualifiedName)")
        }
      }
    }
    return manager
  }
}
