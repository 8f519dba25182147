import AccountTypeFiles
import NativeAppSupport
import Synchronization
import TokenCtlRuntime
import TokenKit

/// A command's world, built once and in plain sight at the start of its `run`: the
/// context with the user's account type files added, the store of its group, config.toml's
/// settings when the command needs them, and the account manager on all of these.
///
/// Reading happens in ``open(group:configured:)`` and ``configured()`` and nowhere else,
/// so each type file and config.toml are read at most once per command; a command that
/// runs another (git's offer to sign in runs `login`) hands it its session. Nothing is read
/// before parsing, so help and man page generation read nothing.
final class CommandSession: Sendable {
  /// The running command's context; its registry holds the user's type files.
  let context: CLIContext
  let store: any TokenStore
  /// config.toml, when this session read it; nil for a session that needs none (the
  /// valid-token fast path, `revoke --local` with an unusable file).
  let configuration: Configuration?
  /// The context's registry with the configuration's settings applied.
  let registry: AccountTypeRegistry
  private let builtManager = Mutex<AccountManager?>(nil)
  /// ``configured()``'s session, once made: config.toml is read once however often a
  /// command asks, and every part of the command sees the same settings.
  private let configuredSession = Mutex<CommandSession?>(nil)

  init(context: CLIContext, store: any TokenStore, configuration: Configuration?) throws {
    self.context = context
    self.store = store
    self.configuration = configuration
    registry = try configuration.map { try context.registry.applying($0.types) } ?? context.registry
  }

  /// The session of the running command for `group` (else `TOKENCTL_GROUP`, else the
  /// default group), with config.toml read unless `configured` is false; in `context` when
  /// the command read its type files already (``runningContext()``).
  static func open(group: String?, configured: Bool = true, in context: CLIContext? = nil) throws -> CommandSession {
    let context = context ?? runningContext()
    let store = try GroupOption.store(group, in: context)
    return try CommandSession(
      context: context, store: store,
      configuration: configured ? try Configuration.load(environment: context.environment) : nil)
  }

  /// The running command's context with the user's type files added, for a command that
  /// needs no store (`types`); read once, as `open` does.
  static func runningContext() -> CLIContext { CLIContext.running.addingUserTypes() }

  /// This session with config.toml read: itself when it has been, else the one the first
  /// call made.
  func configured() throws -> CommandSession {
    guard configuration == nil else { return self }
    return try configuredSession.withLock { made in
      if let made { return made }
      let session = try CommandSession(
        context: context, store: store, configuration: try Configuration.load(environment: context.environment))
      made = session
      return session
    }
  }

  /// The account manager of the store's group, with the configuration's settings and
  /// hook (none without a configuration), made on first use.
  var manager: AccountManager {
    builtManager.withLock { built in
      if let built { return built }
      let manager = makeManager()
      built = manager
      return manager
    }
  }

  /// Finds or registers the client of a type that registers itself (RFC 7591).
  var registrar: ClientRegistrar {
    ClientRegistrar(
      store: context.registrations, transport: context.transport, discovery: manager.discovery, clock: context.clock)
  }

  private func makeManager() -> AccountManager {
    AccountManager.configured(
      registry: registry, store: store, transport: context.transport, clock: context.clock,
      directories: context.directories, isolation: context.refreshIsolation, hook: configuration?.hook,
      environment: context.environment, warn: { [warnings = context.warnings] in warnings.add($0) })
  }
}

extension CLIContext {
  /// The running command's context: commands run inside `TokenCtl.main`, which sets it.
  static var running: CLIContext {
    guard let current else { preconditionFailure("tokenctl commands run inside TokenCtl.main") }
    return current
  }
}
