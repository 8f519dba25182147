import Crypto
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// Discovery documents cached as files, one per issuer, under the XDG cache directory.
///
/// The documents are public, so the cache holds nothing secret; it is private anyway,
/// because a planted document would redirect our codes. Failures to read or write are
/// not errors: the cache only saves a round trip.
public struct FileDiscoveryCache: DiscoveryCache {
  public var directory: String
  /// The outermost directory that is tokenctl's own, which must be private down to
  /// `directory` (``XDGDirectories/ensurePrivateDirectory(_:within:)``).
  public var root: String

  public init(directory: String, root: String? = nil) {
    self.directory = directory
    self.root = root ?? directory
  }

  /// tokenctl's cache, in `directories.cache`'s `discovery/`, which other programs
  /// sharing its accounts may share too.
  public init(directories: XDGDirectories) {
    self.init(directory: directories.cache + "/discovery", root: directories.cache)
  }

  public func load(issuer: String) -> (document: [UInt8], fetchedAt: Date)? {
    let path = self.path(issuer)
    var info = stat()
    guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid(),
      info.st_size <= HTTPTransportLimits.maximumBodySize,
      let bytes = PrivateFile.read(path, limit: HTTPTransportLimits.maximumBodySize)
    else { return nil }
    return (bytes, Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec)))
  }

  public func store(issuer: String, document: [UInt8], fetchedAt: Date) {
    guard (try? XDGDirectories.ensurePrivateDirectory(directory, within: root)) != nil else { return }
    let path = self.path(issuer)
    guard PrivateFile.writeAtomically(path, document) else { return }
    var times = [
      timespec(tv_sec: Int(fetchedAt.timeIntervalSince1970), tv_nsec: 0),
      timespec(tv_sec: Int(fetchedAt.timeIntervalSince1970), tv_nsec: 0),
    ]
    _ = utimensat(AT_FDCWD, path, &times, 0)
  }

  private func path(_ issuer: String) -> String {
    let digest = SHA256.hash(data: Array(issuer.utf8))
    return directory + "/"
      + digest.prefix(16).map { byte in
        let hex = String(byte, radix: 16)
        return hex.count == 1 ? "0" + hex : hex
      }.joined() + ".json"
  }
}
