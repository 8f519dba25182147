import CLinux

#if !hasFeature(Embedded)
  // Embedded, the front end is one module of these sources (Sources/tokenctl-front-end).
  import AgentWire
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// What users run as `tokenctl`, `git-credential-tokenctl` and `docker-credential-tokenctl`
/// (tokenctl-front-end's `main`): a small executable, linked statically, that answers
/// `token`, git's `get`, Docker's `get`, kubectl's exec credential (whose JSON the agent
/// writes) and `list` (``AccountTable``) from the agent, and `--help` from its copy of the
/// full program's (``RootHelp``), and hands everything else to the full program
/// (`libexec/tokenctl/tokenctl`), which it execs with the same arguments.
///
/// Why: a client of the agent spends its time starting, not asking. The full program is a
/// 50 MB executable that binds libstdc++, libm and libgcc_s at start (three quarters of
/// the instructions of a `token` through the agent); this one has no dynamic
/// loader, libraries or Swift runtime to start (it is built as Embedded Swift: Package.swift),
/// and starts as a small C program does.
///
/// The front end prints only a full answer with nothing to warn of. Whatever else the
/// agent said, it hands over (``HandOver``), so that every message, error and remedy is the
/// full program's, written in one place, and the agent is never asked twice.
public enum FrontEnd {
  /// The environment variable that tells the full program what the front end did:
  /// ``HandOver``. The full program unsets it first, before any child can inherit it.
  public static let handOverVariable = "TOKENCTL_FRONT_END"

  /// What the full program gets from the front end.
  public enum HandOver: Equatable, Sendable {
    /// No agent runs: do the work without asking (and start one where that is the
    /// session's way, `AgentOnDemand`).
    case noAgent
    /// The agent did not answer: do the work without asking it again (a wedged agent
    /// cost the front end its first frame's wait already).
    case agentSilent
    /// The agent (`pid`, when known) said `working` and then went silent: say so, rather
    /// than wait for the refresh lock it may hold.
    case agentSilentWhileWorking(pid: Int32?)
    /// The agent's answer, for the full program to report as if it had asked.
    case answer(AgentMessage)
    /// cargo's conversation (`--cargo-plugin`), hello written and earlier requests
    /// answered: `unread` is what was read of standard input and not answered, beginning
    /// with the request the agent did not answer in full. The full program answers the
    /// rest itself.
    case cargo(unread: [UInt8])
  }

  /// The words the full program runs under each of the front end's names: git and Docker
  /// run their helpers by name, and each is a command of tokenctl's.
  public static func prefix(forProgram name: String) -> [String] {
    switch name {
    case "git-credential-tokenctl": ["credential"]
    case "docker-credential-tokenctl": [ClientCommand.dockerCredentialName]
    default: []
    }
  }

  /// tokenctl's version, in one place: `tokenctl --version` is answered here, as fast as
  /// the front end starts, so that `--version` is no slower than before the front end.
  public static let version = "0.1.0"

  /// The largest git request read: the core's `CredentialMessage.maximumInputLength`,
  /// which the front end does not link (a test checks the two agree).
  public static let credentialInputLimit = 1024 * 1024

  /// Runs the front end as this process.
  public static func run() -> Never {
    // Before anything reads a token, as the full program does (ProcessProtection).
    _ = tokenctl_set_undumpable()
    // Not CommandLine's, which reads /proc/self/maps to find them (and which Embedded
    // Swift has not): CLinux saved them before main.
    let all = (0..<Int(tokenctl_argument_count())).compactMap { tokenctl_arguments()[$0].map { String(cString: $0) } }
    let arguments = Array(all.dropFirst())
    let name = all.first.map(fileName) ?? "tokenctl"
    let full = prefix(forProgram: name) + arguments
    if full == ["--version"] { exit(write("tokenctl \(version)\n") ? 0 : 1) }
    // Looked up as needed: no `[String: String]` (see AgentSocketLocation).
    let environment = { (name: String) in getenv(name).map { String(cString: $0) } }
    if let help = RootHelp.printed(for: full, environment) { exit(write(help) ? 0 : 1) }
    var input: [UInt8]?
    var handOver: HandOver?
    if full == ["list"] { handOver = listFromAgent(environment) }
    if let command = ClientCommand(full), let socket = AgentSocketLocation.sessionPath(environment),
      let asker = AgentAsk(socket: socket, environment)
    {
      if case .cargoPlugin = command { converseWithCargo(command, asker, environment: environment) }
      let group = command.group ?? environment("TOKENCTL_GROUP") ?? AgentAsk.defaultGroup
      if !group.isEmpty {
        // The request and the answer are the command's (ClientCommand), as the full
        // program's fast path builds and judges them.
        if command.readsRequest { input = StandardInput.readMessage(limit: credentialInputLimit) }
        if let request = command.agentRequest(input: input ?? [], environment) {
          let reply = asker.ask(request.kind, group: group, request.fields)
          handOver = HandOver(reply)
          if let answer = reply.answer, answer.values("warning").isEmpty, answer.values("type-warning").isEmpty,
            let printed = command.output(for: answer)
          {
            exit(write(printed.text) ? printed.status : 1)
          }
        }
      }
    }
    execFullProgram(arguments: full, input: input, handOver: handOver)
  }

