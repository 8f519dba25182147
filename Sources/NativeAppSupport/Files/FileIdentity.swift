#if canImport(Glibc)
  import Glibc
#endif

/// What `lstat` says about a file and its directory, compared to tell whether the file
/// changed since it was last read, at the cost of two `lstat` calls: what lets the agent
/// keep a parsed grants file and read it again only when it changed.
///
/// The inode changes with every write (a new file is renamed over the old); size and
/// modification time catch an edit in place; ctime, mode and owner catch a `chmod` or
/// `chown`, which changes no byte but may make the file break its ``FilePolicy``.
public struct FileIdentity: Sendable, Equatable {
  /// Device, inode, size, mode, owner, and the modification and change times to the
  /// nanosecond, as numbers; nil when missing (or unreadable, which reads as missing and
  /// is looked at again).
  var file: [Int64]?
  var directory: [Int64]?

  public static func of(file: String, directory: String) -> FileIdentity {
    func status(_ path: String) -> [Int64]? {
      var info = stat()
      guard lstat(path, &info) == 0 else { return nil }
      return [
        Int64(bitPattern: UInt64(info.st_dev)), Int64(bitPattern: UInt64(info.st_ino)), Int64(info.st_size),
        Int64(info.st_mode), Int64(info.st_uid), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec),
        Int64(info.st_ctim.tv_sec), Int64(info.st_ctim.tv_nsec),
      ]
    }
    return FileIdentity(file: status(file), directory: status(directory))
  }
}
