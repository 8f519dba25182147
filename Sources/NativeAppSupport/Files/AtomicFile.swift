import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The one writer of small private files, replaced whole: a reader sees the old file or
/// the new one, never half of one, and a crash leaves one of the two.
public enum AtomicFile {
  /// Writes `bytes` to a 0600 temporary file beside `path` and renames it over `path`.
  ///
  /// `durable` flushes the file, and after the rename its directory, to disk, so that a
  /// power loss leaves the new file or the old one: for what must outlive the machine's
  /// next start (grants, another tool's configuration). Not for a tmpfs, which has no disk
  /// to wait for, nor for a cache, which can be fetched again.
  public static func write(_ bytes: [UInt8], to path: String, durable: Bool = true) throws {
    let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
    // Unique per writer, also between threads of one process; a leftover one after a crash
    // is harmless and readable by nobody else.
    let temporary = "\(path).\(getpid()).\(UInt64.random(in: 0...UInt64.max)).tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { throw TokenKitErrorFactory.io("create \(temporary)", errno: errno) }
    do {
      // The umask may have taken the owner's own bits away.
      guard fchmod(fd, 0o600) == 0 else { throw TokenKitErrorFactory.io("make \(temporary) private", errno: errno) }
      try writeAll(fd, bytes, path: temporary)
      guard !durable || fsync(fd) == 0 else {
        throw TokenKitErrorFactory.io("write \(temporary) to disk", errno: errno)
      }
    } catch {
      close(fd)
      unlink(temporary)
      throw error
    }
    guard close(fd) == 0 else {
      let code = errno
      unlink(temporary)
      throw TokenKitErrorFactory.io("write \(temporary)", errno: code)
    }
    guard rename(temporary, path) == 0 else {
      let code = errno
      unlink(temporary)
      throw TokenKitErrorFactory.io("replace \(path)", errno: code)
    }
    guard durable else { return }
    let directoryFD = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if directoryFD >= 0 {
      // Best effort: the new file is complete either way, only its name might be lost.
      _ = fsync(directoryFD)
      close(directoryFD)
    }
  }

  /// Writes all of `bytes` to the open file `fd` (`path` names it in an error), going on
  /// after a short write or a signal.
  public static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
    var written = 0
    while written < bytes.count {
      let count = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { throw TokenKitErrorFactory.io("write \(path)", errno: count < 0 ? errno : EIO) }
      written += count
    }
  }
}
