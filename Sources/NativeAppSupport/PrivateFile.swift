#if canImport(Glibc)
  import Glibc
#endif

/// Reading and writing small files that only their owner may read (0600).
package enum PrivateFile {
  /// The file's bytes, or nil when it cannot be read or exceeds `limit`.
  package static func read(_ path: String, limit: Int) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
      let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else { return nil }
      if count == 0 { return bytes }
      bytes += chunk[0..<count]
      if bytes.count > limit { return nil }
    }
  }

  /// Writes through a temporary file and a rename, so that a reader never sees half a
  /// file and a crash leaves the old one.
  package static func writeAtomically(_ path: String, _ bytes: [UInt8]) -> Bool {
    // Unique per writer, also between threads of one process.
    let temporary = "\(path).\(getpid()).\(UInt64.random(in: 0...UInt64.max)).tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { return false }
    var written = 0
    while written < bytes.count {
      let count = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else {
        close(fd)
        unlink(temporary)
        return false
      }
      written += count
    }
    close(fd)
    guard rename(temporary, path) == 0 else {
      unlink(temporary)
      return false
    }
    return true
  }
}
