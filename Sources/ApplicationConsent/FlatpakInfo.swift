import NativeAppSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The app id of a Flatpak sandbox, from the `/.flatpak-info` at its root, read as
/// xdg-desktop-portal reads it (`open_flatpak_info`, xdp-app-info-flatpak.c): through the
/// peer's `/proc/PID/root`, so that the file is the one of the peer's own mount namespace.
///
/// Flatpak writes the file when it sets the sandbox up, and an app cannot change it: it
/// is read-only on a read-only root, and the sandbox can make no mount or user namespace
/// of its own. Flatpak makes it a regular file, 0600, belonging to the user (or to root
/// with a setuid bubblewrap), at most a few kilobytes. Anything else is not Flatpak's
/// doing, and names no app:
///
/// - A symbolic link is not followed (`O_NOFOLLOW`): an absolute link is resolved against
///   *our* root, not the sandbox's, so it could make us read any file of the host.
/// - A FIFO or device would block or misread: only a regular file is read, opened
///   non-blocking, and only up to ``sizeLimit``.
/// - A file that belongs to someone else, or that others may write, is refused.
public enum FlatpakInfo {
  /// Why a sandbox's `/.flatpak-info` names no app that tokenctl can trust.
  public enum Problem: Sendable, Equatable, Error {
    /// A symbolic link, which flatpak never makes.
    case symbolicLink
    /// Not a regular file.
    case notRegularFile
    /// It belongs to this uid, neither the user nor root.
    case owner(UInt32)
    /// Others than its owner may write it (its mode).
    case writableByOthers(UInt32)
    /// Larger than ``sizeLimit``.
    case tooLarge
    /// It could not be opened or read (an errno).
    case unreadable(Int32)
    /// Not a keyfile: a line that is neither a group, a `key=value` nor a comment, a key
    /// given twice, or text that is not UTF-8.
    case malformed
    /// No `name` in its `[Application]` group (or `[Runtime]`, for a runtime run alone).
    case noAppID
    /// A `name` that is no Flatpak app id.
    case invalidAppID
  }

  /// Flatpak's files are a few kilobytes (the app's permissions included); this is far
  /// beyond any, and a bound on what a sandbox can make us read.
  public static let sizeLimit = 256 * 1024

  /// The app id in the `.flatpak-info` of the directory `root` (a descriptor of
  /// `/proc/PID/root`); nil when there is no such file, so the root is no Flatpak
  /// sandbox's.
  public static func appID(inRoot root: Int32) -> Result<FlatpakAppID, Problem>? {
    do throws(FileProblem) {
      // Flatpak's own file, or the system's: FilePolicy's settings level.
      guard let file = try PrivateFile.read(".flatpak-info", in: root, limit: sizeLimit, policy: .settings) else {
        return nil
      }
      return appID(in: file.bytes)
    } catch {
      switch error {
      case .symbolicLink: return .failure(.symbolicLink)
      case .notARegularFile, .notADirectory: return .failure(.notRegularFile)
      case .owner(let owner, _): return .failure(.owner(owner))
      case .openToOthers(let mode): return .failure(.writableByOthers(mode))
      case .tooLarge: return .failure(.tooLarge)
      case .unreadable(let code): return .failure(.unreadable(code))
      }
    }
  }

  /// The app id in the keyfile `bytes`: `name` of `[Runtime]` when there is such a group
  /// (a runtime run on its own), else of `[Application]`, as xdg-desktop-portal takes it.
  ///
  /// A keyfile as GLib's GKeyFile reads it: groups in brackets, `key=value` lines with
  /// spaces around the `=` ignored, `#` comments and blank lines; anything else makes the
  /// whole file malformed, as it does for GKeyFile. Stricter in one point: a key given
  /// twice in a group, which GKeyFile would quietly take the last of, is malformed too.
  public static func appID(in bytes: [UInt8]) -> Result<FlatpakAppID, Problem> {
    guard String(validating: bytes, as: UTF8.self) != nil else { return .failure(.malformed) }
    var groups: [String: [String: String]] = [:]
    var group: String?
    // Lines by their bytes: to Swift, "\r\n" is one character, which no split on "\n" finds.
    for bytes in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
      let line = String(decoding: bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes, as: UTF8.self)
      let trimmed = line.drop { $0 == " " || $0 == "\t" }
      if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
      if trimmed.hasPrefix("[") {
        guard trimmed.hasSuffix("]"), trimmed.count >= 3 else { return .failure(.malformed) }
        let name = String(trimmed.dropFirst().dropLast())
        guard !name.contains("[") && !name.contains("]") else { return .failure(.malformed) }
        group = name
        groups[name, default: [:]] = groups[name, default: [:]]
        continue
      }
      guard let current = group, let equals = trimmed.firstIndex(of: "=") else { return .failure(.malformed) }
      let key = String(trimmed[..<equals].reversed().drop { $0 == " " || $0 == "\t" }.reversed())
      let value = String(trimmed[trimmed.index(after: equals)...].drop { $0 == " " || $0 == "\t" })
      guard !key.isEmpty else { return .failure(.malformed) }
      guard groups[current]?[key] == nil else { return .failure(.malformed) }
      groups[current]?[key] = value
    }
    guard let name = (groups["Runtime"] ?? groups["Application"])?["name"] else { return .failure(.noAppID) }
    guard let id = FlatpakAppID(name) else { return .failure(.invalidAppID) }
    return .success(id)
  }
}
