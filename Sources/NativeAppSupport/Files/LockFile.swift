import ProcessRuntime
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The one lock file: an exclusive `flock(2)` lock on a file in a private folder. It holds
/// across processes, is released by the kernel when its process dies (no stale lock after
/// a crash or SIGKILL), and costs no daemon. How long to wait for it is the caller's, by
/// who holds it and for how long (``Waiting``, ``lock(_:path:until:every:)``).
public enum LockFile {
  /// How a lock held by another is waited for, when the wait costs a thread.
  public enum Waiting: Sendable {
    /// Not at all: a lock held elsewhere means someone else does the job (a second agent
    /// for one socket).
    case no
    /// Until it is free, blocking the thread: for locks held a few milliseconds around a
    /// file's change (the grants file, a line of the audit log).
    case untilFree
  }

  /// Opens the lock file at `path`, creating it 0600, and following no link: a link could
  /// make tokenctl create or lock a file elsewhere. Close-on-exec, so that a hook or a
  /// browser started while it is held does not inherit it, and the lock outlive us in it.
  public static func open(_ path: String) throws -> Int32 {
    let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { throw TokenKitErrorFactory.io("open the lock file \(path)", errno: errno) }
    return fd
  }

  /// Takes the exclusive lock of `fd` (which `path` names in errors): true when taken,
  /// false when another holds it and `waiting` is ``Waiting/no``.
  public static func lock(_ fd: Int32, path: String, waiting: Waiting) throws -> Bool {
    while flock(fd, LOCK_EX | (waiting == .no ? LOCK_NB : 0)) != 0 {
      switch errno {
      case EINTR: continue
      case EWOULDBLOCK where waiting == .no: return false
      case let code: throw TokenKitErrorFactory.io("lock \(path)", errno: code)
      }
    }
    return true
  }

  /// Takes the exclusive lock of `fd`, trying again every `interval` until `deadline`:
  /// false once it passed. For locks held for a server's round trip (an account's
  /// refresh), by waiters that are tasks: a task must not hold one of the cooperative
  /// pool's few threads in `flock`. Cancelling the task ends the wait with an error.
  public static func lock(
    _ fd: Int32, path: String, until deadline: ContinuousClock.Instant, every interval: Duration
  ) async throws -> Bool {
    while try !lock(fd, path: path, waiting: .no) {
      guard ContinuousClock.now < deadline else { return false }
      try await DeadlineTimer.shared.sleep(for: interval)
    }
    return true
  }

  /// Whether anyone holds the lock of the file at `path`: a shared lock cannot be had
  /// while an exclusive one is held. A file that does not exist is held by nobody, and is
  /// not made here.
  public static func isHeld(_ path: String) -> Bool {
    let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    guard flock(fd, LOCK_SH | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
    flock(fd, LOCK_UN)
    return false
  }

  /// Whether `fd` is the lock file at `path` and its lock is held through it: what a child
  /// checks of a descriptor it was handed.
  public static func holds(_ fd: Int32, path: String) -> Bool {
    guard let handed = FileID.of(descriptor: fd), FileID.of(path) == handed else { return false }
    // flock on a description that already holds the lock succeeds at once; held by
    // another description, it fails without waiting.
    return flock(fd, LOCK_EX | LOCK_NB) == 0
  }
}
