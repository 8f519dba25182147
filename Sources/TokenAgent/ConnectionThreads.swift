import ProcessRuntime

#if canImport(Glibc)
  import Glibc
#endif

/// The threads that serve the agent's connections: one thread per connection at a time,
/// as ever, but a thread that is done parks, up to `kept` of them, and takes the next
/// connection instead of a new thread being started for it.
///
/// Why: a thread started and ended for each connection (clone, a stack mapped, the
/// thread's exit) was a tenth of the agent's CPU per answer. Parked threads
/// wait with no timeout, so an idle agent still makes no system call; beyond `kept`, a
/// thread ends when its connection is done, so a burst leaves no crowd behind.
final class ConnectionThreads: @unchecked Sendable {
  // Everything below is guarded by `lock`.
  private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let handed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
  /// Threads waiting for work, including those woken for work they have not taken yet.
  private var parked = 0
  /// Work handed to parked threads, never more items than `parked`.
  private var waiting: [@Sendable () -> Void] = []
  let kept: Int

  init(kept: Int) {
    self.kept = kept
    pthread_mutex_init(lock, nil)
    pthread_cond_init(handed, nil)
  }

  deinit {
    pthread_cond_destroy(handed)
    pthread_mutex_destroy(lock)
    handed.deallocate()
    lock.deallocate()
  }

  /// How many threads are parked now (for tests).
  var parkedThreads: Int {
    pthread_mutex_lock(lock)
    defer { pthread_mutex_unlock(lock) }
    return parked - waiting.count
  }

  /// Runs `work` on a parked thread, or on a new one; false when the system has no thread
  /// to give.
  func run(_ work: @escaping @Sendable () -> Void) -> Bool {
    pthread_mutex_lock(lock)
    if parked > waiting.count {
      waiting.append(work)
      pthread_cond_signal(handed)
      pthread_mutex_unlock(lock)
      return true
    }
    pthread_mutex_unlock(lock)
    return DetachedThread.start { [self] in
      work()
      serveParked()
    }
  }

  /// Parks this thread for more work while fewer than `kept` are parked; returns (and the
  /// thread ends) otherwise.
  private func serveParked() {
    pthread_mutex_lock(lock)
    while parked < kept {
      parked += 1
      while waiting.isEmpty { pthread_cond_wait(handed, lock) }
      let work = waiting.removeFirst()
      parked -= 1
      pthread_mutex_unlock(lock)
      work()
      pthread_mutex_lock(lock)
    }
    pthread_mutex_unlock(lock)
  }
}
