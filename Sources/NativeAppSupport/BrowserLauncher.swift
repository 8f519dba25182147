import CCurl

#if canImport(Glibc)
  import Glibc
#endif

/// Opens a URL in the user's browser the way Linux desktop tools do: each command of
/// `$BROWSER` in turn, then `xdg-open`.
///
/// `$BROWSER` is a colon-separated list of commands (the Debian `sensible-browser`
/// convention). In each, `%s` stands for the URL and `%%` for a literal `%`; a command
/// without `%s` gets the URL as its last argument. Commands are split on spaces and run
/// directly, never through a shell, so nothing in the URL or in `$BROWSER` is interpreted.
///
/// The launcher does not wait for the browser: a first browser window can live longer than
/// tokenctl. A detached thread reaps each child when it exits, so none stays a zombie.
public struct BrowserLauncher: Sendable {
  /// Where the browser's standard output and error go.
  public enum Output: Sendable, Hashable {
    /// `/dev/null`: a browser's warnings on the terminal are noise between our prompts.
    case discard
    /// Ours: for debugging.
    case inherit
    /// A file, created or truncated (tests read what the browser printed).
    case file(String)
  }

  private let environment: [String: String]
  private let output: Output

  /// - Parameters:
  ///   - environment: the environment to read `BROWSER` and `PATH` from and to give the
  ///     browser, minus tokenctl's secrets (see `childEnvironment`).
  ///   - output: where the browser's standard output and error go.
  public init(environment: [String: String], output: Output = .discard) {
    self.environment = environment
    self.output = output
  }

  /// Starts the first command that can be started with `url`.
  ///
  /// - Returns: the program started (`firefox`, `xdg-open`), for a message such as
  ///   "Opened your browser with xdg-open"; nil when none could be started.
  @discardableResult
  public func open(_ url: String) -> String? {
    for command in commands(for: url) {
      guard let program = command.first else { continue }
      if let pid = spawn(command) {
        _ = DetachedThread.start {
          var status: Int32 = 0
          while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        return program
      }
    }
    return nil
  }

  /// The commands to try, as argument vectors: `$BROWSER`'s, then `xdg-open`.
  func commands(for url: String) -> [[String]] {
    var commands: [[String]] = []
    for entry in (environment["BROWSER"] ?? "").split(separator: ":") {
      var usedURL = false
      var words = entry.split(separator: " ", omittingEmptySubsequences: true).map { word in
        Self.substitute(String(word), url: url, used: &usedURL)
      }
      guard !words.isEmpty else { continue }
      if !usedURL { words.append(url) }
      commands.append(words)
    }
    commands.append(["xdg-open", url])
    return commands
  }

  /// The environment the browser gets: ours without the variables through which tokenctl
  /// may be given a secret (`TOKENCTL_CLIENT_SECRET`; see `ChildEnvironment`). A browser
  /// hands its environment to every helper, extension host and crash reporter it starts.
  var childEnvironment: [String: String] { ChildEnvironment.sanitized(environment) }

  /// `%s` → the URL, `%%` → `%`; any other `%` stays.
  private static func substitute(_ word: String, url: String, used: inout Bool) -> String {
    var out = ""
    var characters = word[...]
    while let character = characters.popFirst() {
      guard character == "%", let next = characters.first, next == "s" || next == "%" else {
        out.append(character)
        continue
      }
      characters = characters.dropFirst()
      if next == "s" {
        out += url
        used = true
      } else {
        out.append("%")
      }
    }
    return out
  }

  /// Starts `command`, looked up in the given environment's `PATH` (not ours, which is what
  /// `posix_spawnp` would search); its pid, or nil when it cannot be started.
  private func spawn(_ command: [String]) -> pid_t? {
    let program = command[0]
    let candidates: [String]
    if program.contains("/") {
      candidates = [program]
    } else {
      let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
      candidates = path.split(separator: ":", omittingEmptySubsequences: false).map {
        ($0.isEmpty ? "." : String($0)) + "/" + program
      }
    }

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    switch output {
    case .discard:
      posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
      posix_spawn_file_actions_adddup2(&actions, 1, 2)
    case .inherit:
      break
    case .file(let path):
      posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
      posix_spawn_file_actions_adddup2(&actions, 1, 2)
    }
    _ = tokenctl_spawn_closefrom(&actions, 3)

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // Our threads may block signals and we may ignore SIGPIPE; a browser must start with
    // neither. Its own process group keeps a Ctrl-C meant for tokenctl away from it.
    var noSignals = sigset_t()
    var allSignals = sigset_t()
    sigemptyset(&noSignals)
    sigfillset(&allSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    posix_spawnattr_setsigdefault(&attributes, &allSignals)
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

    let arguments = command.map { strdup($0) } + [nil]
    let variables = childEnvironment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (arguments + variables).forEach { free($0) } }
    for candidate in candidates where access(candidate, X_OK) == 0 {
      var pid = pid_t()
      // glibc reports a failed exec as posix_spawn's result, so an unusable candidate
      // (not an executable, a bad interpreter) moves us on to the next one.
      if posix_spawn(&pid, candidate, &actions, &attributes, arguments, variables) == 0 { return pid }
    }
    return nil
  }
}
