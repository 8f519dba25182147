#if canImport(Glibc)
  import Glibc
#endif

/// Why a file was not read: it breaks its ``FilePolicy``, is too large, or the system
/// said no. The facts only; each caller words them for its file, with the fix.
public enum FileProblem: Error, Sendable, Equatable {
  /// A symbolic link, where links are not followed.
  case symbolicLink
  /// Not a regular file (a directory, a FIFO, a device).
  case notARegularFile
  /// Not a directory.
  case notADirectory
  /// It belongs to this uid, whom its level does not allow; with its mode.
  case owner(uid_t, mode: mode_t)
  /// It has permission bits its level forbids (its mode).
  case openToOthers(mode: mode_t)
  /// It holds more than the reader's limit.
  case tooLarge
  /// The system refused to open or read it (an errno).
  case unreadable(Int32)

  /// Whether a mode lets group or others write, as opposed to only read.
  public static func isWritableByOthers(_ mode: mode_t) -> Bool { mode & 0o022 != 0 }

  /// The mode in octal, as `ls` and `chmod` write it.
  public static func octal(_ mode: mode_t) -> String { String(mode & 0o7777, radix: 8) }
}
