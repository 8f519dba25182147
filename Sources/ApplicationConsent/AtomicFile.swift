import NativeAppSupport
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// Small private files replaced whole: a reader sees the old file or the new one, never
/// half of one, and a crash or power loss leaves one of the two.
public enum AtomicFile {
  /// Writes `bytes` to a 0600 temporary file beside `path`, flushes it to disk, renames it
  /// over `path` and flushes the directory, so that the rename itself survives a crash.
  public static func write(_ bytes: [UInt8], to path: String) throws {
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
      guard fsync(fd) == 0 else { throw TokenKitErrorFactory.io("write \(temporary) to disk", errno: errno) }
      guard close(fd) == 0 else { throw TokenKitErrorFactory.io("write \(temporary)", errno: errno) }
    } catch {
      close(fd)
      unlink(temporary)
      throw error
    }
    guard rename(temporary, path) == 0 else {
      let code = errno
      unlink(temporary)
      throw TokenKitErrorFactory.io("replace \(path)", errno: code)
    }
    let directoryFD = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if directoryFD >= 0 {
      // Best effort: the new file is complete either way, only its name might be lost.
      _ = fsync(directoryFD)
      close(directoryFD)
    }
  }

  static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
    var written = 0
    while written < bytes.count {
      let count = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { throw TokenKitErrorFactory.io("write \(path)", errno: count < 0 ? errno : EIO) }
      written += count
    }
  }

  /// The bytes of the open file `fd`, or nil when it holds more than `limit`.
  public static func readAll(_ fd: Int32, limit: Int, path: String) throws -> [UInt8]? {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
      let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else { throw TokenKitErrorFactory.io("read \(path)", errno: errno) }
      if count == 0 { return bytes }
      bytes += chunk[0..<count]
      if bytes.count > limit { return nil }
    }
  }
}
