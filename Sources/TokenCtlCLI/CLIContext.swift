import AccountTypeFiles
import AgentFrontEnd
import NativeAppSupport
import ProcessRuntime
import SecretServiceStore
import TokenCtlRuntime
import TokenKit

@_exported import enum BuiltinAccountTypes.BuiltinPlugins

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the commands need from the outside world, injected so tests can drive them with
/// an in-memory store, a fixed clock, a scripted server and captured output.
///
/// Commands read it from `CLIContext.current`, a task-local, because swift-argument-parser
/// creates commands by parsing and offers no way to hand them dependencies.
public struct CLIContext: Sendable {
  public var registry: AccountTypeRegistry
  public var makeStore: @Sendable (_ group: String) -> any TokenStore
  public var clock: any WallClock
  public var environment: [String: String]
  public var output: any OutputSink
  public var transport: any HTTPTransport
  /// Opens a URL in the user's browser; returns the command used, or nil.
  public var openBrowser: @Sendable (_ url: String, _ environment: [String: String]) -> String?
  /// Reads a line the user types (pasted redirects); nil at end of input.
  public var readLine: @Sendable () -> String?
  /// Reads a message from standard input (git's credential requests), up to a bound.
  public var readInput: @Sendable (_ limit: Int) -> [UInt8]
  /// Waits between device-grant polls.
  public var sleep: @Sendable (Double) async throws -> Void
  /// The user's terminal when standard streams are another program's (git's), or nil.
  public var terminal: @Sendable () -> (any UserTerminal)?
  /// Where refreshes run once locked: a child process for the real executables (see
  /// ``RefreshIsolation``), this process when nil.
  public var refreshIsolation: ProcessRefreshIsolation?
  /// Failures that did not stop the command, shown once it has succeeded.
  public var warnings = WarningLog()
  /// The agent to ask before doing the work here (``AgentClient``); nil: never ask.
  var agent: AgentClient?
  /// What the front end read of cargo's conversation and did not answer, after it wrote
  /// the hello (``FrontEnd/HandOver/cargo(unread:)``); nil when it did not.
  var cargoUnread: [UInt8]?
  /// Where the clients registered at issuers (RFC 7591) are kept: the keyring, shared by
  /// every group.
  public var registrations: any ClientRegistrationStore = SecretServiceClientRegistrationStore()
  /// Takes the road to the keyring step by step, as `doctor` does, for the hint of a keyring
  /// error outside a desktop; nil where the store is no Secret Service.
  var diagnoseKeyring: (@Sendable () -> SecretServiceDiagnosis)?

  public init(
    registry: AccountTypeRegistry, makeStore: @escaping @Sendable (String) -> any TokenStore,
    clock: any WallClock, environment: [String: String], output: any OutputSink,
    transport: any HTTPTransport = CurlHTTPTransport(),
    openBrowser: @escaping @Sendable (String, [String: String]) -> String? = { url, environment in
      BrowserLauncher(environment: environment).open(url)
    },
    readLine: @escaping @Sendable () -> String? = ManualPasteReceiver.readStandardInputLine,
    readInput: @escaping @Sendable (Int) -> [UInt8] = StandardInput.readMessage,
    sleep: @escaping @Sendable (Double) async throws -> Void = {
      try await DeadlineTimer.shared.sleep(for: .seconds($0))
    },
    terminal: @escaping @Sendable () -> (any UserTerminal)? = { ControllingTerminal() }
  ) {
    self.terminal = terminal
    self.readInput = readInput
    self.registry = registry
    self.makeStore = makeStore
    self.clock = clock
    self.environment = environment
    self.output = output
    self.transport = transport
    self.openBrowser = openBrowser
    self.readLine = readLine
    self.sleep = sleep
  }

  /// The real world: the built-in plugins, the Secret Service, the system clock, the
  /// process's environment and standard streams, libcurl.
  public static func live(environment: [String: String]) throws -> CLIContext {
    let output = StandardOutput()
    // Where a desktop session can show the keyring's dialog, a locked keyring or a
    // provider's access confirmation (KeePassXC) is unlocked through it, and the user
    // told why the command waits.
    let prompting = KeyringPrompting.whereDisplayed(environment) { provider in
      output.writeError("tokenctl: waiting for your keyring's prompt: answer \(provider)'s dialog to go on\n")
    }
    var context = CLIContext(
      registry: try BuiltinPlugins.registry(),
      makeStore: { SecretServiceTokenStore(group: $0, prompting: prompting) },
      clock: SystemClock(), environment: environment, output: output)
    var isolation = ProcessRefreshIsolation(environment: environment)
    isolation.warn = { [warnings = context.warnings] in warnings.add($0) }
    context.refreshIsolation = isolation
    context.agent = AgentClient(environment: environment)
    context.diagnoseKeyring = { SecretServiceDiagnosis.run() }
    return context
  }

  /// `--quiet`: say nothing when all went well (``inform(_:)``); errors, warnings and
  /// what a sign-in needs the user to see are still written.
  public var isQuiet = false

  /// Writes `text`, a line saying what a command did, to standard error unless `--quiet`.
  func inform(_ text: String) {
    if !isQuiet { output.writeError(TerminalSafe.text(text) + "\n") }
  }

  /// Whether `--verbose` or `TOKENCTL_LOG=debug` asked for a debug log.
  var isDebugging: Bool { environment["TOKENCTL_LOG"] == "debug" }

  /// This context logging every HTTP exchange on standard error (see
  /// ``LoggingHTTPTransport`` for what is never logged), in the refresh child too.
  func debugging() -> CLIContext {
    var context = self
    context.environment["TOKENCTL_LOG"] = "debug"
    // The HTTP exchanges are logged where they happen: here, not in the agent.
    context.agent = nil
    let output = output
    context.transport = LoggingHTTPTransport(transport) { output.writeError("tokenctl: debug: \($0)\n") }
    if var isolation = refreshIsolation {
      isolation.environment["TOKENCTL_LOG"] = "debug"
      isolation.showsErrors = true
      context.refreshIsolation = isolation
    }
    return context
  }

  @TaskLocal public static var current: CLIContext?

  /// This context with the user's account type files (tokenctl-types(5)) added to its
  /// registry; ``CommandSession`` calls it once per command.
  ///
  /// The files are read then, after parsing, rather than in ``live(environment:)``, so
  /// that help and man page generation read nothing, and so that contexts built by tests
  /// and embedding apps get them as well. A missing directory costs one failed `opendir`;
  /// a bad file is a warning on standard error and is skipped.
  func addingUserTypes() -> CLIContext {
    var context = self
    context.registry = UserTypes.registry(adding: registry, environment: environment) { [output] in
      output.writeError("tokenctl: warning: \(TerminalSafe.text($0))\n")
    }
    return context
  }

  var directories: XDGDirectories { XDGDirectories(environment: environment) }

  /// The refresh locks, one file per account under the runtime directory.
  var accountLocks: FileAccountLocks {
    FileAccountLocks(directories: directories)
  }
}
