import CLinux
import ProcessRuntime

#if canImport(Glibc)
  import Glibc
#endif

/// Tells when the wall clock is set or jumps: a step (by hand, by NTP at boot), or a
/// resume from suspend, during which the monotonic clock stood still. A process that
/// sleeps on the monotonic clock until a wall-clock time (the agent, until a token is due
/// for refresh) wakes too late after either, unless it looks again.
///
/// A thread of its own blocks on a timerfd armed with `TFD_TIMER_CANCEL_ON_SET` (Linux
/// 3.0): no wake-up but the changes themselves, so an idle process stays idle.
public enum WallClockWatch {
  /// Calls `changed` after every change, on the watch's thread, for as long as the
  /// process runs. Returns false when the kernel offers no such timer.
  @discardableResult
  public static func start(_ changed: @escaping @Sendable () -> Void) -> Bool {
    let fd = tokenctl_wall_clock_watch()
    guard fd >= 0 else { return false }
    return DetachedThread.start {
      var expirations: UInt64 = 0
      while true {
        let count = read(fd, &expirations, 8)
        if count < 0 && errno == EINTR { continue }
        guard count < 0 && errno == ECANCELED, tokenctl_wall_clock_rearm(fd) == 0 else {
          // The far-future alarm went off (in 2038) or the descriptor broke: stop watching.
          close(fd)
          return
        }
        changed()
      }
    }
  }

  /// Seconds between the wall clock and the boot clock (which counts suspend): it stays
  /// the same across a suspend and changes by the size of a step, which tells the two apart.
  public static func wallMinusBoot(wall: Double) -> Double {
    var boot = timespec()
    clock_gettime(CLOCK_BOOTTIME, &boot)
    return wall - (Double(boot.tv_sec) + Double(boot.tv_nsec) / 1e9)
  }
}
