import Synchronization

/// Lets one task at a time through per key, the others waiting in line: the agent's
/// requests for one account refresh one after the other, so 32 clients asking at once
/// cost one refresh, and each later one finds the new token in memory. The file lock
/// still keeps other processes out; this keeps the agent from queueing 32 times on it.
final class AccountTurnstile: Sendable {
  private let waiting = Mutex<[String: [CheckedContinuation<Void, Never>]]>([:])

  /// Runs `body` once no other body runs for `key`. A client waiting for this is told the
  /// agent is at work (``AnswerProgress``): a refresh, its own or another's, is on the way.
  func run<Result: Sendable>(_ key: String, _ body: () async throws -> Result) async throws -> Result {
    AnswerProgress.current?.markAtWork()
    await enter(key)
    defer { leave(key) }
    return try await body()
  }

  private func enter(_ key: String) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let free = waiting.withLock { waiting in
        if waiting[key] != nil {
          waiting[key]!.append(continuation)
          return false
        }
        waiting[key] = []
        return true
      }
      if free { continuation.resume() }
    }
  }

  private func leave(_ key: String) {
    let next = waiting.withLock { waiting -> CheckedContinuation<Void, Never>? in
      guard var line = waiting[key], !line.isEmpty else {
        waiting[key] = nil
        return nil
      }
      let next = line.removeFirst()
      waiting[key] = line
      return next
    }
    next?.resume()
  }
}
