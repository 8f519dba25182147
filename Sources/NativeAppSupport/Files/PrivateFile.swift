#if canImport(Glibc)
  import Glibc
#endif

/// The one reader of small files: opened without blocking on a FIFO, checked against their
/// ``FilePolicy`` with `fstat` on the descriptor read (so the owner and mode checked are
/// those of the very file read, not of one swapped in after a check by path), and read up
/// to a limit, so that no file can make tokenctl read without end.
public enum PrivateFile {
  /// A file's bytes, with what `fstat` said of it when it was opened.
  public struct Contents {
    public var bytes: [UInt8]
    public var status: stat
  }

  /// The file at `path` (relative to the directory `directory` when given, as `openat`
  /// takes it), or nil when there is none.
  ///
  /// - Parameters:
  ///   - limit: the most bytes it may hold; a larger file is ``FileProblem/tooLarge``, or,
  ///     with `truncating`, read up to one byte more than `limit`, so that a parser can
  ///     say it is too large in its own words.
  ///   - policy: the owner and mode it must have (``FilePolicy``); nil for a file that is
  ///     the user's business, such as another tool's configuration.
  ///   - followingLinks: whether a symbolic link is followed. Not for files tokenctl keeps
  ///     itself, where a link could send it to any file the user may read; the user's own
  ///     settings may be links into a dotfiles checkout.
  public static func read(
    _ path: String, in directory: Int32 = AT_FDCWD, limit: Int, policy: FilePolicy?, followingLinks: Bool = false,
    truncating: Bool = false
  ) throws(FileProblem) -> Contents? {
    let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (followingLinks ? 0 : O_NOFOLLOW)
    let fd = openat(directory, path, flags)
    guard fd >= 0 else {
      switch errno {
      case ENOENT: return nil
      case ELOOP where !followingLinks: throw .symbolicLink
      case let code: throw .unreadable(code)
      }
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw .unreadable(errno) }
    if let policy {
      if let problem = policy.problem(info) { throw problem }
    } else if info.st_mode & S_IFMT != S_IFREG {
      throw .notARegularFile
    }
    let bytes = try readAll(fd, limit: truncating ? limit + 1 : limit, stoppingAfterLimit: truncating)
    return Contents(bytes: bytes, status: info)
  }

  /// The bytes of the open file `fd`: ``FileProblem/tooLarge`` when it holds more than
  /// `limit`, or, with `stoppingAfterLimit`, its first `limit` bytes.
  public static func readAll(_ fd: Int32, limit: Int, stoppingAfterLimit: Bool = false) throws(FileProblem) -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
      let wanted = stoppingAfterLimit ? min(chunk.count, limit - bytes.count) : chunk.count
      if wanted == 0 { return bytes }
      let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) }
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else { throw .unreadable(errno) }
      if count == 0 { return bytes }
      bytes += chunk[0..<count]
      // A file can grow while it is read, whatever its size said.
      if bytes.count > limit { throw .tooLarge }
    }
  }
}
