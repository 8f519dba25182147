#if canImport(Glibc)
  import Glibc
#endif

/// A file by its device and inode, as `stat` gives them in the agent's own mount
/// namespace: what tells one executable from another when their paths say the same (a
/// file bind-mounted over a path in a namespace of its own, a file replaced at its path)
/// and tells them alike when their paths differ (a symbolic or hard link, a bind mount).
public struct FileID: Sendable, Hashable {
  public var device: UInt64
  public var inode: UInt64

  public init(device: UInt64, inode: UInt64) {
    self.device = device
    self.inode = inode
  }

  init(_ info: stat) {
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
  }

  /// The file `path` names now, every link followed as `exec` follows them; nil when
  /// there is none. For `/proc/PID/exe` it is the file the process runs, wherever that is.
  public static func of(_ path: String) -> FileID? {
    var info = stat()
    return stat(path, &info) == 0 ? FileID(info) : nil
  }

  /// The file `name` in the folder open at `folder` is, a link at `name` followed.
  public static func of(_ name: String, inFolder folder: Int32) -> FileID? {
    var info = stat()
    return fstatat(folder, name, &info, 0) == 0 ? FileID(info) : nil
  }

  /// The file open at descriptor `fd`; nil when it is no open descriptor.
  public static func of(descriptor fd: Int32) -> FileID? {
    var info = stat()
    return fstat(fd, &info) == 0 ? FileID(info) : nil
  }
}
