import CLinux

#if canImport(Glibc)
  import Glibc
#endif

/// Protection of a process that holds tokens in its memory.
public enum ProcessProtection {
  /// Makes this process non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`): a crash leaves no
  /// core file with tokens in it, and another program of the same user can no longer
  /// attach with ptrace or read the process's memory and environment through /proc.
  /// Programs this process starts (the browser, the hook) are dumpable again after their
  /// exec. Returns whether it took effect; it only fails on kernels without prctl.
  @discardableResult
  public static func forbidCoreDumpsAndTracing() -> Bool {
    tokenctl_set_undumpable() == 0
  }

  /// Makes malloc overwrite every block it frees, for a process that keeps running after
  /// the tokens it handled are gone (the agent): the copies a Swift `String` or a library
  /// makes of a token, which nobody can wipe by hand, die with their memory instead of
  /// lingering until it is reused. What the process keeps between requests it must still
  /// wipe itself (`SecretBox`).
  ///
  /// glibc's `M_PERTURB` does the overwriting, but not for the small blocks its per-thread
  /// cache takes back (most of a request's), and that cache can only be turned off before
  /// the process starts: so the process starts itself again, once, with
  /// `GLIBC_TUNABLES` saying so (and ``fewArenas``), keeping its pid, arguments and descriptors. Call it first
  /// thing, before any token is read. If the exec fails it goes on with `M_PERTURB` alone.
  public static func wipeFreedMemory() {
    _ = tokenctl_wipe_freed_memory()
    let tunables = getenv("GLIBC_TUNABLES").map { String(cString: $0) }
    guard !(tunables ?? "").contains(noThreadCache) else { return }
    let wanted = "\(noThreadCache):glibc.malloc.perturb=\(perturbByte):\(fewArenas)"
    setenv("GLIBC_TUNABLES", tunables.map { "\($0):\(wanted)" } ?? wanted, 1)
    execv("/proc/self/exe", CommandLine.unsafeArgv)
    // Still here: the exec failed (no /proc?). The variable must not reach our children.
    if let tunables { setenv("GLIBC_TUNABLES", tunables, 1) } else { unsetenv("GLIBC_TUNABLES") }
  }

  /// Two malloc arenas at most: the agent answers each connection on a thread of its own,
  /// and glibc gives threads arenas of their own, up to eight per core, each keeping what
  /// was freed in it; with 1,000 accounts and clients all along, its memory grew by a fifth
  /// in a minute (`make bench`, row 13). The same exec sets it.
  static let fewArenas = "glibc.malloc.arena_max=2"

  /// glibc's tunable that turns its per-thread cache of freed blocks off.
  static let noThreadCache = "glibc.malloc.tcache_count=0"
  /// The byte freed memory is overwritten with: any but zero, which turns it off; the
  /// same as CLinux's `tokenctl_wipe_freed_memory`.
  static let perturbByte = 0xa5
}
