#if canImport(Glibc)
  import Glibc
#endif

/// What `stat` says about a file and its directory, compared to tell whether the grants
/// file changed since it was last read, at the cost of two `lstat` calls.
///
/// The inode changes with every write (a new file is renamed over the old); size and
/// modification time catch an edit in place; ctime, mode and owner catch a `chmod` or
/// `chown`, which changes no byte but may make the file untrustworthy.
struct FileIdentity: Equatable {
  struct Status: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var mode: UInt32
    var owner: UInt32
    var modified: timespec
    var changed: timespec

    init(_ info: stat) {
      device = UInt64(info.st_dev)
      inode = UInt64(info.st_ino)
      size = Int64(info.st_size)
      mode = info.st_mode
      owner = info.st_uid
      modified = info.st_mtim
      changed = info.st_ctim
    }

    static func == (a: Status, b: Status) -> Bool {
      a.device == b.device && a.inode == b.inode && a.size == b.size && a.mode == b.mode && a.owner == b.owner
        && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
        && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
    }
  }

  /// nil when missing (or unreadable, which reads as missing and is looked at again).
  var file: Status?
  var directory: Status?

  static func of(file: String, directory: String) -> FileIdentity {
    func status(_ path: String) -> Status? {
      var info = stat()
      return lstat(path, &info) == 0 ? Status(info) : nil
    }
    return FileIdentity(file: status(file), directory: status(directory))
  }
}
