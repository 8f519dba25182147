import CLinux

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
}
