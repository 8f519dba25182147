import TokenKit
import XDGRuntime

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
  /// `$XDG_STATE_HOME/tokenctl` (default `~/.local/state/tokenctl`): what must outlive a
  /// cache clean-up but is no configuration, such as the applications' grants and the
  /// audit log.
  public var state: String
  /// Where lock files go: `$XDG_RUNTIME_DIR/tokenctl`, whatever its file system (a lock
  /// file holds no secret); systemd-logind's is a per-user tmpfs cleared at logout.
  /// When it is unset (SSH sessions without systemd-logind, containers, CI), the cache
  /// directory's `run/`: private to the user, and on the same machine as every process
  /// that shares the keyring.
  public var runtime: String
  /// The outermost directory of `runtime` that is tokenctl's own, and so must be private
  /// with everything below it: `runtime` itself, or `cache` when `runtime` falls back
  /// under it.
  public var runtimeRoot: String
  /// Whether a refresh keeps a rotated grant until the keyring has it, where, and why not
  /// (``JournalPlacement``: only in a runtime folder in memory).
  public var journalPlacement: JournalPlacement
  /// The folder of the grant journal (``FileGrantJournal``), `$XDG_RUNTIME_DIR/tokenctl/journal`,
  /// when ``journalPlacement`` keeps one; nil when it does not.
  public var journal: String? { journalPlacement.folder }

  /// The directories `environment` names. `filesystem` reads the file system of the
  /// runtime folder (``JournalPlacement/filesystemType(of:)``): one `statfs`.
  public init(
    environment: [String: String], filesystem: (String) -> UInt32? = JournalPlacement.filesystemType(of:)
  ) {
    let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.passwdHome()
    func base(_ variable: String, _ fallback: String) -> String {
      // The spec says a relative path must be ignored.
      if let value = environment[variable], value.hasPrefix("/") { return value }
      return home + "/" + fallback
    }
    config = base("XDG_CONFIG_HOME", ".config") + "/tokenctl"
    cache = base("XDG_CACHE_HOME", ".cache") + "/tokenctl"
    state = base("XDG_STATE_HOME", ".local/state") + "/tokenctl"
    let runtime = XDGRuntime.tokenctlFolder { environment[$0] }
    if let runtime {
      self.runtime = runtime
      runtimeRoot = runtime
    } else {
      self.runtime = cache + "/run"
      runtimeRoot = cache
    }
    journalPlacement = JournalPlacement.decide(runtime: runtime, filesystem: filesystem)
  }

  /// Creates `path` and its missing parents, 0700 whatever the umask, and checks that
  /// `path`, and every directory from `root` down to it, is a safe private directory
  /// (``checkPrivateDirectory(_:)``).
  ///
  /// `root` is the outermost directory that is tokenctl's own, `path` itself when nil: a
  /// `tokenctl` directory that is a symlink would carry everything below it to wherever it
  /// points. The directories above `root` (`$XDG_RUNTIME_DIR`, `~/.cache`) are the user's
  /// to arrange, a symlink included, and are only created when missing.
  ///
  /// A directory that exists but is open to others is refused, not tightened: the user
  /// made it so, and what others may have planted in it would stay.
  public static func ensurePrivateDirectory(_ path: String, within root: String? = nil) throws {
    let components = path.split(separator: "/")
    let rootComponents = (root ?? path).split(separator: "/")
    // A root that is not an ancestor of `path` is a caller's mistake; the least it can
    // mean is `path` itself.
    let isAncestor =
      (root.map { $0.hasPrefix("/") == path.hasPrefix("/") } ?? true) && components.starts(with: rootComponents)
    let firstPrivate = isAncestor ? rootComponents.count - 1 : components.count - 1
    // A relative path stays relative: its components are created from the working directory.
    var partial = path.hasPrefix("/") ? "" : "."
    for (index, component) in components.enumerated() {
      partial += "/" + component
      if mkdir(partial, 0o700) == 0 {
        try makePrivate(partial)
      } else if errno != EEXIST {
        throw TokenKitErrorFactory.io("create the directory \(partial)", errno: errno)
      }
      if index >= firstPrivate { try checkPrivateDirectory(partial) }
    }
  }

  /// Checks that `path` is a safe private directory (``FilePolicy/privateDirectory``): a
  /// directory itself, not a symlink to one; owned by this user; and closed to group and
  /// others. Refused, never tightened (``ensurePrivateDirectory(_:within:)``).
  public static func checkPrivateDirectory(_ path: String) throws {
    var info = stat()
    guard lstat(path, &info) == 0 else { throw TokenKitErrorFactory.io("inspect \(path)", errno: errno) }
    let elsewhere = "Remove it, or point XDG_CACHE_HOME and XDG_RUNTIME_DIR elsewhere."
    switch FilePolicy.privateDirectory.problem(info) {
    case nil: return
    case .symbolicLink:
      throw TokenKitError(
        .unusableFile, "\(path) is a symbolic link, and tokenctl keeps its files only in a directory of its own",
        recovery: "Remove the link (`rm \(path)`); tokenctl then creates a private directory in its place.")
    case .owner(let owner, _):
      throw TokenKitError(
        .unusableFile, "\(path) belongs to another user (owner \(UserName.describe(owner)))", recovery: elsewhere)
    case .openToOthers(let mode):
      throw TokenKitError(
        .unusableFile, "\(path) is open to other users (mode \(FileProblem.octal(mode))), and must be private to you",
        recovery: "Run `chmod 700 \(path)`.")
    default:
      throw TokenKitError(.unusableFile, "\(path) is not a directory", recovery: elsewhere)
    }
  }

  /// Sets a directory this process just created to 0700: the umask may have taken the
  /// owner's own bits away.
  ///
  /// By path, because Linux has no `lchmod` and a descriptor cannot be opened on a
  /// directory the umask left unreadable. Swapping the new directory for a link needs write
  /// access to its parent, which only the user has: a directory of tokenctl's own, checked
  /// just after, or one of the user's own base directories.
  private static func makePrivate(_ path: String) throws {
    guard chmod(path, 0o700) == 0 else { throw TokenKitErrorFactory.io("make \(path) private", errno: errno) }
  }

  private static func passwdHome() -> String {
    guard let entry = getpwuid(geteuid()), let dir = entry.pointee.pw_dir else { return "/" }
    return String(cString: dir)
  }
}

/// The errors of file operations, with the system's reason.
public enum TokenKitErrorFactory {
  /// "could not `action`: reason"; a file that cannot be had is an unusable one, unless
  /// the caller knows better what failed (`kind`: an agent's socket is its start).
  public static func io(
    _ action: String, errno code: Int32, kind: TokenKitError.Code = .unusableFile
  ) -> TokenKitError {
    TokenKitError(kind, "could not \(action): \(String(cString: strerror(code)))")
  }
}
