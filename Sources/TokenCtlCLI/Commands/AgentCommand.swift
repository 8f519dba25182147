import AgentBus
import AgentProtocol
import ApplicationConsent
import ArgumentParser
import ProcessRuntime
import TokenAgent
import TokenCtlRuntime
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif
#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension TokenCtl {
  /// `tokenctl agent`: the resident agent (tokenctl-agent(1)).
  struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "agent",
      abstract: "Run the agent that answers token requests from memory and refreshes tokens ahead of time.",
      discussion: """
        The agent listens on $TOKENCTL_AGENT_SOCKET, else $XDG_RUNTIME_DIR/tokenctl/agent.sock. \
        'tokenctl token', 'tokenctl list' and git's 'get' ask it first and do the work \
        themselves when none runs; TOKENCTL_AGENT=0 makes them never ask. It keeps every token \
        it handed out fresh, refreshing when three quarters of its lifetime have passed. \
        See tokenctl-agent(1).
        """,
      subcommands: [AgentRun.self, AgentStart.self, AgentStop.self, AgentStatus.self],
      defaultSubcommand: AgentRun.self)
  }

  /// `tokenctl agent run`: the agent in the foreground.
  struct AgentRun: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "run",
      abstract: "Run the agent in the foreground until SIGTERM, SIGINT or SIGHUP (the default).",
      discussion: """
        Logs to standard error, never a token. Takes the socket systemd passes \
        (LISTEN_FDS), else binds its own. A second agent for the same socket refuses to start. \
        It leaves when its session does: when the session bus closes, or when its socket or \
        the folder holding it is removed. Started by the session bus itself (D-Bus \
        activation without systemd), it keeps none of the bus's standard streams and logs \
        nothing. \
        On the session bus it is org.tokenctl.Agent (tokenctl-dbus(7)); applications other than \
        tokenctl get tokens only once allowed (tokenctl allow, or a notification's Allow).
        """)

    @Flag(help: "Do not offer the D-Bus API (org.tokenctl.Agent) on the session bus.")
    var noDbus = false

    @Option(help: ArgumentHelp("Seconds an application's request waits for the user's answer.", valueName: "seconds"))
    var consentTimeout: Int = 60

    /// Runs the agent's own executable (``SiblingProgram/agent``) in this process's place,
    /// with the options as read here: it holds the agent and none of the command line, so
    /// the resident process keeps none of it in memory. Its pid is this process's, which
    /// systemd's socket (`LISTEN_PID`) and the session bus know it by.
    func run() async throws {
      let context = CLIContext.running
      guard let agent = SiblingProgram.path(SiblingProgram.agent) else {
        throw TokenKitError(
          .agentFailure, "no \(SiblingProgram.agent) beside this tokenctl",
          recovery: "Install tokenctl again: the agent is a program of its own beside the full one.")
      }
      let arguments =
        [agent] + (noDbus ? ["--no-dbus"] : []) + ["--consent-timeout", String(max(1, consentTimeout))]
      // The context's environment: `--verbose` set TOKENCTL_LOG there.
      let environment = context.environment.map { "\($0.key)=\($0.value)" }
      let argv = arguments.map { strdup($0) } + [nil]
      let envp = environment.map { strdup($0) } + [nil]
      execve(agent, argv, envp)
      let reason = String(cString: strerror(errno))
      argv.forEach { free($0) }
      envp.forEach { free($0) }
      throw TokenKitError(.agentFailure, "could not run \(agent): \(reason)")
    }
  }

  /// `tokenctl agent start`: the agent as a daemon.
  struct AgentStart: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "start", abstract: "Start the agent in the background, unless one runs; return once it answers.")

    func run() async throws {
      let context = CLIContext.running
      let path = AgentSocketLocation.path(environment: context.environment)
      if let status = AgentStatusQuery.ask(path) {
        context.output.write("tokenctl agent: already running (pid \(status["pid"] ?? "?"), socket \(path))\n")
        return
      }
      var environment = context.environment
      environment.removeValue(forKey: "LISTEN_FDS")
      environment.removeValue(forKey: "LISTEN_PID")
      guard let pid = ChildProcess.startDaemon(["/proc/self/exe", "agent", "run"], environment: environment) else {
        throw TokenKitError(.agentFailure, "could not start the agent")
      }
      for _ in 0..<200 {
        if let status = AgentStatusQuery.ask(path) {
          // Another start may have won the race for the socket: ours then left at once,
          // and the agent that answers is the other's.
          let running = status["pid"] ?? "?"
          context.output.write(
            running == "\(pid)"
              ? "tokenctl agent: started (pid \(pid), socket \(path))\n"
              : "tokenctl agent: already running (pid \(running), socket \(path)), started meanwhile\n")
          return
        }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
          throw TokenKitError(
            .agentFailure, "the agent exited at once",
            recovery: "Run `tokenctl agent run` to see why.")
        }
        try await DeadlineTimer.shared.sleep(for: .milliseconds(25))
      }
      throw TokenKitError(.agentFailure, "the agent (pid \(pid)) did not answer within 5 seconds")
    }
  }

  /// `tokenctl agent stop`.
  struct AgentStop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "stop", abstract: "Stop the running agent (SIGTERM) and wait until it is gone.")

    func run() async throws {
      let context = CLIContext.running
      let path = AgentSocketLocation.path(environment: context.environment)
      guard let status = AgentStatusQuery.ask(path), let pid = status["pid"].flatMap(pid_t.init) else {
        context.output.write("tokenctl agent: not running (socket \(path))\n")
        return
      }
      guard kill(pid, SIGTERM) == 0 else {
        throw TokenKitError(.agentFailure, "could not stop the agent (pid \(pid)): \(String(cString: strerror(errno)))")
      }
      for _ in 0..<400 {
        if kill(pid, 0) != 0 {
          context.output.write("tokenctl agent: stopped (pid \(pid))\n")
          return
        }
        try await DeadlineTimer.shared.sleep(for: .milliseconds(25))
      }
      throw TokenKitError(.agentFailure, "the agent (pid \(pid)) did not stop within 10 seconds")
    }
  }

  /// `tokenctl agent status`.
  struct AgentStatus: ParsableCommand, JSONOutputting {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "Show whether the agent runs, what it holds and when it refreshes next. Never prints a token.",
      discussion: "Exits 0 when the agent runs, 1 when it does not.")

    @Flag(help: "Print JSON (with a format version) instead of text.")
    var json = false

    func run() throws {
      let context = CLIContext.running
      let path = AgentSocketLocation.path(environment: context.environment)
      guard let status = AgentStatusQuery.ask(path) else {
        if json {
          context.output.write(JSONOutput.render(AgentStatusDocument(running: false, socket: path)))
        } else {
          context.output.write("tokenctl agent: not running (socket \(path))\n")
        }
        throw ExitCode.failure
      }
      let document = AgentStatusDocument(status, socket: path)
      if json {
        context.output.write(JSONOutput.render(document))
        return
      }
      var text = "tokenctl agent: running (pid \(document.pid ?? 0), socket \(path))\n"
      text += "  since \(document.started_at ?? "?"); \(document.requests ?? 0) requests, "
      text += "\(document.refreshes ?? 0) refreshes, \(document.held ?? 0) accounts in memory\n"
      if let error = document.last_error { text += "  last error: \(TerminalSafe.text(error))\n" }
      for account in document.accounts {
        text +=
          "  \(TerminalSafe.text(account.type + ":" + account.name)) (group \(TerminalSafe.text(account.group))): "
        text += "next refresh \(account.next_refresh ?? "not scheduled")"
        if let error = account.last_error { text += "; last error: \(TerminalSafe.text(error))" }
        text += "\n"
      }
      context.output.write(text)
    }
  }
}

