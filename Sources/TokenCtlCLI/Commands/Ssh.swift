import AgentProtocol
import ApplicationConsent
import ArgumentParser
import CLinux
import ProcessRuntime
import TokenAgent
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

extension TokenCtl {
  /// `tokenctl ssh`: OpenSSH's `ssh` with the agent forwarded to the destination, through
  /// a socket the agent opened for that host alone (tokenctl-agent(1), "Forwarding").
  struct Ssh: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "ssh",
      abstract: "Run ssh with the agent forwarded to the destination, which gets only the accounts allowed it.",
      discussion: """
        Takes ssh's own options and arguments, and exits with the remote command's status. \
        The agent opens a socket for the host ssh connects to ('ssh -G DESTINATION' shows \
        it as hostname), and every request that comes through it is that host's: it gets \
        the tokens of the accounts 'tokenctl allow --host HOST' gave it, or that you allow \
        on the desktop prompt its first request raises, for 'tokenctl token' and every \
        credential helper's get, chosen by this machine's config.toml. It cannot sign in, \
        refresh with its own hands or revoke. When the session ends, the socket is removed.

        On the remote side, tokenctl's front end alone is enough (the 'tokenctl' file, and \
        git-credential-tokenctl and docker-credential-tokenctl as links to it). ssh binds \
        the forwarded socket at a fresh path in /tmp (0600, by sshd's StreamLocalBindMask), \
        and the session moves it into the private folder /tmp/tokenctl-forward-UID (0700) \
        and names it in TOKENCTL_AGENT_SOCKET for the programs the session starts. The \
        remote user's login shell runs the command; the wrapper around it is POSIX sh.

        The agent must run (tokenctl agent start). Root on the remote host can use the \
        socket while the session lasts, as with ssh-agent: allow a host only what you \
        would trust its administrators with.
        """)

    @Argument(
      parsing: .captureForPassthrough,
      help: ArgumentHelp("ssh's options, the destination, and the remote command.", valueName: "ssh-arguments"))
    var arguments: [String] = []

    func run() throws {
      let context = CommandSession.runningContext()
      let command = try SshCommandLine(arguments)
      let hostName = try Self.hostName(command, environment: context.environment)
      guard let host = HostName(hostName) else {
        throw TokenKitError(
          .invalidArgument, "ssh connects to '\(hostName)', which tokenctl cannot name as a host",
          recovery: "Give a destination whose host name is letters, digits, dots, dashes, underscores or colons.")
      }
      let agentSocket = AgentSocketLocation.path(environment: context.environment)
      let (connection, local) = try Self.askForSocket(host: host, agent: agentSocket)
      // A name nobody can guess ahead, so that nobody can bind it first on the remote side.
      var generator = SystemRandomNumberGenerator()
      let name = (0..<2).map { _ in String(generator.next() as UInt64, radix: 16) }.joined(separator: "-")
      let remote = "/tmp/tokenctl-forward-\(name).sock"
      guard tokenctl_hold_until_exit(connection) > 0 else {
        close(connection)
        throw TokenKitError(
          .agentFailure,
          "could not start the process that keeps the agent's socket open for the session: "
            + String(cString: strerror(errno)),
          recovery: "Try again; should it fail again, ssh with the agent forwarded by hand (tokenctl-agent(1)).")
      }
      close(connection)
      let argv =
        ["ssh"] + command.options
        + ["-o", "ExitOnForwardFailure=yes", "-R", "\(remote):\(local)"]
        + (command.wantsTerminal && isatty(0) == 1 ? ["-t"] : [])
        + ["--", command.destination, Self.remoteCommand(socket: remote, name: name, command: command.command)]
      execvp("ssh", argv.map { strdup($0) } + [nil])
      throw TokenKitError(
        .invalidArgument, "could not run ssh: \(String(cString: strerror(errno)))",
        recovery: "Install OpenSSH's client (apt install openssh-client), or put ssh on PATH.")
    }

    /// The host name ssh connects to for `command`'s destination: `ssh -G`'s `hostname`.
    static func hostName(_ command: SshCommandLine, environment: [String: String]) throws -> String {
      guard
        let result = ChildProcess.capture(
          ["ssh", "-G"] + command.options + ["--", command.destination], environment: environment),
        result.status == 0
      else {
        throw TokenKitError(
          .invalidArgument, "ssh -G \(command.destination) failed: ssh cannot read its configuration for it",
          recovery: "Run `ssh -G \(ShellWord.quoted(command.destination))` to see why.")
      }
      let text = String(decoding: result.output, as: UTF8.self)
      for line in text.split(separator: "\n") where line.hasPrefix("hostname ") {
        return String(line.dropFirst("hostname ".count))
      }
      throw TokenKitError(.invalidArgument, "ssh -G \(command.destination) names no host name")
    }

    /// Asks the agent at `agent` for a socket for `host`: the open connection, which holds
    /// the socket open, and the socket's path.
    static func askForSocket(host: HostName, agent: String) throws -> (Int32, String) {
      let noAgent = TokenKitError(
        .agentFailure, "no agent answers at \(agent), and only the agent can be forwarded",
        recovery: "Start it with `tokenctl agent start`, then run tokenctl ssh again.")
      guard var address = AgentSocketIO.address(agent) else { throw noAgent }
      let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
      guard fd >= 0 else { throw noAgent }
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
      }
      guard connected == 0, AgentSocketIO.peerUID(fd) == getuid() else {
        close(fd)
        throw noAgent
      }
      // The agent tells its own programs by /proc/PID/exe, which only a dumpable process
      // shows it; the answer is a path, no secret.
      let protected = tokenctl_is_dumpable() == 0
      if protected { _ = tokenctl_set_dumpable() }
      defer { if protected { _ = tokenctl_set_undumpable() } }
      let answer: AgentMessage
      do {
        try AgentSocketIO.writeMessage(
          AgentMessage(AgentMessage.Request.forward, [.init("host", host.rawValue)]), to: fd, timeoutMilliseconds: 3000)
        answer = try AgentSocketIO.readMessage(
          from: fd, limit: AgentMessage.maximumResponseSize, timeoutMilliseconds: 5000)
      } catch {
        close(fd)
        throw TokenKitError(
          .agentFailure, "the agent at \(agent) did not answer the request for a forwarded socket (\(error))",
          recovery: "Restart it with `tokenctl agent stop` and `tokenctl agent start`, then try again.")
      }
      if let error = answer.error {
        close(fd)
        throw error
      }
      guard answer.kind == AgentMessage.Answer.forwarding, let path = answer["socket"] else {
        close(fd)
        throw TokenKitError(
          .agentFailure, "the agent at \(agent) does not forward (it may be older than this tokenctl)",
          recovery: "Restart it with `tokenctl agent stop` and `tokenctl agent start`, then try again.")
      }
      return (fd, path)
    }

    /// The remote command: a POSIX sh script, given to the remote user's login shell, that
    /// moves the forwarded socket from /tmp, where ssh bound it (its folder must exist
    /// before the session starts), into the user's private folder, names it in
    /// TOKENCTL_AGENT_SOCKET, runs `command` (or a login shell) with the user's shell, and
    /// removes the socket when it ends.
    static func remoteCommand(socket: String, name: String, command: [String]) -> String {
      let script = """
        s=\(socket); d=/tmp/tokenctl-forward-$(id -u); umask 077; mkdir "$d" 2>/dev/null; \
        if [ -d "$d" ] && [ ! -h "$d" ] && [ -O "$d" ] && chmod 700 "$d" && mv -f "$s" "$d/\(name).sock"; \
        then s="$d/\(name).sock"; fi; TOKENCTL_AGENT_SOCKET=$s; export TOKENCTL_AGENT_SOCKET; \
        if [ $# -gt 0 ]; then "${SHELL:-/bin/sh}" -c "$1"; else "${SHELL:-/bin/sh}" -l; fi; \
        r=$?; rm -f "$s"; exit $r
        """
      let words = ["/bin/sh", "-c", script, "tokenctl-ssh"] + (command.isEmpty ? [] : [command.joined(separator: " ")])
      return words.map(ShellWord.quoted).joined(separator: " ")
    }
  }
}

