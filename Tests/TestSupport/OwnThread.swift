import Foundation

/// Runs `body`, which blocks (a keyring, a child process, a bus monitor), on a thread of its
/// own, leaving the few threads of Swift's cooperative pool (two on a two-core machine) to
/// the tests that run meanwhile: a synchronous test runs on that pool, and a few of them
/// blocking at once starve every other test's tasks.
///
/// `body` runs outside the test's task, so an `#expect` in it is not the test's: return what
/// it found and check it after.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
  }
}
