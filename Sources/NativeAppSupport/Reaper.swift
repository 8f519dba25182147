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
    let pids = pending.withLock { pids in
      pids.append(pid)
      return pids
    }
    var still: [pid_t] = []
    for child in pids {
      var status: Int32 = 0
      if waitpid(child, &status, WNOHANG) == 0 { still.append(child) }
    }
    pending.withLock { $0 = still }
  }
}
