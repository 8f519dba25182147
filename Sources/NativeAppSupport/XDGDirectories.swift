import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// tokenctl's directories under the XDG Base Directory Specification, created private
/// (0700) on first use.
public struct XDGDirectories: Sendable, Hashable {
  /// `$XDG_CONFIG_HOME/tokenctl` (default `~/.config/tokenctl`).
  public var config: String
  /// `$XDG_CACHE_HOME/tokenctl` (default `~/.cache/tokenctl`).
  public var cache: String
  /// Where lock files go: `$XDG_RUNTIME_DIR/tokenctl`, a per-user tmpfs cleared at logout.
  /// When it is unset (SSH sessions without systemd-logind, containers, CI), the cache
  /// directory's `run/`: private to the user, and on the same machine as every process
  /// that shares the keyring.
  public var runtime: String

  public init(environment: [String: String]) {
    let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.passwdHome()
    func base(_ variable: String, _ fallback: String) -> String {
      // The spec says a relative path must be ignored.
      if let value = environment[variable], value.hasPrefix("/") { return value }
      return home + "/" + fallback
    }
    config = base("XDG_CONFIG_HOME", ".config") + "/tokenctl"
    cache = base("XDG_CACHE_HOME", ".cache") + "/tokenctl"
    if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
      self.runtime = runtime + "/tokenctl"
    } else {
      self.runtime = cache + "/run"
    }
  }

  /// Creates `path` and its missing parents; the directories tokenctl creates are 0700.
  /// An existing directory owned by someone else is refused: a lock or cache there could
  /// be read or planted by them.
  public static func ensurePrivateDirectory(_ path: String) throws {
    // A relative path stays relative: its components are created from the working directory.
    var partial = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/") {
      partial += "/" + component
      if mkdir(partial, 0o700) != 0 && errno != EEXIST {
        throw TokenKitErrorFactory.io("create the directory \(partial)", errno: errno)
      }
    }
    var info = stat()
    guard lstat(path, &info) == 0 else { throw TokenKitErrorFactory.io("inspect \(path)", errno: errno) }
    guard (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == geteuid() else {
      throw TokenKitError(
        .storeFailure, "\(path) is not a directory owned by you",
        recovery: "Remove it, or point XDG_CACHE_HOME / XDG_RUNTIME_DIR elsewhere.")
    }
  }

  private static func passwdHome() -> String {
    guard let entry = getpwuid(geteuid()), let dir = entry.pointee.pw_dir else { return "/" }
    return String(cString: dir)
  }
}

/// The errors of file operations, with the system's reason.
enum TokenKitErrorFactory {
  static func io(_ action: String, errno code: Int32) -> TokenKitError {
    TokenKitError(.storeFailure, "could not \(action): \(String(cString: strerror(code)))")
  }
}
