import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Collects the exit status of children we do not wait for, so that a long-running
/// process using the library does not accumulate zombies. (A short-lived `tokenctl`
/// exits first, and init collects them.)
enum Reaper {
  private static let pending = Mutex<[pid_t]>([])

  static func watch(_ pid: pid_t) {
    // One critical section: a child added by a concurrent call must not be lost.
    pending.withLock { pids in
      pids.append(pid)
      pids.removeAll { child in
        var status: Int32 = 0
        return waitpid(child, &status, WNOHANG) != 0
      }
    }
  }
}
