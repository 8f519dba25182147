#if canImport(Glibc)
  import Glibc
#endif

/// Starts programs without a shell of our own and without waiting for them.
public enum ChildProcess {
  /// Spawns `arguments` (the first is looked up in PATH) with `environment`, standard
  /// input from /dev/null, output to /dev/null unless `inheritOutput`, and default signal
  /// handling. Returns the pid, or nil when the program could not be started.
  static func spawn(
    _ arguments: [String], environment: [String: String], inheritOutput: Bool = false, reap: Bool = true
  ) -> pid_t? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    if !inheritOutput {
      posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
      posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // The child must not inherit a blocked signal mask or ignored SIGPIPE from us.
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv { free(pointer) }
      for pointer in envp { free(pointer) }
    }
    var pid: pid_t = 0
    let status = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
    guard status == 0 else { return nil }
    if reap { Reaper.watch(pid) }
    return pid
  }

  /// Runs `arguments` to completion with our standard output and error, and returns its
  /// exit status, or nil when it could not be started or was killed.
  public static func run(_ arguments: [String], environment: [String: String]) -> Int32? {
    guard let pid = spawn(arguments, environment: environment, inheritOutput: true, reap: false) else { return nil }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else { return nil }
    }
    // Exited normally: the low 7 bits are zero and the status is in the next byte.
    return status & 0x7f == 0 ? (status >> 8) & 0xff : nil
  }
}
