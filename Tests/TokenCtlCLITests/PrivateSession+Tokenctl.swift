import TestSupport

extension PrivateSession {
  /// Runs `tokenctl` with `arguments` on this bus, for code on a thread of its own.
  @available(*, noasync, message: "blocks a thread of Swift's cooperative pool: use the async tokenctl")
  func tokenctl(_ arguments: String...) throws -> ProcessResult {
    try TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
  }

  /// Runs `tokenctl` with `arguments` on this bus, waiting for it on a thread of its own.
  func tokenctl(_ arguments: String...) async throws -> ProcessResult {
    try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
  }
}
