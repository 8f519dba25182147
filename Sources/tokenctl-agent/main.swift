import AgentProtocol
import BuiltinAccountTypes
import NativeAppSupport
import ProcessRuntime
import SecretServiceStore
import TokenAgent
import TokenCtlRuntime
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

// The resident agent (tokenctl-agent(1)) as an executable of its own: what `tokenctl agent
// run` runs once it has read its options, and nothing of the command line. The full program
// holds every command, swift-argument-parser and the sign-in, and a resident process keeps
// what it maps and touches of them (docs/performance.md, "The agent's memory").
//
//   tokenctl-agent [--no-dbus] [--consent-timeout SECONDS]
//   tokenctl-agent _refresh-worker --group GROUP --type TYPE --id ID [--scopes SCOPES]
//
// Its options are `tokenctl agent run`'s, which checks them and documents them; here they
// are read as that command passes them on. The second form is the agent's refresh child
// (``RefreshChild``), which the agent runs for each refresh.

// Before anything reads a token: no core dump, no tracer, and freed memory overwritten
// (this restarts the process once, keeping its pid, arguments and descriptors).
ProcessProtection.forbidCoreDumpsAndTracing()
ProcessProtection.wipeFreedMemory()

/// Writes `bytes` to `descriptor`, all of them unless it fails.
func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) {
  bytes.withUnsafeBytes { buffer in
    var offset = 0
    while offset < buffer.count {
      let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else { return }
      offset += written
    }
  }
}

/// Writes `text` to standard error.
func writeError(_ text: String) { writeAll(2, Array(text.utf8)) }

// A refresh child of the agent (``RefreshChild``): this program run by the agent with the
// account's lock handed on, not the agent.
let refreshChild = RefreshChild.request(from: CommandLine.arguments.dropFirst())

var offersDBus = true
var consentTimeout = 60
var options = refreshChild == nil ? CommandLine.arguments.dropFirst() : []
while let option = options.popFirst() {
  switch option {
  case "--no-dbus": offersDBus = false
  case "--consent-timeout":
    guard let value = options.popFirst().flatMap(Int.init) else {
      writeError("tokenctl-agent: --consent-timeout takes a number of seconds\n")
      exit(64)
    }
    consentTimeout = value
  default:
    writeError("tokenctl-agent: unknown option '\(option)'; run the agent with `tokenctl agent run`\n")
    exit(64)
  }
}

let environment = ProcessEnvironment.current()

// Started by the session bus itself (its `Exec=`, no systemd): the standard streams are the
// bus daemon's, often a terminal or the pipe of a script that captured the session's
// output, which would wait for us to close it. The agent keeps none of them: its log goes
// nowhere, as `agent start`'s does.
if environment["DBUS_STARTER_BUS_TYPE"] != nil, refreshChild == nil {
  let null = open("/dev/null", O_RDWR | O_CLOEXEC)
  if null >= 0 {
    for stream: Int32 in [0, 1, 2] { dup2(null, stream) }
    if null > 2 { close(null) }
  }
}

let registry: AccountTypeRegistry
do {
  registry = try BuiltinPlugins.registry()
} catch {
  // The built-in plugins are checked by the tests; reaching this is a broken build.
  writeError("tokenctl agent: \(error)\n")
  exit(1)
}
let log: @Sendable (String) -> Void = { writeError("tokenctl agent: \($0)\n") }
let prompting = KeyringPrompting.whereDisplayed(environment) { provider in
  log("waiting for your keyring's prompt: answer \(provider)'s dialog to go on")
}
var transport: any HTTPTransport = CurlHTTPTransport()
if environment["TOKENCTL_LOG"] == "debug" {
  transport = LoggingHTTPTransport(transport) { log("debug: \($0)") }
}
// What the agent lacks, the full program beside it does: sign-ins.
guard let full = SiblingProgram.path(SiblingProgram.full) else {
  writeError("tokenctl agent: no \(SiblingProgram.full) beside this program, which runs its sign-ins\n")
  exit(1)
}
var parts = AgentLaunch.Parts(
  registry: registry, tools: BuiltinPlugins.credentialProtocols, environment: environment, clock: SystemClock(),
  transport: transport,
  makeStore: { SecretServiceTokenStore(group: $0, prompting: prompting) },
  watchKeyring: { changed in
    let monitor = try KeyringChangeMonitor { change in
      if case .item(let path) = change { changed(path) } else { changed(nil) }
    }
    return { monitor.stop() }
  },
  signIn: { [environment] account, group in
    var environment = environment
    environment["TOKENCTL_GROUP"] = group
    _ = ChildProcess.startDaemon(
      [full] + AgentLaunch.signInArguments(account: account, group: group), environment: environment)
  },
  log: log)
parts.offersDBus = offersDBus
parts.consentTimeout = .seconds(max(1, consentTimeout))
// The refresh children are this program (``RefreshChild``): it is smaller than the full one.
parts.refreshProgram = nil

// On ThreadPoolExecutor, the main thread being one of its threads: libdispatch's pool,
// which wakes every second once started, must not run in a resident process.
let pool = ThreadPoolExecutor.shared
pool.serveOnCurrentThread {
  Task(executorPreference: pool) { [parts] in
    if let refreshChild {
      let report = await AgentLaunch.refreshChild(
        key: refreshChild.key, group: refreshChild.group, scopes: refreshChild.scopes, parts: parts)
      // The parent shows the warnings; this process's standard error is usually closed.
      writeAll(1, report)
      exit(0)
    }
    do {
      try await AgentLaunch.run(parts)
      exit(0)
    } catch let error as TokenKitError {
      writeError("tokenctl: \(error.message)\n" + (error.recovery.map { "hint: \($0)\n" } ?? ""))
      // tokenctl(1)'s exit status for a failure of the agent, as `tokenctl agent run` exits.
      exit(error.code == .agentFailure ? 19 : 1)
    } catch {
      writeError("tokenctl: \(error)\n")
      exit(1)
    }
  }
}
