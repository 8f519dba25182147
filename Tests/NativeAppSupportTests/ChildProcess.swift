import Foundation

/// A child process the tests start with `posix_spawn` and reap with `waitpid`.
///
/// Not Foundation's `Process`: on Linux it learns of a child's exit through a descriptor
/// the child inherits, so a child that passes it on looks alive forever.
struct ChildProcess {
  let pid: pid_t

  /// Starts `executable` (a path, or a name looked up in our `PATH`) with its standard
  /// streams on the given files.
  init(
    _ executable: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
    stdin: String = "/dev/null", stdout: String = "/dev/null", stderr: String = "/dev/null"
  ) throws {
    let path = executable.hasPrefix("/") ? executable : try Self.which(executable)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    // Test threads block signals; a child would inherit that and ignore `terminate()`.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var noSignals = sigset_t()
    var allSignals = sigset_t()
    sigemptyset(&noSignals)
    sigfillset(&allSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    posix_spawnattr_setsigdefault(&attributes, &allSignals)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid = pid_t()
    let error = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    guard error == 0 else { throw TestFailure("cannot start \(path): \(String(cString: strerror(error)))") }
    self.pid = pid
  }

  /// Waits for the child and returns its exit status (128 + signal when killed).
  @discardableResult
  func wait() -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
  }

  /// Waits for the child on a thread of its own, leaving the few threads of Swift's
  /// cooperative pool to the tests that run meanwhile.
  func exitStatus() async -> Int32 {
    await withCheckedContinuation { continuation in
      Thread.detachNewThread { continuation.resume(returning: wait()) }
    }
  }

  /// Sends SIGTERM and reaps the child in the background.
  func terminate() {
    kill(pid, SIGTERM)
    Thread.detachNewThread { wait() }
  }

  static func which(_ name: String) throws -> String {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
      let path = "\(directory)/\(name)"
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    throw TestFailure("\(name) is not on PATH")
  }
}
