#if canImport(Glibc)
  import Glibc
#endif

/// Which owners and modes make a file or directory safe to use, by what it is for: the one
/// table of them, for every file tokenctl reads, writes or keeps its locks in.
///
/// | Level                 | Kind      | Owner        | Must not have | For                                    |
/// |-----------------------|-----------|--------------|---------------|----------------------------------------|
/// | ``privateDirectory``  | directory | the user     | `go=rwx`      | tokenctl's own folders                 |
/// | ``privateFile``       | file      | the user     | `go=rwx`      | what tokenctl writes for itself        |
/// | ``settings``          | file      | user or root | `go=w`        | what tells tokenctl what to do         |
/// | ``secretSettings``    | file      | user or root | `go=rwx`      | the same, holding a client secret      |
///
/// A file or directory that breaks its level is refused, never tightened: the user or
/// someone else made it so, whatever others may have read, planted or changed in it while
/// it was open stays, and a `chmod` would hide that it happened. The caller says what was
/// refused and the command that fixes it (``FileProblem``). The levels are the only ones:
/// no caller makes a policy of its own.
public struct FilePolicy: Sendable, Hashable {
  /// Whether the path must be a directory or a regular file: never a symbolic link, a
  /// FIFO (which would block a reader) or a device.
  public let isDirectory: Bool
  /// Whether root may own it besides the user: root may change any file anyway, and the
  /// system's own files (a type directory under /usr, a sandbox's `/.flatpak-info` made
  /// by a setuid bubblewrap) are root's.
  public let mayBelongToRoot: Bool
  /// The permission bits it must not have.
  public let forbiddenBits: mode_t

  /// tokenctl's own folders (runtime, state, cache and what is below them): whoever may
  /// enter one can read the names of its lock files, and whoever may write one can plant
  /// or swap a lock, a journal entry or a grants file.
  public static let privateDirectory = FilePolicy(isDirectory: true, mayBelongToRoot: false, forbiddenBits: 0o077)
  /// What tokenctl writes for itself and reads back (grants, the audit log, journal
  /// entries, cached discovery documents): made 0600, so anything else was changed by
  /// someone, and a journal entry holds a refresh token, the audit log who got which token,
  /// the grants which program may.
  public static let privateFile = FilePolicy(isDirectory: false, mayBelongToRoot: false, forbiddenBits: 0o077)
  /// Files whose content decides what tokenctl does, written by the user or the system
  /// (config.toml, account type files, a sandbox's `/.flatpak-info`): whoever may change
  /// one sends sign-ins elsewhere or names an app, as ssh reasons of `~/.ssh/config`; that
  /// others may read one does no harm.
  public static let settings = FilePolicy(isDirectory: false, mayBelongToRoot: true, forbiddenBits: 0o022)
  /// A settings file holding a client secret: not even readable by others, as ssh requires
  /// of private keys, since a secret others can read is already leaked.
  public static let secretSettings = FilePolicy(isDirectory: false, mayBelongToRoot: true, forbiddenBits: 0o077)

  /// What is wrong with a file whose `lstat` or `fstat` is `info` at this level, in the
  /// order a fix needs: what it is, then whose, then its mode; nil when nothing is.
  public func problem(_ info: stat) -> FileProblem? {
    let kind = info.st_mode & S_IFMT
    if kind == S_IFLNK { return .symbolicLink }
    if kind != (isDirectory ? S_IFDIR : S_IFREG) { return isDirectory ? .notADirectory : .notARegularFile }
    if !allowsOwner(info.st_uid) { return .owner(info.st_uid, mode: info.st_mode & 0o7777) }
    if info.st_mode & forbiddenBits != 0 { return .openToOthers(mode: info.st_mode & 0o7777) }
    return nil
  }

  /// Whether `owner` may own a file of this level.
  public func allowsOwner(_ owner: uid_t) -> Bool {
    owner == geteuid() || (mayBelongToRoot && owner == 0)
  }

  /// Whether `mode` has none of the bits this level forbids.
  public func allowsMode(_ mode: mode_t) -> Bool {
    mode & forbiddenBits == 0
  }
}