/// ssh's command line, read as ssh reads it (ssh(1)): options, the destination, and the
/// remote command's words.
struct SshCommandLine: Equatable {
  var options: [String]
  var destination: String
  var command: [String]

  /// ssh's options that take an argument (ssh(1), OpenSSH 9.2).
  static let optionsWithArgument = Set("BbcDEeFIiJLlmOoPpQRSWw")

  init(_ arguments: [String]) throws {
    var options: [String] = []
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      if argument == "--" {
        index += 1
        break
      }
      guard argument.hasPrefix("-"), argument.count > 1 else { break }
      options.append(argument)
      index += 1
      // A cluster of flags ends at the first that takes an argument: the rest of the word
      // is its value, or else the next word is.
      for (offset, flag) in argument.dropFirst().enumerated() where Self.optionsWithArgument.contains(flag) {
        if offset == argument.count - 2 {
          guard index < arguments.count else {
            throw ValidationError("ssh's option -\(flag) needs an argument.")
          }
          options.append(arguments[index])
          index += 1
        }
        break
      }
    }
    guard index < arguments.count else {
      throw ValidationError("Name the destination: tokenctl ssh [ssh options] DESTINATION [COMMAND...]")
    }
    self.options = options
    destination = arguments[index]
    command = Array(arguments[(index + 1)...])
  }

  /// Whether ssh would give the session a terminal: no command, and no -T or -N. The
  /// wrapper always sends a command, so it asks for the terminal with -t instead.
  var wantsTerminal: Bool {
    command.isEmpty
      && !options.contains { option in
        option.hasPrefix("-") && !option.hasPrefix("--") && (option.contains("T") || option.contains("N"))
          && !Self.optionsWithArgument.contains(option.dropFirst().first ?? " ")
      }
  }
}