  /// `tokenctl list` answered from the agent when the front end prints its answer as the
  /// full program would (``AccountTable``); else what to hand the full program: the
  /// agent's answer, which it then reports without asking again, or its silence. With no
  /// agent, nothing: the full program finds none itself, as when it is run alone.
  private static func listFromAgent(_ environment: (String) -> String?) -> HandOver? {
    guard let socket = AgentSocketLocation.sessionPath(environment), let asker = AgentAsk(socket: socket, environment)
    else { return nil }
    let group = environment("TOKENCTL_GROUP") ?? AgentAsk.defaultGroup
    guard !group.isEmpty else { return nil }
    let reply = asker.ask(AgentMessage.Request.list, group: group, [])
    switch reply {
    case .answer(let answer):
      guard let table = AccountTable(answer) else { return .answer(answer) }
      if table.rows.isEmpty { exit(writeError(AccountTable.noAccounts(group: group)) ? 0 : 1) }
      var now = timespec()
      clock_gettime(CLOCK_REALTIME, &now)
      let styled = isatty(1) == 1 && (environment("NO_COLOR").map { $0.isEmpty } ?? true)
      let text = table.rendered(now: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec), styled: styled)
      exit(write(text) ? 0 : 1)
    case .noAgent: return nil
    case .noAnswer, .silentWhileWorking: return HandOver(reply)
    }
  }

  /// The longest request line of cargo's taken: the full program's limit
  /// (`CargoCredential.maximumLineLength`; a test checks the two agree).
  public static let cargoLineLimit = 64 * 1024

  /// The protocol's hello (`CargoCredentialResponse.hello`, which the front end does not
  /// link; a test checks the two agree).
  public static let cargoHello = "{\"v\":[1]}\n"

  /// Holds cargo's conversation (`--cargo-plugin`): writes the hello, then answers each
  /// request the agent answers in full, until cargo closes standard input. At the first
  /// request it does not, it hands the rest to the full program (``HandOver/cargo(unread:)``),
  /// which answers that request and the next ones itself.
  private static func converseWithCargo(
    _ command: ClientCommand, _ asker: AgentAsk, environment: (String) -> String?
  ) -> Never {
    guard write(cargoHello) else { exit(1) }
    let group = environment("TOKENCTL_GROUP") ?? AgentAsk.defaultGroup
    var lines = StandardInputLines(limit: cargoLineLimit)
    while let line = lines.next() {
      if !group.isEmpty, let request = command.agentRequest(input: line, environment),
        let answer = asker.ask(request.kind, group: group, request.fields).answer,
        answer.values("warning").isEmpty, answer.values("type-warning").isEmpty,
        let printed = command.output(for: answer)
      {
        guard write(printed.text) else { exit(1) }
        continue
      }
      execFullProgram(
        arguments: [ClientCommand.cargoPluginFlag], input: nil,
        handOver: .cargo(unread: line + [UInt8(ascii: "\n")] + lines.unread))
    }
    exit(0)
  }

  /// ``HandOver/agentSilentWhileWorking(pid:)``'s value of ``handOverVariable``, before the pid.
  private static let silentWhileWorkingPrefix = "agent-silent-while-working:"

  /// Reads and removes what the front end handed over; nil when the full program was run
  /// directly. Call before anything else reads standard input or starts a child.
  public static func takeHandOver() -> HandOver? {
    guard let raw = getenv(handOverVariable) else { return nil }
    let value = String(cString: raw)
    unsetenv(handOverVariable)
    if value == "agent-silent" { return .agentSilent }
    if value.hasPrefix(silentWhileWorkingPrefix) {
      return .agentSilentWhileWorking(pid: Int32(value.dropFirst(silentWhileWorkingPrefix.utf8.count)))
    }
    if value == "no-agent" { return .noAgent }
    let isCargo = value.hasPrefix("cargo:")
    guard value.hasPrefix("answer:") || isCargo, let fd = Int32(value.dropFirst(isCargo ? 6 : 7)), fd > 2 else {
      return nil
    }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    _ = lseek(fd, 0, SEEK_SET)
    while bytes.count <= AgentMessage.maximumResponseSize + 4 {
      let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      bytes += chunk[..<count]
    }
    if isCargo { return .cargo(unread: bytes) }
    // A frame the front end wrote from the agent's: anything else is treated as no answer.
    guard bytes.count >= 4, AgentMessage.payloadLength(Array(bytes[..<4])) == bytes.count - 4,
      let message = try? AgentMessage(payload: bytes[4...])
    else { return .agentSilent }
    return .answer(message)
  }

  /// Execs the full program with `arguments`, giving it `input` as standard input when the
  /// front end read it, and telling it `handOver`.
  private static func execFullProgram(arguments: [String], input: [UInt8]?, handOver: HandOver?) -> Never {
    guard let program = fullProgram() else { answerAlone(arguments: arguments, handOver: handOver) }
    if let input {
      let fd = memoryFile(input)
      guard fd >= 0, dup2(fd, 0) == 0 else {
        _ = writeError("tokenctl: could not hand git's request on: \(String(cString: strerror(errno)))\n")
        exit(1)
      }
      close(fd)
    }
    switch handOver {
    case .agentSilent: setenv(handOverVariable, "agent-silent", 1)
    case .agentSilentWhileWorking(let pid):
      setenv(handOverVariable, silentWhileWorkingPrefix + (pid.map { "\($0)" } ?? ""), 1)
    case .noAgent: setenv(handOverVariable, "no-agent", 1)
    case .answer(let message):
      // The answer may hold a token (one with warnings to print): in memory, never in
      // the environment or on disk.
      let fd = memoryFile(message.framed())
      if fd > 2 { setenv(handOverVariable, "answer:\(fd)", 1) }
    case .cargo(let unread):
      let fd = memoryFile(unread)
      guard fd > 2 else {
        _ = writeError("tokenctl: could not hand cargo's request on: \(String(cString: strerror(errno)))\n")
        exit(1)
      }
      setenv(handOverVariable, "cargo:\(fd)", 1)
    case nil: unsetenv(handOverVariable)
    }
    let argv = ([program] + arguments).map { strdup($0) } + [nil]
    execv(program, argv)
    _ = writeError("tokenctl: could not run \(program): \(String(cString: strerror(errno)))\n")
    exit(1)
  }

  /// Answers as well as the front end can without the full program: on a host the agent is
  /// forwarded to (`tokenctl ssh`), the front end alone is installed, and what the agent
  /// said is all there is. An error is printed with what to do and exits with the status
  /// the full program would give it (``exitStatus(code:)``); an answer with warnings is
  /// printed with them; anything else is a command for the machine the agent runs on.
  private static func answerAlone(arguments: [String], handOver: HandOver?) -> Never {
    switch handOver {
    case .answer(let answer) where answer.kind == AgentMessage.Answer.error:
      let message = answer["message"] ?? "the agent refused the request"
      _ = writeError("tokenctl: \(message)\n" + (answer["recovery"].map { "\($0)\n" } ?? ""))
      exit(exitStatus(code: answer["code"] ?? ""))
    case .answer(let answer)
    where answer.kind == AgentMessage.Answer.token || answer.kind == AgentMessage.Answer.credential:
      for warning in answer.values("warning") + answer.values("type-warning") {
        _ = writeError("tokenctl: \(warning)\n")
      }
      // As the command prints it (git's "none" is nothing printed, Docker's its words), else
      // a helper's `get` that no account answers.
      guard let printed = ClientCommand(arguments)?.output(for: answer) else {
        if answer.kind == AgentMessage.Answer.credential {
          _ = writeError("tokenctl: no account serves this server\n")
        }
        exit(1)
      }
      exit(write(printed.text) ? printed.status : 1)
    case .noAgent?:
      _ = writeError(
        "tokenctl: no agent to ask: only tokenctl's front end is installed here, which asks an agent forwarded "
          + "with `tokenctl ssh`; connect with it from the machine the agent runs on\n")
      exit(agentFailureStatus)
    default:
      let command = arguments.first ?? ""
      _ = writeError(
        "tokenctl: '\(command)' needs tokenctl's main program, which is not installed here (only its front end "
          + "is, which answers token and the credential helpers' get from a forwarded agent): run it on the "
          + "machine the agent runs on, or install tokenctl in full (make install)\n")
      exit(1)
    }
  }

  /// The full program's exit status for an error of `code` (`ExitStatus(for:)`, which the
  /// front end does not link; a test checks the two agree).
  public static func exitStatus(code: String) -> Int32 {
    switch code {
    case "no-such-account": 2
    case "ambiguous-account": 3
    case "token-not-valid": 4
    case "needs-sign-in": 5
    case "unknown-account-type": 6
    case "keyring-locked": 7
    case "keyring-unavailable": 8
    case "corrupt-item": 9
    case "network-failure": 10
    case "server-error": 11
    case "access-denied", "sign-in-failed", "invalid-id-token": 12
    case "sign-in-timed-out": 13
    case "not-configured", "invalid-descriptor": 14
    case "revocation-failed": 15
    case "scope-refused": 17
    case "unusable-file": 18
    case "agent-failure": agentFailureStatus
    case "invalid-argument": 64
    default: 1
    }
  }

  /// The full program's status for an agent that failed (`ExitStatus.agentFailure`).
  static let agentFailureStatus: Int32 = 19

  /// The full program: `../libexec/tokenctl/tokenctl` from the front end's folder, as
  /// `make install` lays them out, else `tokenctl` beside it (a build folder, where the
  /// front end is `tokenctl-front-end`); never the front end itself.
  public static func fullProgram() -> String? {
    guard let me = ownPath() else { return nil }
    let folder = String(me[..<(me.lastIndex(of: "/") ?? me.startIndex)])
    var own = stat()
    guard stat("/proc/self/exe", &own) == 0 else { return nil }
    for candidate in [folder + "/../libexec/tokenctl/tokenctl", folder + "/tokenctl"] {
      var found = stat()
      guard stat(candidate, &found) == 0, access(candidate, X_OK) == 0 else { continue }
      if found.st_dev == own.st_dev && found.st_ino == own.st_ino { continue }
      return candidate
    }
    return nil
  }

  private static func ownPath() -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  private static func fileName(_ path: String) -> String {
    path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
  }

  private static func memoryFile(_ bytes: [UInt8]) -> Int32 {
    let fd = tokenctl_memfd("tokenctl-front-end")
    guard fd >= 0 else { return -1 }
    var written = 0
    while written < bytes.count {
      let result = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + written, $0.count - written) }
      if result < 0 && errno == EINTR { continue }
      guard result > 0 else {
        close(fd)
        return -1
      }
      written += result
    }
    _ = lseek(fd, 0, SEEK_SET)
    return fd
  }

  private static func write(_ text: String) -> Bool { write(1, Array(text.utf8)) }
  private static func writeError(_ text: String) -> Bool { write(2, Array(text.utf8)) }

  private static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var written = 0
    while written < bytes.count {
      let result = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + written, $0.count - written) }
      if result < 0 && errno == EINTR { continue }
      guard result > 0 else { return false }
      written += result
    }
    return true
  }
}

extension FrontEnd.HandOver {
  init(_ reply: AgentAsk.Reply) {
    switch reply {
    case .answer(let message): self = .answer(message)
    case .noAgent: self = .noAgent
    case .noAnswer: self = .agentSilent
    case .silentWhileWorking(let pid): self = .agentSilentWhileWorking(pid: pid)
    }
  }
}
