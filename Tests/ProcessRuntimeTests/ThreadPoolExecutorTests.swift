import Foundation
import ProcessRuntime
import Synchronization
import Testing

/// The agent's own executor and timer (an idle agent must make no system call): tasks run on the
/// pool's threads, blocked jobs do not hold up others, and sleeps end on time, in order,
/// or at once when cancelled.
@Suite struct ThreadPoolExecutorTests {
  /// What the tasks of a test saw, shared between them.
  final class Seen: Sendable {
    let running = Atomic<Int>(0)
    let threads = Mutex<Set<UInt>>([])
    let order = Mutex<[Int]>([])
    func thread() { threads.withLock { _ = $0.insert(UInt(pthread_self())) } }
  }

  /// Eight tasks that each block their thread until all eight run at once finish only
  /// if the pool starts a thread for each rather than queueing them behind the blocked.
  @Test func jobsThatBlockGetThreadsOfTheirOwn() async throws {
    let pool = ThreadPoolExecutor(maximumThreads: 8)
    let seen = Seen()
    let finished = await withTaskGroup(of: Bool.self) { group in
      for _ in 0..<8 {
        group.addTask(executorPreference: pool) {
          seen.running.add(1, ordering: .sequentiallyConsistent)
          seen.thread()
          let deadline = Date().addingTimeInterval(10)
          while seen.running.load(ordering: .sequentiallyConsistent) < 8 && Date() < deadline { usleep(1000) }
          return seen.running.load(ordering: .sequentiallyConsistent) == 8
        }
      }
      return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    #expect(finished == 8)
    #expect(seen.threads.withLock { $0.count } == 8)
  }

  /// A pool of two threads runs a thousand tasks on those two, and never more.
  @Test func aPoolNeverStartsMoreThanItsThreads() async throws {
    let pool = ThreadPoolExecutor(maximumThreads: 2)
    let seen = Seen()
    let sum = await withTaskGroup(of: Int.self) { group in
      for number in 1...1000 {
        group.addTask(executorPreference: pool) {
          seen.thread()
          return number
        }
      }
      return await group.reduce(0, +)
    }
    #expect(sum == 500_500)
    #expect(seen.threads.withLock { $0.count } <= 2)
  }

  /// A task whose executor preference is the pool resumes there after a sleep.
  @Test func aTaskResumesOnThePoolAfterASleep() async throws {
    let pool = ThreadPoolExecutor(maximumThreads: 1)
    let (before, after) = await Task(executorPreference: pool) {
      let before = UInt(pthread_self())
      try? await DeadlineTimer.shared.sleep(for: .milliseconds(5))
      return (before, UInt(pthread_self()))
    }.value
    #expect(before == after, "a pool of one thread: the same thread before and after")
  }

  @Test func sleepsEndInDeadlineOrderAndNeverEarly() async throws {
    let timer = DeadlineTimer()
    let seen = Seen()
    let clock = ContinuousClock()
    let start = clock.now
    let elapsed = try await withThrowingTaskGroup(of: (Int, Duration).self) { group in
      for milliseconds in [60, 20, 40] {
        group.addTask {
          try await timer.sleep(for: .milliseconds(milliseconds))
          seen.order.withLock { $0.append(milliseconds) }
          return (milliseconds, clock.now - start)
        }
      }
      return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
    }
    #expect(seen.order.withLock { $0 } == [20, 40, 60])
    for (milliseconds, took) in elapsed { #expect(took >= .milliseconds(milliseconds)) }
  }

  /// Ends long before its hour: a sleep that ran its course returns, a cancelled one throws,
  /// so the error tells them apart, however long a busy machine takes to run the test. Its
  /// time limit only keeps a broken cancellation from holding the run for the hour.
  @Test(.timeLimit(.minutes(20))) func aCancelledSleepEndsAtOnce() async throws {
    let timer = DeadlineTimer()
    let sleeper = Task { try await timer.sleep(for: .seconds(3600)) }
    try await Task.sleep(for: .milliseconds(20))
    sleeper.cancel()
    await #expect(throws: CancellationError.self) { try await sleeper.value }
    // Cancelled before it began to wait: it never waits.
    let early = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await timer.sleep(for: .seconds(3600))
    }
    await #expect(throws: CancellationError.self) { try await early.value }
  }
}
