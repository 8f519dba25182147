import Synchronization

/// How many refreshes the agent runs at once, across all its accounts:
/// a hundred accounts due together ran ninety-seven refresh children at once, 2 GiB,
/// against one server. The others wait their turn, in the order they came.
final class RefreshSlots: Sendable {
  private struct State {
    var free: Int
    var waiting: [CheckedContinuation<Void, Never>] = []
  }
  private let state: Mutex<State>

  /// Four: a refresh is mostly waiting for the server and the keyring, so a few at once
  /// keep a two-core machine busy without a crowd of children (each some 20 MiB).
  static let standard = 4

  init(_ count: Int = standard) {
    state = Mutex(State(free: count))
  }

  /// Runs `body` in a slot, waiting for one if none is free.
  func run<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
    await take()
    defer { give() }
    return try await body()
  }

  private func take() async {
    let taken = state.withLock { state -> Bool in
      guard state.free > 0 else { return false }
      state.free -= 1
      return true
    }
    if taken { return }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let now = state.withLock { state -> Bool in
        if state.free > 0 {
          state.free -= 1
          return true
        }
        state.waiting.append(continuation)
        return false
      }
      if now { continuation.resume() }
    }
  }

  private func give() {
    let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
      guard !state.waiting.isEmpty else {
        state.free += 1
        return nil
      }
      // The slot passes to the first waiter as it is: `free` stays as it was.
      return state.waiting.removeFirst()
    }
    next?.resume()
  }
}
