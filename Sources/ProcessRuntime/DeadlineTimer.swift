#if canImport(Glibc)
  import Glibc
#endif

/// Sleeps for tasks on one thread of our own, which waits on a condition variable until
/// the nearest deadline: no wake-up but the ones asked for.
///
/// `Task.sleep` would do the same on Linux through libdispatch's timers, whose first use
/// starts its worker pool and with it the pool's once-a-second monitor
/// (``ThreadPoolExecutor``). The resident agent sleeps here instead.
public final class DeadlineTimer: @unchecked Sendable {
  public static let shared = DeadlineTimer()

  private enum Sleeper {
    case waiting(deadline: UInt64, continuation: CheckedContinuation<Void, any Error>)
    /// Cancelled before it got to wait.
    case cancelled
  }

  // Guarded by `lock`.
  private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
  private var sleepers: [UInt64: Sleeper] = [:]
  private var nextID: UInt64 = 0
  private var running = false

  public init() {
    pthread_mutex_init(lock, nil)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    // Deadlines on the monotonic clock: setting the wall clock neither cuts a sleep short
    // nor stretches it.
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(changed, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(changed)
    pthread_mutex_destroy(lock)
    changed.deallocate()
    lock.deallocate()
  }

  /// Returns after `duration`, or throws `CancellationError` as soon as the task is
  /// cancelled, as `Task.sleep` does.
  public func sleep(for duration: Duration) async throws {
    let (seconds, attoseconds) = duration.components
    let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds / 1_000_000_000)
    let deadline = Self.now() &+ UInt64(clamping: nanoseconds)
    pthread_mutex_lock(lock)
    let id = nextID
    nextID += 1
    pthread_mutex_unlock(lock)
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        pthread_mutex_lock(lock)
        if case .cancelled = sleepers[id] {
          sleepers[id] = nil
          pthread_mutex_unlock(lock)
          continuation.resume(throwing: CancellationError())
          return
        }
        sleepers[id] = .waiting(deadline: deadline, continuation: continuation)
        let start = !running
        running = true
        pthread_mutex_unlock(lock)
        if start {
          if !DetachedThread.start({ [self] in wait() }) {
            pthread_mutex_lock(lock)
            running = false
            sleepers[id] = nil
            pthread_mutex_unlock(lock)
            continuation.resume(throwing: CancellationError())
          }
        } else {
          pthread_cond_signal(changed)
        }
      }
    } onCancel: {
      pthread_mutex_lock(lock)
      let sleeper = sleepers[id]
      switch sleeper {
      case .waiting: sleepers[id] = nil
      case .none: sleepers[id] = .cancelled
      case .cancelled: break
      }
      pthread_mutex_unlock(lock)
      if case .waiting(_, let continuation) = sleeper { continuation.resume(throwing: CancellationError()) }
    }
  }

  /// The timer thread: resumes every sleeper whose deadline has come, then waits for the
  /// nearest one or for a new sleeper.
  private func wait() {
    pthread_mutex_lock(lock)
    while true {
      let now = Self.now()
      var due: [CheckedContinuation<Void, any Error>] = []
      var nearest = UInt64.max
      for (id, sleeper) in sleepers {
        guard case .waiting(let deadline, let continuation) = sleeper else { continue }
        if deadline <= now {
          sleepers[id] = nil
          due.append(continuation)
        } else {
          nearest = min(nearest, deadline)
        }
      }
      if !due.isEmpty {
        pthread_mutex_unlock(lock)
        for continuation in due { continuation.resume() }
        pthread_mutex_lock(lock)
        continue
      }
      if nearest == .max {
        pthread_cond_wait(changed, lock)
      } else {
        var until = timespec(tv_sec: Int(nearest / 1_000_000_000), tv_nsec: Int(nearest % 1_000_000_000))
        pthread_cond_timedwait(changed, lock, &until)
      }
    }
  }

  private static func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }
}
