import Testing

/// The two halves of an exit test, a test body that runs in a process of its own.
enum OwnProcess {
  /// Runs `body` in the exit test's process. An error it throws becomes an issue, which
  /// Swift Testing hands to the parent process like any other; thrown out of the exit
  /// test itself, it would end the process with a signal and no word of what went wrong.
  static func run(_ body: () throws -> Void) {
    do { try body() } catch { Issue.record(error) }
  }

  /// Adds what the exit test's process wrote on standard error to the test's result when
  /// the process did not exit as expected (a crash says little more than its signal).
  static func report(_ result: ExitTest.Result?) {
    guard let result, result.exitStatus != .exitCode(0) else { return }
    Issue.record("the test's own process wrote: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
  }
}
