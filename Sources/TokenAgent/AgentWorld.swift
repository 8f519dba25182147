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

  /// What one file or directory the world depends on was: nil fields for none there.
  /// Compared on every request, so numbers, not text: formatting them cost a tenth of
  /// the agent's time per answer (issue 26).
  struct FileStamp: Equatable, Sendable {
    var path: String
    var inode: UInt = 0
    var size = 0
    var modified = timespec()
    var mode: UInt32 = 0
    var exists = false

    static func == (a: FileStamp, b: FileStamp) -> Bool {
      a.path == b.path && a.exists == b.exists && a.inode == b.inode && a.size == b.size
        && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec && a.mode == b.mode
    }
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
      guard stat(path, &info) == 0 else { return FileStamp(path: path) }
      return FileStamp(
        path: path, inode: UInt(info.st_ino), size: Int(info.st_size), modified: info.st_mtim, mode: info.st_mode,
        exists: true)
    }
  }
}
