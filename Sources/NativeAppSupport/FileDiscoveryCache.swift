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

  /// The document cached for `issuer`, if it is a private file of the user's
  /// (``FilePolicy/privateFile``): anything else is ignored, and replaced by the next store.
  public func load(issuer: String) -> (document: [UInt8], fetchedAt: Date)? {
    guard
      let file = try? PrivateFile.read(
        path(issuer), limit: HTTPTransportLimits.maximumBodySize, policy: .privateFile)
    else { return nil }
    return (file.bytes, Date(timeIntervalSince1970: TimeInterval(file.status.st_mtim.tv_sec)))
  }

  public func store(issuer: String, document: [UInt8], fetchedAt: Date) {
    guard (try? XDGDirectories.ensurePrivateDirectory(directory, within: root)) != nil else { return }
    let path = self.path(issuer)
    // Not durable: a document lost to a crash is fetched again.
    guard (try? AtomicFile.write(document, to: path, durable: false)) != nil else { return }
    var times = [
      timespec(tv_sec: Int(fetchedAt.timeIntervalSince1970), tv_nsec: 0),
      timespec(tv_sec: Int(fetchedAt.timeIntervalSince1970), tv_nsec: 0),
    ]
    _ = utimensat(AT_FDCWD, path, &times, 0)
  }

  /// The issuer's file: its name a hash (``HashedName``), since an issuer URL holds `/`.
  private func path(_ issuer: String) -> String {
    directory + "/" + HashedName.of(issuer) + ".json"
  }
}
