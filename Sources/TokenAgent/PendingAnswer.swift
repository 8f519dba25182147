import AgentProtocol
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The answer to one connection's request, as the connection's thread waits for it: the
/// service's task delivers it; the thread writes it, and, for a client that said it
/// understands (`progress`), writes `working` while the answer is slow to come and the
/// agent is at work on it (``AnswerProgress``).
///
/// Those frames are how a client tells an agent that is busy refreshing from one that is
/// wedged (stopped, say, while the kernel still queues connections for it): a client waits
/// a short while for the first frame and takes its direct path when none comes, then,
/// once it knows the agent is at work, waits as long as each next `working` keeps coming.
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

  /// Waits for the answer; calls `slow` if it has not come within `milliseconds`, and
  /// again every `period` milliseconds while it has not.
  func wait(slowAfter milliseconds: Int, every period: Int, _ slow: () -> Void) -> AgentMessage {
    pthread_mutex_lock(lock)
    defer { pthread_mutex_unlock(lock) }
    var until = Self.deadline(after: milliseconds)
    while answer == nil {
      if pthread_cond_timedwait(delivered, lock, &until) == ETIMEDOUT, answer == nil {
        pthread_mutex_unlock(lock)
        slow()
        pthread_mutex_lock(lock)
        until = Self.deadline(after: period)
      }
    }
    return answer!
  }

  /// CLOCK_MONOTONIC's time `milliseconds` from now.
  private static func deadline(after milliseconds: Int) -> timespec {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let total = now.tv_nsec + (milliseconds % 1000) * 1_000_000
    return timespec(tv_sec: now.tv_sec + milliseconds / 1000 + total / 1_000_000_000, tv_nsec: total % 1_000_000_000)
  }
}

/// Whether the agent is at work on an answer, rather than waiting on the keyring: what
/// lets a connection's thread say `working` only when it is true.
///
/// A refresh is work with limits of its own (the refresh lock's, the token endpoint's),
/// and a client waits for it as long as the agent keeps saying so. A keyring that does not
/// answer (its daemon stopped) is no work: the agent says nothing, and its client takes
/// the direct path after its first frame's wait (`AgentConnection.firstFrameMilliseconds`),
/// as tokenctl-agent(1) says, instead of waiting out the keyring behind the agent first.
/// The service's task marks its answer (``markAtWork()``) as it goes in line for an
/// account's refresh (``AccountTurnstile``), through ``current``.
final class AnswerProgress: Sendable {
  private let atWork: Atomic<Bool>

  /// `atWork`: at work from the start (an application's answer, which may wait for its
  /// user's consent in a dialog).
  init(atWork: Bool = false) { self.atWork = Atomic(atWork) }

  /// The answer is at work now, and until it is delivered.
  func markAtWork() { atWork.store(true, ordering: .relaxed) }

  var isAtWork: Bool { atWork.load(ordering: .relaxed) }

  /// The progress of the answer the current task computes, when a connection waits for it.
  @TaskLocal static var current: AnswerProgress?
}
