import Synchronization
import TestSupport

/// The agent's sleep in a test's hands: each wait the agent asks for is handed to the test
/// (`next()`), which ends it when it likes (`elapse()`), moving the test clock on by as
/// much, as if that time had passed. A wait cut short (a wake, the agent stopped) ends with
/// `CancellationError`, as `DeadlineTimer`'s does.
///
/// So a test of the refresh-ahead schedule reads the waits the agent chose, and needs no
/// real time: not the hour a token lives, nor the seconds a busy machine might add.
final class ManualSleep: Sendable {
  let clock: TestClock

  private struct Sleeper {
    let id: Int
    let duration: Duration
    let continuation: CheckedContinuation<Void, any Error>
  }
  private struct State {
    var lastID = 0
    var sleeping: [Sleeper] = []
    /// Waits cancelled before they began: they never begin.
    var cancelledEarly: Set<Int> = []
    var asked: [Duration] = []
    var handedToTheTest = 0
    var test: CheckedContinuation<Duration, Never>?
  }
  private let state = Mutex(State())

  init(clock: TestClock) { self.clock = clock }

  /// The agent's `sleep`.
  func sleep(_ duration: Duration) async throws {
    let id = state.withLock { state in
      state.lastID += 1
      return state.lastID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let (cancelled, test) = state.withLock { state -> (Bool, CheckedContinuation<Duration, Never>?) in
          if state.cancelledEarly.remove(id) != nil { return (true, nil) }
          state.sleeping.append(Sleeper(id: id, duration: duration, continuation: continuation))
          state.asked.append(duration)
          guard let test = state.test else { return (false, nil) }
          state.test = nil
          state.handedToTheTest += 1
          return (false, test)
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        test?.resume(returning: duration)
      }
    } onCancel: {
      let sleeper = state.withLock { state -> Sleeper? in
        if let index = state.sleeping.firstIndex(where: { $0.id == id }) { return state.sleeping.remove(at: index) }
        state.cancelledEarly.insert(id)
        return nil
      }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// The next wait the agent asks for, in order, once it has.
  func next() async -> Duration {
    await withCheckedContinuation { (continuation: CheckedContinuation<Duration, Never>) in
      let ready = state.withLock { state -> Duration? in
        guard state.asked.count > state.handedToTheTest else {
          state.test = continuation
          return nil
        }
        state.handedToTheTest += 1
        return state.asked[state.handedToTheTest - 1]
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }

  /// Ends the oldest wait still running, the clock moved on by its length.
  func elapse() {
    guard let sleeper = state.withLock({ $0.sleeping.isEmpty ? nil : $0.sleeping.removeFirst() }) else { return }
    clock.advance(by: sleeper.duration.seconds)
    sleeper.continuation.resume()
  }
}

extension Duration {
  /// In seconds, as the agent's clocks count.
  var seconds: Double {
    let (seconds, attoseconds) = components
    return Double(seconds) + Double(attoseconds) / 1e18
  }
}
