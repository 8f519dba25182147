import Foundation
import TestSupport

/// Runs a child to its end within a time limit: the agent tests kill agents under waiting
/// clients, and a client that hangs must fail its test, not the whole run.
enum BoundedRun {
  /// What a bounded run left: its result, or nil when it was killed at the limit; and how
  /// long it ran.
  /// A finished child's status and output (TestSupport's `ProcessResult` has no public
  /// initializer).
  struct Finished: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  struct Outcome {
    var result: Finished?
    var seconds: Double
  }

  /// Runs `executable` with `stdin` as its input; past `seconds`, kills it (SIGKILL). The
  /// limit only ends a client that hangs: five minutes, which no pause of a busy machine
  /// reaches, where one minute was once not enough for a run waiting for the pool.
  static func run(
    _ executable: String, _ arguments: [String], environment: [String: String], stdin: String = "",
    seconds: Double = 300
  ) async throws -> Outcome {
    let files = try TemporaryDirectory()
    try Data(stdin.utf8).write(to: files.url.appendingPathComponent("in"))
    let started = Date()
    let process = try TestProcess(
      executable, arguments, environment: environment, stdin: files.path("in"), stdout: files.path("out"),
      stderr: files.path("err"))
    let status = await process.exitStatus(within: seconds)
    let elapsed = Date().timeIntervalSince(started)
    guard let status else {
      kill(process.pid, SIGKILL)
      _ = await process.exitStatus(within: 10)
      return Outcome(result: nil, seconds: elapsed)
    }
    let result = Finished(
      status: status, stdout: try String(contentsOfFile: files.path("out"), encoding: .utf8),
      stderr: try String(contentsOfFile: files.path("err"), encoding: .utf8))
    return Outcome(result: result, seconds: elapsed)
  }
}

extension TestProcess {
  /// The child's exit status (128 + signal when killed), or nil when it still runs after
  /// `seconds`. Polls without blocking a thread of the cooperative pool.
  func exitStatus(within seconds: Double) async -> Int32? {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
      var status: Int32 = 0
      let reaped = waitpid(pid, &status, WNOHANG)
      if reaped == pid {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
      }
      // Reaped elsewhere already (`terminate()` reaps in the background): it is gone.
      if reaped < 0 && errno == ECHILD { return -1 }
      guard Date() < deadline else { return nil }
      try? await Task.sleep(for: .milliseconds(10))
    }
  }
}
