import Foundation

/// A child process the tests start with `posix_spawn` and reap with `waitpid`.
///
/// Not Foundation's `Process`: on Linux it learns of a child's exit through a descriptor
/// the child inherits, so a child that passes it on (gnome-keyring-daemon daemonizes)
/// looks alive forever. Output goes to files rather than pipes for the same reason.
///
/// Not named `ChildProcess`: the tests import ProcessRuntime, whose `ChildProcess` is
/// the code under test.
public struct TestProcess: Sendable {
  public let pid: pid_t

  /// Starts `executable` (a path, or a name looked up in our `PATH`) with its standard
  /// streams on the given files. With `stderr` nil, standard error goes to standard
  /// output's file, interleaved in the order the child wrote.
  public init(
    _ executable: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
    stdin: String = "/dev/null", stdout: String = "/dev/null", stderr: String? = "/dev/null"
  ) throws {
    let path = executable.hasPrefix("/") ? executable : try Self.which(executable)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    if let stderr {
      posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    } else {
      // One open file shared by both descriptors, so neither overwrites the other.
      posix_spawn_file_actions_adddup2(&actions, 1, 2)
    }
    // Test threads are libdispatch workers, which block signals; a child would inherit
    // that mask and ignore the SIGTERM a test sends it.
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
  ///
  /// Blocks the calling thread: from async code, use `exitStatus()`.
  @discardableResult
  @available(*, noasync, message: "blocks a thread of Swift's cooperative pool: use exitStatus()")
  public func wait() -> Int32 { reap() }

  /// Waits for the child on a thread of its own, leaving the few threads of Swift's
  /// cooperative pool (two on a two-core machine) to the tests that run meanwhile.
  public func exitStatus() async -> Int32 {
    await withCheckedContinuation { continuation in
      Thread.detachNewThread { continuation.resume(returning: reap()) }
    }
  }

  /// Sends `signal` (SIGTERM by default) and reaps the child in the background.
  public func terminate(signal: Int32 = SIGTERM) {
    kill(pid, signal)
    Thread.detachNewThread { _ = reap() }
  }

  private func reap() -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
  }

  /// The first executable `name` in our `PATH`.
  public static func which(_ name: String) throws -> String {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
      let path = "\(directory)/\(name)"
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    throw TestFailure("\(name) is not on PATH")
  }

  // MARK: Running to the end

  /// Runs `executable` with `stdin` as its input, and returns its status and output.
  /// With `mergingStandardError`, standard error is interleaved into `stdout`.
  ///
  /// Blocks the calling thread until the child exits: for code on a thread of its own
  /// (`onOwnThread`, an exit test's process). A test, synchronous ones included, runs on
  /// Swift's cooperative pool: it uses the async overload below.
  @available(*, noasync, message: "blocks a thread of Swift's cooperative pool: use the async run")
  public static func run(
    _ executable: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
    stdin: String = "", mergingStandardError: Bool = false
  ) throws -> ProcessResult {
    let files = try CapturedFiles(stdin: stdin, mergingStandardError: mergingStandardError)
    let process = try TestProcess(
      executable, arguments, environment: environment, stdin: files.stdin, stdout: files.stdout, stderr: files.stderr)
    return try files.result(status: process.wait())
  }

  /// Runs `executable` as the synchronous `run` does, waiting on a thread of its own.
  public static func run(
    _ executable: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
    stdin: String = "", mergingStandardError: Bool = false
  ) async throws -> ProcessResult {
    let files = try CapturedFiles(stdin: stdin, mergingStandardError: mergingStandardError)
    let process = try TestProcess(
      executable, arguments, environment: environment, stdin: files.stdin, stdout: files.stdout, stderr: files.stderr)
    return try files.result(status: await process.exitStatus())
  }

  /// The files a run's standard streams use, in a directory of their own.
  private struct CapturedFiles {
    let directory: TemporaryDirectory
    let mergingStandardError: Bool
    var stdin: String { directory.path("in") }
    var stdout: String { directory.path("out") }
    var stderr: String? { mergingStandardError ? nil : directory.path("err") }

    init(stdin input: String, mergingStandardError: Bool) throws {
      directory = try TemporaryDirectory()
      self.mergingStandardError = mergingStandardError
      try Data(input.utf8).write(to: URL(fileURLWithPath: stdin))
    }

    func result(status: Int32) throws -> ProcessResult {
      ProcessResult(
        status: status, stdout: try String(contentsOfFile: stdout, encoding: .utf8),
        stderr: try stderr.map { try String(contentsOfFile: $0, encoding: .utf8) } ?? "")
    }
  }

  // MARK: Scripts

  /// Writes an executable shell script at `path`.
  ///
  /// `install` creates it, in a process of its own: were it written here, a child that
  /// another test spawns meanwhile could inherit the file open for writing, and running
  /// the script would then fail with ETXTBSY for as long as that child lives.
  @available(*, noasync, message: "blocks a thread of Swift's cooperative pool: use the async installScript")
  public static func installScript(_ body: String, at path: String, mode: String = "0700") throws {
    let source = try writeSource(body, for: path)
    defer { try? FileManager.default.removeItem(atPath: source) }
    try checkInstalled(path, run("/usr/bin/install", ["-m", mode, source, path], environment: [:]))
  }

  /// Writes an executable shell script at `path` as the synchronous `installScript` does,
  /// waiting for `install` on a thread of its own.
  public static func installScript(_ body: String, at path: String, mode: String = "0700") async throws {
    let source = try writeSource(body, for: path)
    defer { try? FileManager.default.removeItem(atPath: source) }
    try checkInstalled(path, await run("/usr/bin/install", ["-m", mode, source, path], environment: [:]))
  }

  private static func writeSource(_ body: String, for path: String) throws -> String {
    let source = path + ".source"
    try ("#!/bin/sh\n" + body).write(toFile: source, atomically: false, encoding: .utf8)
    return source
  }

  private static func checkInstalled(_ path: String, _ result: ProcessResult) throws {
    guard result.status == 0 else { throw TestFailure("cannot install \(path): \(result.stderr)") }
  }
}
