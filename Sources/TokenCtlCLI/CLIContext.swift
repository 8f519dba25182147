import SecretServiceStore
import TokenKit

/// What the commands need from the outside world, injected so tests can drive them with
/// an in-memory store, a fixed clock and captured output.
///
/// Commands read it from `CLIContext.current`, a task-local, because swift-argument-parser
/// creates commands by parsing and offers no way to hand them dependencies.
public struct CLIContext: Sendable {
  public var registry: AccountTypeRegistry
  public var makeStore: @Sendable (_ group: String) -> any TokenStore
  public var clock: any WallClock
  public var environment: [String: String]
  public var output: any OutputSink

  public init(
    registry: AccountTypeRegistry, makeStore: @escaping @Sendable (String) -> any TokenStore,
    clock: any WallClock, environment: [String: String], output: any OutputSink
  ) {
    self.registry = registry
    self.makeStore = makeStore
    self.clock = clock
    self.environment = environment
    self.output = output
  }

  /// The real world: the built-in plugins, the Secret Service, the system clock, the
  /// process's environment and standard streams.
  public static func live(environment: [String: String]) throws -> CLIContext {
    CLIContext(
      registry: try BuiltinPlugins.registry(),
      makeStore: { SecretServiceTokenStore(group: $0) },
      clock: SystemClock(), environment: environment, output: StandardOutput())
  }

  @TaskLocal public static var current: CLIContext?

  /// The context of the running command.
  static var required: CLIContext {
    guard let current else { preconditionFailure("tokenctl commands run inside TokenCtl.main") }
    return current
  }
}
