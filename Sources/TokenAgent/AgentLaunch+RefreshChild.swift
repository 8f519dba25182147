import NativeAppSupport
import Synchronization
import TokenCtlRuntime
import TokenKit

extension AgentLaunch {
  /// The refresh child (``RefreshChild``) as the agent's own executable is it: the agent's
  /// refreshes ahead run here, in a program that maps neither the commands nor
  /// swift-argument-parser (docs/performance.md, "The agent's memory"), with the same
  /// isolation as the full program's child: the account's lock handed on, the answer
  /// stored before the report. `parts` are the agent's, of which the child uses the types,
  /// the environment, the clock, the transport and the store. Returns the report for the
  /// parent's pipe.
  public static func refreshChild(
    key: AccountKey, group: String, scopes: String?, parts: Parts
  ) async -> [UInt8] {
    let environment = parts.environment
    let warnings = Mutex<[String]>([])
    let failure = await RefreshChild.work(
      key: key, group: group, scopes: scopes,
      locks: FileAccountLocks(directories: XDGDirectories(environment: environment))
    ) {
      // Type files and config.toml as the agent reads them for a client of this environment.
      let (configuration, registry) = try AgentWorld(base: parts.registry, environment: environment).configured()
      return AccountManager.configured(
        registry: registry, store: parts.makeStore(group), transport: parts.transport, clock: parts.clock,
        directories: XDGDirectories(environment: environment), isolation: nil, hook: configuration.hook,
        environment: environment, warn: { line in warnings.withLock { $0.append(line) } })
    }
    return RefreshReport.encode(failure, warnings: warnings.withLock { $0 })
  }
}
