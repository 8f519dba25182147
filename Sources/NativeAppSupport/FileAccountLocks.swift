import Crypto
import Synchronization
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// Account locks as `flock(2)` locks on files in a private directory: they hold across
/// processes, are released by the kernel when a process dies (no stale lock after a
/// crash or SIGKILL), and cost no daemon.
public struct FileAccountLocks: AccountLocking {
  public var directory: String
  /// The outermost directory that is tokenctl's own, which must be private down to
  /// `directory` (``XDGDirectories/ensurePrivateDirectory(_:within:)``).
  public var root: String
  /// Where a refresh keeps a rotated grant until the keyring has it; nil for none.
  public var journal: (any GrantJournal)?

  public init(directory: String, root: String? = nil, journal: (any GrantJournal)? = nil) {
    self.directory = directory
    self.root = root ?? directory
    self.journal = journal
  }

  /// The locks tokenctl takes: one file per account in `directories.runtime`'s `locks/`.
  /// Every program that refreshes accounts of tokenctl's keyring groups must take these:
  /// two programs presenting one rotating refresh token at once can cost the account its
  /// grant, at a server that detects the reuse (RFC 9700 §4.14.2). With them, the journal
  /// in `directories.journal`, where there is one.
  public init(directories: XDGDirectories) {
    self.init(
      directory: directories.runtime + "/locks", root: directories.runtimeRoot,
      journal: directories.journal.map { FileGrantJournal(directory: $0, root: directories.runtimeRoot) })
  }

  /// How often a waiter tries again. Short next to a refresh's round trip (100 ms and
  /// more), long enough that 32 waiters cost nothing measurable.
  static let pollInterval: Duration = .milliseconds(10)

  public func acquire(_ key: AccountKey, group: String, timeout: Duration) async throws -> any AccountLockHandle {
    try XDGDirectories.ensurePrivateDirectory(directory, within: root)
    let path = path(for: key, group: group)
    // O_CLOEXEC: a hook or browser started while we hold the lock must not inherit it,
    // or the lock would outlive us in that child.
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { throw TokenKitErrorFactory.io("open the lock file \(path)", errno: errno) }
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while flock(fd, LOCK_EX | LOCK_NB) != 0 {
      let reason = errno
      guard reason == EWOULDBLOCK || reason == EINTR else {
        close(fd)
        throw TokenKitErrorFactory.io("lock \(path)", errno: reason)
      }
      guard clock.now < deadline else {
        close(fd)
        throw TokenKitError(
          .storeFailure, "another tokenctl has been refreshing \(key) for more than \(DurationText.format(timeout))",
          recovery: "Try again; if it persists, look for a hung tokenctl process.")
      }
      do { try await DeadlineTimer.shared.sleep(for: Self.pollInterval) } catch {
        close(fd)
        throw error
      }
    }
    return FileLockHandle(fd: fd)
  }
}

extension FileAccountLocks {
  /// Whether anyone holds `key`'s lock: a shared lock cannot be had while an exclusive one
  /// is held. A lock file that does not exist is held by nobody, and is not made here.
  public func isHeld(_ key: AccountKey, group: String) -> Bool {
    let fd = open(path(for: key, group: group), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    guard flock(fd, LOCK_SH | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
    flock(fd, LOCK_UN)
    return false
  }

  /// The lock file of `key` in `group`. The name must not leak who signs in where to
  /// other users of a shared /tmp-like place, nor break on odd characters in ids: a hash
  /// of group, type and id.
  public func path(for key: AccountKey, group: String) -> String {
    "\(directory)/\(Self.fileName(for: key, group: group)).lock"
  }

  /// The name of `key`'s files in `group` (its lock, its journal entry), without an
  /// extension: the first 16 bytes of the SHA-256 of group, type and id, in hexadecimal.
  static func fileName(for key: AccountKey, group: String) -> String {
    let digest = SHA256.hash(data: Array("\(group)\u{0}\(key.type)\u{0}\(key.id)".utf8))
    return digest.prefix(16).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
  }

  /// Whether `descriptor` is `key`'s lock file and this process holds its lock: what a
  /// refresh child checks of the descriptor it was handed.
  public func holds(_ descriptor: Int32, for key: AccountKey, group: String) -> Bool {
    var handed = stat()
    var expected = stat()
    guard fstat(descriptor, &handed) == 0, stat(path(for: key, group: group), &expected) == 0,
      handed.st_dev == expected.st_dev, handed.st_ino == expected.st_ino
    else { return false }
    // flock on a description that already holds the lock succeeds at once; held by
    // another description, it fails without waiting.
    return flock(descriptor, LOCK_EX | LOCK_NB) == 0
  }
}

/// A held `flock`; closing the descriptor releases it.
final class FileLockHandle: AccountLockHandle {
  // A mutex, because `release` may be called again, from another task.
  private let fd: Mutex<Int32>

  init(fd: Int32) { self.fd = Mutex(fd) }

  /// The locked descriptor, until released: a child that inherits it holds the lock too.
  var inheritableDescriptor: Int32? { fd.withLock { $0 >= 0 ? $0 : nil } }

  func release() {
    fd.withLock { fd in
      if fd >= 0 {
        // Unlock before closing: a child forked by another thread that has not reached
        // exec yet shares the descriptor, and closing alone would keep the lock until it
        // does.
        flock(fd, LOCK_UN)
        close(fd)
        fd = -1
      }
    }
  }

  deinit { release() }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
