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

  /// How long a started command has to fail before it counts as opened: `xdg-open`, and a
  /// browser that hands the URL to a running one, exit within this; a command that fails
  /// (a misspelt `BROWSER`, a browser that cannot open a display) exits non-zero within it
  /// too; a browser that starts a new window keeps running, and is not waited for longer.
  static let failureWindowMilliseconds = 1000

  /// Starts the first command that can be started with `url` and does not fail at once.
  ///
  /// - Returns: the program started (`firefox`, `xdg-open`), for a message such as
  ///   "Opened your browser with xdg-open"; nil when none could be started, or each that
  ///   started exited with a failure within ``failureWindowMilliseconds``.
  @discardableResult
  public func open(_ url: String) -> String? {
    for command in commands(for: url) {
      guard let program = command.first else { continue }
      // Not reaped by the Reaper: this function or the thread below waits for it.
      guard let pid = ChildProcess.spawn(command, environment: childEnvironment, output: output, reap: false) else {
        continue
      }
      switch Self.exitWithin(pid, milliseconds: Self.failureWindowMilliseconds) {
      case .some(0): return program
      case .some: continue
      case nil:
        _ = DetachedThread.start {
          var status: Int32 = 0
          while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        return program
      }
    }
    return nil
  }

  /// The exit status of `pid` (a signal counts as a failure, 128 + its number) if it
  /// exits within `milliseconds`, reaping it; nil while it runs.
  private static func exitWithin(_ pid: pid_t, milliseconds: Int) -> Int32? {
    var waited = 0
    while true {
      var status: Int32 = 0
      let reaped = waitpid(pid, &status, WNOHANG)
      if reaped == pid {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
      }
      if reaped < 0 && errno != EINTR { return 0 }
      guard waited < milliseconds else { return nil }
      usleep(20_000)
      waited += 20
    }
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
