import CLinux

#if canImport(Glibc)
  import Glibc
#endif

/// Whether tokenctl keeps a grant journal (``FileGrantJournal``), and why: the one rule,
/// as a table, for every process that refreshes.
///
/// | `XDG_RUNTIME_DIR`        | Its file system         | Journal                          |
/// |--------------------------|-------------------------|----------------------------------|
/// | unset, or not absolute   | none                    | none: ``Reason/noRuntimeFolder`` |
/// | set                      | tmpfs, ramfs            | `$XDG_RUNTIME_DIR/tokenctl/journal` |
/// | set                      | any other, or unknown   | none: ``Reason/notInMemory``     |
///
/// A journal entry holds the account's only valid refresh token, in clear, for as long as
/// the keyring refuses it: it may be kept only where it never reaches a disk and goes
/// with the machine's memory. systemd-logind's `/run/user/UID` is such a place (a tmpfs,
/// the user's alone, emptied at logout). A runtime folder that someone set by hand
/// (an ssh or su session, a container, WSL) may be on ext4, overlayfs, 9p or drvfs: an
/// entry there would outlive the session on a disk, readable by whoever gets the disk or
/// its backups. So tokenctl keeps no journal there, as it keeps none in the cache folder
/// that stands in for a missing runtime folder; a fault between the server's answer and
/// the keyring's write then costs the grant (one new sign-in), never a refresh token left
/// on a disk. Lock files stay in the runtime folder either way: they hold no secret.
public enum JournalPlacement: Sendable, Hashable {
  /// A journal in `folder`, on a file system in memory.
  case kept(folder: String, filesystem: MemoryFilesystem)
  /// No journal, for `reason`.
  case notKept(Reason)

  /// The file systems that hold their files in memory only, by `statfs`'s `f_type`
  /// (linux/magic.h).
  public enum MemoryFilesystem: UInt32, Sendable, Hashable, CaseIterable {
    /// Memory that may be swapped, like any process's: systemd-logind's runtime folders
    /// and /dev/shm. Swap is the system's to encrypt, as it is for the keyring daemon.
    case tmpfs = 0x0102_1994
    /// Memory that is never swapped.
    case ramfs = 0x8584_58f6

    public var name: String { self == .tmpfs ? "tmpfs" : "ramfs" }
  }

  /// Why there is no journal.
  public enum Reason: Sendable, Hashable {
    /// `XDG_RUNTIME_DIR` is unset or relative: the cache folder stands in for it, on disk.
    case noRuntimeFolder
    /// The runtime folder is on the file system `filesystem` (`f_type`), which is not in
    /// memory; nil when `statfs` could not say.
    case notInMemory(filesystem: UInt32?)
  }

  /// The journal's folder, when there is one.
  public var folder: String? {
    if case .kept(let folder, _) = self { return folder }
    return nil
  }

  /// The rule: a journal in `runtime`'s `journal/` when `runtime` (tokenctl's folder in
  /// `XDG_RUNTIME_DIR`, nil without one) is on a file system in memory, whose `f_type`
  /// `filesystem` reads (``filesystemType(of:)``, nil when it cannot say).
  public static func decide(runtime: String?, filesystem: (String) -> UInt32?) -> JournalPlacement {
    guard let runtime else { return .notKept(.noRuntimeFolder) }
    let type = filesystem(runtime)
    guard let memory = type.flatMap(MemoryFilesystem.init(rawValue:)) else {
      return .notKept(.notInMemory(filesystem: type))
    }
    return .kept(folder: runtime + "/journal", filesystem: memory)
  }

  /// `statfs`'s `f_type` for `path`, or for its nearest ancestor that exists: a folder
  /// tokenctl has not made yet will be made on its parent's file system. nil when it
  /// cannot be read.
  public static func filesystemType(of path: String) -> UInt32? {
    var candidate = path
    while true {
      var info = statfs()
      if statfs(candidate, &info) == 0 { return UInt32(truncatingIfNeeded: info.f_type) }
      guard errno == ENOENT, candidate != "/", let slash = candidate.lastIndex(of: "/") else { return nil }
      candidate = slash == candidate.startIndex ? "/" : String(candidate[..<slash])
    }
  }
}
