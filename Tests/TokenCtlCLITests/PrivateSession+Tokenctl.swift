import TestSupport

extension PrivateSession {
  /// Runs `tokenctl` with `arguments` on this bus.
  func tokenctl(_ arguments: String...) throws -> ProcessResult {
    try TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
  }
}
