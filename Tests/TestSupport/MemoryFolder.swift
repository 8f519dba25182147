import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A private folder on a file system in memory, removed (and unmounted) when released: the
/// runtime folder of a test that needs tokenctl's grant journal, which tokenctl keeps only
/// in memory (tmpfs or ramfs), whatever file system the temporary directory is on.
public final class MemoryFolder: Sendable {
  public let path: String
  private let mounted: Bool

  /// A new folder in /dev/shm, the tmpfs every Linux system has.
  public init() throws {
    path = "/dev/shm/tokenctl-test-\(UUID().uuidString)"
    mounted = false
    guard mkdir(path, 0o700) == 0 else {
      throw TestFailure("cannot create \(path): \(String(cString: strerror(errno)))")
    }
  }

  /// A tmpfs of its own, `size` bytes, mounted on a new folder in the temporary directory:
  /// one a test can fill. Mounting needs root.
  public init(mountingTmpfsOf size: Int) throws {
    path = FileManager.default.temporaryDirectory.appendingPathComponent("tokenctl-tmpfs-\(UUID().uuidString)").path
    guard mkdir(path, 0o700) == 0 else {
      throw TestFailure("cannot create \(path): \(String(cString: strerror(errno)))")
    }
    guard mount("tmpfs", path, "tmpfs", 0, "size=\(size),mode=0700") == 0 else {
      let reason = String(cString: strerror(errno))
      rmdir(path)
      throw TestFailure("cannot mount a tmpfs on \(path) (as root only): \(reason)")
    }
    mounted = true
  }

  /// Whether this process may mount one (``init(mountingTmpfsOf:)``).
  public static var canMount: Bool { geteuid() == 0 }

  /// Fills the file system up: a file of zeros written until it refuses more.
  public func fill() {
    guard let file = fopen(path + "/filler", "w") else { return }
    let block = [UInt8](repeating: 0, count: 4096)
    while fwrite(block, 1, block.count, file) == block.count, fflush(file) == 0 {}
    fclose(file)
  }

  deinit {
    if mounted { umount2(path, Int32(MNT_DETACH)) }
    try? FileManager.default.removeItem(atPath: path)
  }
}
