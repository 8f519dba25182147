import ProcessRuntime

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
  /// Where the browser's standard output and error go: `.discard` by default, because a
  /// browser's warnings on the terminal are noise between our prompts.
  public typealias Output = ChildProcess.Output

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
      // Not reaped by the Reaper: the thread below waits for it, however long it lives.
      if let pid = ChildProcess.spawn(command, environment: childEnvironment, output: output, reap: false) {
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
}
