import CLinux

#if canImport(Glibc)
  import Glibc
#endif

/// Starts programs without a shell of our own: the browser, the hook, git.
///
/// Why our own, on `posix_spawn`, rather than Foundation's `Process` or swift-subprocess:
/// what tokenctl needs of a child is exact and security-bound. It hands on a held lock at
/// a fixed descriptor number and closes every other descriptor (`closefrom`), may put the
/// child in a session of its own, passes the environment it is given and nothing else,
/// and is collected by one reaper. And it costs the parent no Foundation start-up and no
/// thread, on the agent's and the clients' fast paths.
public enum ChildProcess {
  /// The child's descriptor number of the first `handOn` descriptor; the next ones follow.
  package static let firstHandedOn: Int32 = 3

  /// Where a child's standard output and error go.
  public enum Output: Sendable, Hashable {
    /// `/dev/null`: a browser's or hook's chatter between our prompts is noise.
    case discard
    /// Ours.
    case inherit
    /// A file, created or truncated (tests read what the child printed).
    case file(String)
    /// Standard output to this descriptor (a pipe's end); standard error ours when
    /// `keepErrors`, else discarded.
    case descriptor(Int32, keepErrors: Bool)
  }

  /// Spawns `arguments`, the first looked up in `environment`'s `PATH` (the child's, not
  /// ours, which `posix_spawnp` would search), with standard input from /dev/null, no
  /// descriptor of ours beyond the standard three, default signal handling and a process
  /// group of its own. With `reap`, the `Reaper` collects its exit status; otherwise the
  /// caller must wait for it. Returns the pid, or nil when no candidate could be started.
  ///
  /// `handOn` descriptors become the child's `firstHandedOn` (3), 4, … (a held lock); `newSession` puts the
  /// child in a session of its own, out of reach of the terminal's Ctrl-C and hangup.
  package static func spawn(
    _ arguments: [String], environment: [String: String], output: Output = .discard, reap: Bool = true,
    handOn: [Int32] = [], newSession: Bool = false
  ) -> pid_t? {
    guard let program = arguments.first else { return nil }
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
    case .descriptor(let descriptor, let keepErrors):
      posix_spawn_file_actions_adddup2(&actions, descriptor, 1)
      if !keepErrors { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
    }
    // Handed-on descriptors first move above every target, so that moving one into place
    // never overwrites another still to be moved; dup2 clears their close-on-exec flag.
    let parked = Int32(100)
    for (index, descriptor) in handOn.enumerated() {
      posix_spawn_file_actions_adddup2(&actions, descriptor, parked + Int32(index))
    }
    for index in handOn.indices {
      posix_spawn_file_actions_adddup2(&actions, parked + Int32(index), firstHandedOn + Int32(index))
    }
    _ = tokenctl_spawn_closefrom(&actions, firstHandedOn + Int32(handOn.count))

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // Our threads may block signals and we may ignore SIGPIPE; a child must start with
    // neither. Its own process group keeps a Ctrl-C meant for tokenctl away from it.
    var noSignals = sigset_t()
    var allSignals = sigset_t()
    sigemptyset(&noSignals)
    sigfillset(&allSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    posix_spawnattr_setsigdefault(&attributes, &allSignals)
    posix_spawnattr_setpgroup(&attributes, 0)
    // glibc's POSIX_SPAWN_SETSID (2.26 and later), which its header shows only to
    // _GNU_SOURCE builds.
    let setSession: Int32 = 0x80
    let group = newSession ? setSession : Int32(POSIX_SPAWN_SETPGROUP)
    posix_spawnattr_setflags(&attributes, Int16(Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) | group))

    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    for candidate in candidates where access(candidate, X_OK) == 0 {
      var pid = pid_t()
      // glibc reports a failed exec as posix_spawn's result, so an unusable candidate
      // (not an executable, a bad interpreter) moves us on to the next one.
      if posix_spawn(&pid, candidate, &actions, &attributes, argv, envp) == 0 {
        if reap { Reaper.watch(pid) }
        return pid
      }
    }
    return nil
  }

  /// Starts `arguments` as a daemon: in a session of its own, its output appended to
  /// nothing (`/dev/null`), reaped when it ends. Returns its pid, or nil.
  public static func startDaemon(_ arguments: [String], environment: [String: String]) -> pid_t? {
    spawn(arguments, environment: environment, output: .discard, reap: true, newSession: true)
  }

  /// Runs `arguments` to completion with our standard output and error, and returns its
  /// exit status, or nil when it could not be started or was killed.
  public static func run(_ arguments: [String], environment: [String: String]) -> Int32? {
    guard let pid = spawn(arguments, environment: environment, output: .inherit, reap: false) else { return nil }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else { return nil }
    }
    return exitStatus(status)
  }

  /// Runs `arguments` to completion and returns its exit status and what it wrote on
  /// standard output, of which the first `limit` bytes are kept (the rest is read, so the
  /// child never blocks on a full pipe); its standard error is discarded. Nil when it
  /// could not be started or was killed.
  public static func capture(
    _ arguments: [String], environment: [String: String], limit: Int = 1 << 20
  ) -> (status: Int32, output: [UInt8])? {
    var ends: [Int32] = [-1, -1]
    guard tokenctl_pipe2(&ends, O_CLOEXEC) == 0 else { return nil }
    let pid = spawn(arguments, environment: environment, output: .descriptor(ends[1], keepErrors: false), reap: false)
    close(ends[1])
    defer { close(ends[0]) }
    guard let pid else { return nil }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      output += chunk[..<min(count, max(0, limit - output.count))]
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else { return nil }
    }
    return exitStatus(status).map { ($0, output) }
  }

  /// The exit status in a `waitpid` status, or nil when the child was killed.
  private static func exitStatus(_ status: Int32) -> Int32? {
    // Exited normally: the low 7 bits are zero and the status is in the next byte.
    status & 0x7f == 0 ? (status >> 8) & 0xff : nil
  }
}
