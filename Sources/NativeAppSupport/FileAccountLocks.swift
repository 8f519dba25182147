import Synchronization
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// Account locks as lock files (``LockFile``) in a private directory, one per account,
/// waited for by polling: a refresh holds one for a server's round trip.
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
    let fd = try LockFile.open(path)
    do {
      let deadline = ContinuousClock.now.advanced(by: timeout)
      guard try await LockFile.lock(fd, path: path, until: deadline, every: Self.pollInterval) else {
        throw TokenKitError(
          .internalFailure, "another tokenctl has been refreshing \(key) for more than \(DurationText.format(timeout))",
          recovery: "Try again; if it persists, look for a hung tokenctl process.")
      }
    } catch {
      close(fd)
      throw error
    }
    return FileLockHandle(fd: fd)
  }
}

extension FileAccountLocks {
  /// Whether anyone holds `key`'s lock (``LockFile/isHeld(_:)``).
  public func isHeld(_ key: AccountKey, group: String) -> Bool {
    LockFile.isHeld(path(for: key, group: group))
  }

  /// The lock file of `key` in `group`. The name must not leak who signs in where to
  /// other users of a shared /tmp-like place, nor break on odd characters in ids: a hash
  /// of group, type and id.
  public func path(for key: AccountKey, group: String) -> String {
    "\(directory)/\(Self.fileName(for: key, group: group)).lock"
  }

  /// The name of `key`'s files in `group` (its lock, its journal entry), without an
  /// extension (``HashedName``).
  static func fileName(for key: AccountKey, group: String) -> String {
    HashedName.of(group, key.type, key.id)
  }

  /// Whether `descriptor` is `key`'s lock file and this process holds its lock: what a
  /// refresh child checks of the descriptor it was handed.
  public func holds(_ descriptor: Int32, for key: AccountKey, group: String) -> Bool {
    LockFile.holds(descriptor, path: path(for: key, group: group))
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
