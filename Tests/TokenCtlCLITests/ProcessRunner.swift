import Foundation

/// What a finished child process left behind.
struct ProcessResult {
  var status: Int32
  var stdout: String
  var stderr: String
}

/// Runs programs for the tests with `posix_spawn` and `waitpid`.
///
/// Not Foundation's `Process`: on Linux it learns of a child's exit through a descriptor
/// the child inherits, so a child that daemonizes (gnome-keyring-daemon) looks alive
/// forever. Output goes to files rather than pipes for the same reason.
enum ProcessRunner {
  /// The `tokenctl` built beside this test bundle (`swift build --build-tests` builds both).
  static var tokenctl: String {
    if let path = ProcessInfo.processInfo.environment["TOKENCTL_BIN"] { return path }
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return me.deletingLastPathComponent().appendingPathComponent("tokenctl").path
  }

  static func run(
    _ executable: String, _ arguments: [String], environment: [String: String], stdin: String = ""
  ) throws -> ProcessResult {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let paths = ["in", "out", "err"].map { scratch.appendingPathComponent($0).path }
    try Data(stdin.utf8).write(to: URL(fileURLWithPath: paths[0]))
    let pid = try spawn(
      executable, arguments, environment: environment, stdin: paths[0], stdout: paths[1], stderr: paths[2])
    let status = wait(pid)
    return ProcessResult(
      status: status, stdout: try String(contentsOfFile: paths[1], encoding: .utf8),
      stderr: try String(contentsOfFile: paths[2], encoding: .utf8))
  }

  /// Writes an executable shell script at `path`.
  ///
  /// `install` creates it, in a process of its own: were it written here, a child that
  /// another test spawns meanwhile could inherit the file open for writing, and running
  /// the script would then fail with ETXTBSY for as long as that child lives.
  static func installScript(_ body: String, at path: String) throws {
    let source = path + ".source"
    try ("#!/bin/sh\n" + body).write(toFile: source, atomically: false, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: source) }
    let result = try run("/usr/bin/install", ["-m", "0700", source, path], environment: [:])
    guard result.status == 0 else { throw SessionError("cannot install \(path): \(result.stderr)") }
  }

  /// Starts `executable` with its standard streams on the given files.
  static func spawn(
    _ executable: String, _ arguments: [String], environment: [String: String], stdin: String = "/dev/null",
    stdout: String = "/dev/null", stderr: String = "/dev/null"
  ) throws -> pid_t {
    let path = executable.hasPrefix("/") ? executable : try which(executable)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    // Test threads are libdispatch workers, which block signals; a child would inherit
    // that mask and ignore the SIGTERM that `stop()` sends.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var noSignals = sigset_t(), allSignals = sigset_t()
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
    guard error == 0 else { throw SessionError("cannot start \(path): \(String(cString: strerror(error)))") }
    return pid
  }

  /// Waits for `pid` and returns its exit status (128 + signal when killed).
  static func wait(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
  }

  static func which(_ name: String) throws -> String {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
      let path = "\(directory)/\(name)"
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    throw SessionError("\(name) is not on PATH")
  }
}
