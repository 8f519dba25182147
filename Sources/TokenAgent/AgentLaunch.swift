import AgentBus
import AgentProtocol
import ApplicationConsent
import CredentialHelpers
import NativeAppSupport
import ProcessRuntime
import TokenCtlRuntime
import TokenKit

/// The agent composed, in one place: its socket, the service, the keyring's changes, the
/// clock's steps, the consent gate, the D-Bus front end, until it stops
/// (tokenctl-agent(1)). The command line supplies what only it knows: the built-in
/// types, the keyring, the words of its log, and how a sign-in is started.
public enum AgentLaunch {
  /// Starts the sign-in of `account` (`TYPE:NAME`) in `group`, as a notification's
  /// "Sign in" asks: the command line runs `tokenctl login ACCOUNT --group GROUP`.
  public typealias SignIn = @Sendable (_ account: String, _ group: String) -> Void

  /// The command line after `tokenctl` that a notification's "Sign in" runs: the account
  /// as it signed in before (`tokenctl login ACCOUNT`), in its group.
  public static func signInArguments(account: String, group: String) -> [String] {
    ["login", account, "--group", group]
  }

  /// Watches the keyring for changes made behind the agent's back, calling `changed` with
  /// the item's object path (nil: look at everything again); returns how to stop.
  public typealias WatchKeyring =
    @Sendable (_ changed: @escaping @Sendable (_ item: String?) -> Void) throws -> @Sendable () -> Void

  public struct Parts: Sendable {
    public var registry: AccountTypeRegistry
    /// The tools whose `get` the agent answers (``AgentService``).
    public var tools: [any ToolCredentialProtocol.Type]
    public var environment: [String: String]
    public var clock: any WallClock
    public var transport: any HTTPTransport
    public var makeStore: @Sendable (String) -> any TokenStore
    public var watchKeyring: WatchKeyring
    public var signIn: SignIn
    /// Lines for standard error, never a secret.
    public var log: @Sendable (String) -> Void
    /// Whether to offer org.tokenctl.Agent on the session bus.
    public var offersDBus = true
    /// How long an application's request waits for the user's answer.
    public var consentTimeout: Duration = .seconds(60)
    /// The program that runs the refresh children (`_refresh-worker`); nil: this one.
    public var refreshProgram: String?

    public init(
      registry: AccountTypeRegistry, tools: [any ToolCredentialProtocol.Type], environment: [String: String],
      clock: any WallClock, transport: any HTTPTransport, makeStore: @escaping @Sendable (String) -> any TokenStore,
      watchKeyring: @escaping WatchKeyring, signIn: @escaping SignIn, log: @escaping @Sendable (String) -> Void
    ) {
      self.registry = registry
      self.tools = tools
      self.environment = environment
      self.clock = clock
      self.transport = transport
      self.makeStore = makeStore
      self.watchKeyring = watchKeyring
      self.signIn = signIn
      self.log = log
    }
  }

  /// Runs the agent until SIGTERM, SIGINT or SIGHUP, or its session's end; throws when its
  /// socket cannot be had (another agent holds it, say).
  public static func run(_ parts: Parts) async throws {
    let environment = parts.environment
    let log = parts.log
    let directories = XDGDirectories(environment: environment)
    let path = AgentSocketLocation.path(environment: environment)
    // A socket the user placed is in a folder of theirs; ours is under our private root.
    let root: String? = environment["TOKENCTL_AGENT_SOCKET"] == nil ? directories.runtimeRoot : nil
    let listener = try AgentListener.open(path: path, root: root, environment: environment)
    // The session's end is the agent's: no bus (it closed), no agent.
    _ = AgentBusService.leaveWhenTheBusCloses()
    var settings = AgentService.Settings()
    settings.refreshProgram = parts.refreshProgram
    let service = AgentService(
      base: parts.registry, tools: parts.tools, environment: environment, settings: settings, clock: parts.clock,
      transport: parts.transport, makeStore: parts.makeStore, log: log)
    // What others write to the keyring (a login, a revoke, a direct-path refresh) must
    // reach the agent's memory, or it would hand out tokens that are gone.
    let stopWatching: (@Sendable () -> Void)?
    do {
      stopWatching = try parts.watchKeyring { item in
        if let item { service.keyringChanged(item: item) } else { service.keyringChanged() }
      }
    } catch {
      stopWatching = nil
      service.keyringUnwatched()
      log("cannot watch the keyring (\(error)); every answer reads it")
    }
    // Refresh times are wall-clock times: a step of the clock or a resume moves them.
    service.noticeWallClockStep()
    WallClockWatch.start { service.wallClockChanged() }
    // What config.toml asks to keep fresh, from the start; no request needs to come first.
    // On a thread of its own, as it blocks on the keyring.
    _ = DetachedThread.start { service.keepConfiguredAccountsFresh() }
    let gate = ConsentGate(
      grants: ApplicationGrants(directories: directories, warn: log),
      audit: AuditLog(directories: directories, warn: log), clock: parts.clock)
    let desktop = DesktopMethods(service: service, gate: gate)
    let bus =
      parts.offersDBus
      ? DesktopSession.start(
        desktop: desktop, gate: gate, service: service, environment: environment,
        consentTimeout: parts.consentTimeout, signIn: parts.signIn, log: log)
      : nil
    await Agent(listener: listener, service: service, desktop: desktop, log: log).run()
    bus?.stop()
    stopWatching?()
  }
}