/// Asking the agent for its status: whether one answers at a socket, and what it says.
enum AgentStatusQuery {
  static func ask(_ path: String) -> AgentMessage? {
    guard case .connected(let connection) = AgentConnection.open(path: path),
      let answer = try? connection.exchange(AgentMessage(AgentMessage.Request.status), timeoutMilliseconds: 5000),
      answer.kind == AgentMessage.Answer.status
    else { return nil }
    return answer
  }
}

/// `agent status --json`. It has no token field, by design.
struct AgentStatusDocument: Encodable {
  struct Tracked: Encodable {
    var type: String
    var name: String
    var id: String
    var group: String
    var next_refresh: String?
    var last_error: String?
  }
  let format = JSONOutput.formatVersion
  var running: Bool
  var pid: Int?
  var socket: String
  var started_at: String?
  var requests: Int?
  var refreshes: Int?
  var held: Int?
  var last_error: String?
  var accounts: [Tracked] = []

  init(running: Bool, socket: String) {
    self.running = running
    self.socket = socket
  }

  init(_ status: AgentMessage, socket: String) {
    running = true
    self.socket = socket
    pid = status["pid"].flatMap(Int.init)
    started_at = Self.timestamp(status["started"])
    requests = status["requests"].flatMap(Int.init)
    refreshes = status["refreshes"].flatMap(Int.init)
    held = status["held"].flatMap(Int.init)
    last_error = status["last-error"]
    let names = status.values("account")
    let types = status.values("account-type")
    let groups = status.values("account-group")
    let ids = status.values("account-id")
    let next = status.values("next-refresh")
    let errors = status.values("account-error")
    for index in names.indices
    where [types, groups, ids, next, errors].allSatisfy({ index < $0.count }) {
      accounts.append(
        Tracked(
          type: types[index], name: names[index], id: ids[index], group: groups[index],
          next_refresh: Self.timestamp(next[index]),
          last_error: errors[index].isEmpty ? nil : errors[index]))
    }
  }

  private static func timestamp(_ text: String?) -> String? {
    text.flatMap(Double.init).map { JSONOutput.timestamp(Date(timeIntervalSinceReferenceDate: $0)) }
  }
}
