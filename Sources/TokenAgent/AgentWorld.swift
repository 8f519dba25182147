import AccountTypeFiles
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// tokenctl as a client's environment makes it: the account types (built-in ones and the
/// type files its `XDG_CONFIG_*` point to) and config.toml, read as the command line would
/// read them, and read again when one of the files changes.
///
/// config.toml is read up front but its failure is kept, not thrown: the command line
/// reads it only on the paths that need it (a valid token does not), and the agent throws
/// it on the same paths, so that a broken file fails the same requests either way.
struct AgentWorld: Sendable {
  /// The agent's environment with the client's context variables in place of its own.
  let environment: [String: String]
  /// The built-in types and the valid type files.
  let registry: AccountTypeRegistry
  /// One line per type file that was skipped, as the command line warns of them.
  let typeWarnings: [String]
  private let configuration: Result<(Configuration, AccountTypeRegistry), any Error>
  /// What the files were when read: their paths, inode, size and modification time.
  let stamp: [FileStamp]

  init(base: AccountTypeRegistry, environment: [String: String]) {
    self.environment = environment
    stamp = Self.stamp(environment: environment)
    var warnings: [String] = []
    registry = UserTypes.registry(adding: base, environment: environment) { warnings.append($0) }
    typeWarnings = warnings
    do {
      let file = try Configuration.load(environment: environment)
      configuration = .success((file, try registry.applying(file.types)))
    } catch {
      configuration = .failure(error)
    }
  }

  /// config.toml and the registry with its settings applied, or the error reading it gave.
  func configured() throws -> (configuration: Configuration, registry: AccountTypeRegistry) {
    try configuration.get()
  }

  /// Whether the files this world was read from are still what they were.
  func isCurrent() -> Bool { Self.stamp(environment: environment) == stamp }

  /// What one file or directory the world depends on was, as `stat` (links followed, as
  /// the files are read) says: `FileIdentity` is `lstat`'s, of a file and its folder.
  /// Compared on every request, so numbers, not text: formatting them cost a tenth of
  /// the agent's time per answer. Owner, mode and change time too, since a
  /// `chown` or `chmod` may make a file break the settings files' policy.
  struct FileStamp: Equatable, Sendable {
    var path: String
    /// Inode, size, mode, owner, modification and change time; nil for none there.
    var status: [Int64]?
  }

  /// One stamp per file or directory that the world depends on.
  static func stamp(environment: [String: String]) -> [FileStamp] {
    var paths = [Configuration.path(environment: environment)]
    for directory in UserTypes.directories(environment: environment) {
      paths.append(directory)
      if let handle = opendir(directory) {
        while let entry = readdir(handle) {
          let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
          }
          if name != "." && name != ".." { paths.append(directory + "/" + name) }
        }
        closedir(handle)
      }
    }
    return paths.sorted().map { path in
      var info = stat()
      guard stat(path, &info) == 0 else { return FileStamp(path: path, status: nil) }
      return FileStamp(
        path: path,
        status: [
          Int64(bitPattern: UInt64(info.st_ino)), Int64(info.st_size), Int64(info.st_mode), Int64(info.st_uid),
          Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec), Int64(info.st_ctim.tv_sec),
          Int64(info.st_ctim.tv_nsec),
        ])
    }
  }
}
