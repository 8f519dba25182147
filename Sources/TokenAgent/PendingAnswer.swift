import AgentProtocol

#if canImport(Glibc)
  import Glibc
#endif

/// The answer to one connection's request, as the connection's thread waits for it: the
/// service's task delivers it; the thread writes it, and, for a client that said it
/// understands (`progress`), writes `working` first when the answer is slow to come.
///
/// That first frame is how a client tells an agent that is busy refreshing from one that
/// is wedged (stopped, say, while the kernel still queues connections for it): a client
/// waits a short while for the first frame and takes its direct path when none comes,
/// then waits as long as a refresh may take once it knows the agent is at work.
final class PendingAnswer: @unchecked Sendable {
  // Guarded by `lock`.
  private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let delivered = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
  private var answer: AgentMessage?

  init() {
    pthread_mutex_init(lock, nil)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(delivered, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(delivered)
    pthread_mutex_destroy(lock)
    delivered.deallocate()
    lock.deallocate()
  }

  /// Hands the answer to the waiting thread.
  func deliver(_ answer: AgentMessage) {
    pthread_mutex_lock(lock)
    self.answer = answer
    pthread_cond_signal(delivered)
    pthread_mutex_unlock(lock)
  }

  /// Waits for the answer; calls `slow` once if it has not come within `milliseconds`.
  func wait(slowAfter milliseconds: Int, _ slow: () -> Void) -> AgentMessage {
    pthread_mutex_lock(lock)
    defer { pthread_mutex_unlock(lock) }
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let total = now.tv_nsec + (milliseconds % 1000) * 1_000_000
    var until = timespec(
      tv_sec: now.tv_sec + milliseconds / 1000 + total / 1_000_000_000, tv_nsec: total % 1_000_000_000)
    while answer == nil {
      if pthread_cond_timedwait(delivered, lock, &until) == ETIMEDOUT, answer == nil {
        pthread_mutex_unlock(lock)
        slow()
        pthread_mutex_lock(lock)
        while answer == nil { pthread_cond_wait(delivered, lock) }
      }
    }
    return answer!
  }
}
