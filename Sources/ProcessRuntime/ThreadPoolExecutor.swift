#if canImport(Glibc)
  import Glibc
#endif

/// A task executor on threads of our own, which sleep on a condition variable when there
/// is no work: a process whose tasks run here (``DeadlineTimer`` for their sleeps) uses no
/// CPU between events.
///
/// Why not Swift's global executor: on Linux it is libdispatch's root queues, and the first
/// worker thread libdispatch starts also starts its pool monitor, a timer that wakes the
/// process every second for as long as it lives. For a command that exits in 20 ms that
/// costs nothing; for the resident agent it is 10 ms of CPU a minute, where an idle
/// agent must use none (`make bench`, row 9).
///
/// Threads are started as work arrives and none is idle, up to `maximumThreads`, and then
/// stay: the agent's jobs block on the keyring and on locks, so a pool as narrow as the
/// cores would queue requests behind a slow read.
public final class ThreadPoolExecutor: TaskExecutor, @unchecked Sendable {
  /// The process's pool: the command line's tasks and the agent's run here.
  public static let shared = ThreadPoolExecutor(maximumThreads: 32)

  private let maximumThreads: Int
  // Guarded by `lock`: the jobs waiting, the threads started, the threads waiting for
  // work that no job has claimed yet, and the wake-ups sent to claimed ones. A job claims
  // an idle thread when it arrives, so two jobs that arrive together never both count
  // on the same one.
  private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let workArrived = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
  private var jobs: [UnownedJob] = []
  private var next = 0
  private var threads = 0
  private var idle = 0
  private var wakeUps = 0

  public init(maximumThreads: Int) {
    self.maximumThreads = max(1, maximumThreads)
    pthread_mutex_init(lock, nil)
    pthread_cond_init(workArrived, nil)
  }

  deinit {
    // Only a pool without threads can go: each thread holds the pool.
    pthread_cond_destroy(workArrived)
    pthread_mutex_destroy(lock)
    workArrived.deallocate()
    lock.deallocate()
  }

  public func enqueue(_ job: consuming ExecutorJob) {
    let unowned = UnownedJob(job)
    pthread_mutex_lock(lock)
    jobs.append(unowned)
    let wake = idle > 0
    let start = !wake && threads < maximumThreads
    if wake {
      idle -= 1
      wakeUps += 1
    } else if start {
      threads += 1
    }
    pthread_mutex_unlock(lock)
    if wake {
      pthread_cond_signal(workArrived)
    } else if start {
      let started = DetachedThread.start { [self] in work() }
      if !started {
        // Another thread of the pool takes the job when it is done; the first job of a
        // pool that has none waits until one can start.
        pthread_mutex_lock(lock)
        threads -= 1
        pthread_mutex_unlock(lock)
      }
    }
  }

  /// Makes the calling thread one of the pool's, after `start` (which typically starts the
  /// task that ends the process): the main thread of a command, which has nothing else to do.
  public func serveOnCurrentThread(after start: () -> Void) -> Never {
    pthread_mutex_lock(lock)
    threads += 1
    // Counted idle before `start` enqueues, so its first job waits for this thread rather
    // than starting another.
    idle += 1
    pthread_mutex_unlock(lock)
    start()
    pthread_mutex_lock(lock)
    if wakeUps > 0 { wakeUps -= 1 } else { idle -= 1 }
    pthread_mutex_unlock(lock)
    work()
    fatalError("the pool's threads never stop")
  }

  private func work() {
    let executor = asUnownedTaskExecutor()
    while true {
      pthread_mutex_lock(lock)
      while next == jobs.count {
        idle += 1
        repeat { pthread_cond_wait(workArrived, lock) } while wakeUps == 0
        wakeUps -= 1
      }
      let job = jobs[next]
      next += 1
      if next == jobs.count || next > 1024 {
        // Drop what has run, so the array neither grows forever nor shifts on every job.
        jobs.removeFirst(next)
        next = 0
      }
      pthread_mutex_unlock(lock)
      job.runSynchronously(on: executor)
    }
  }
}
