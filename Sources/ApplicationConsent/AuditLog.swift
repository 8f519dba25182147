import NativeAppSupport
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The audit log, `$XDG_STATE_HOME/tokenctl/audit.log` (0600): one line per token handed
/// out, refusal, prompt and grant change (``AuditEvent``). Never a token.
///
/// Lines are appended with one `write` under a lock of the file itself (``LockFile``), so the agent and the
/// commands can log at once. When the file would pass `sizeLimit` it is renamed to
/// `audit.log.1`, replacing the older one, and a new file is started: the log stays
/// bounded at twice the limit and keeps at least the last `sizeLimit` bytes of history.
public final class AuditLog: Sendable {
  /// audit.log.
  public let path: String
  private let directory: String
  private let sizeLimit: Int
  private let warn: (@Sendable (String) -> Void)?

  /// A mebibyte holds some ten thousand events: weeks of a busy desktop's requests.
  public static let defaultSizeLimit = 1 << 20

  public init(
    directories: XDGDirectories, sizeLimit: Int = defaultSizeLimit, warn: (@Sendable (String) -> Void)? = nil
  ) {
    directory = directories.state
    path = directories.state + "/audit.log"
    self.sizeLimit = sizeLimit
    self.warn = warn
  }

  /// Appends `event`. Never throws: a log that cannot be written must not stop a token
  /// from being handed out or a grant from being made; the failure goes to `warn`.
  public func record(_ event: AuditEvent) {
    do {
      try append(Array((event.line + "\n").utf8))
    } catch {
      warn?("could not write the audit log: \((error as? TokenKitError)?.message ?? "\(error)")")
    }
  }

  private func append(_ bytes: [UInt8]) throws {
    try XDGDirectories.ensurePrivateDirectory(directory)
    // Another process may rotate the file between our open and our lock: then the file we
    // hold is audit.log.1, and we open the new one.
    for _ in 0..<8 {
      // Non-blocking: a FIFO planted in its place must not hang the agent.
      let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
      guard fd >= 0 else { throw TokenKitErrorFactory.io("open \(path)", errno: errno) }
      defer { close(fd) }
      _ = try LockFile.lock(fd, path: path, waiting: .untilFree)
      var held = stat(), named = stat()
      guard fstat(fd, &held) == 0 else { throw TokenKitErrorFactory.io("inspect \(path)", errno: errno) }
      guard lstat(path, &named) == 0, named.st_ino == held.st_ino, named.st_dev == held.st_dev else { continue }
      switch FilePolicy.privateFile.problem(held) {
      case nil: break
      case .owner:
        throw TokenKitError(
          .unusableFile, "\(path) belongs to another user", recovery: "Delete it; tokenctl then starts a new one.")
      case .openToOthers(let mode):
        // Refused, not tightened (FilePolicy): what others read or wrote in it stays.
        throw TokenKitError(
          .unusableFile, "\(path) is open to other users (mode \(FileProblem.octal(mode))), and must be private to you",
          recovery: "Check it, then run `chmod 600 \(path)`; or delete it, and tokenctl starts a new one.")
      default:
        throw TokenKitError(.unusableFile, "\(path) is not a regular file", recovery: "Delete it.")
      }
      if held.st_size > 0 && Int(held.st_size) + bytes.count > sizeLimit {
        guard rename(path, path + ".1") == 0 else { throw TokenKitErrorFactory.io("rotate \(path)", errno: errno) }
        // Writers waiting for our lock hold the renamed file; they see that and open the new one.
        continue
      }
      try AtomicFile.writeAll(fd, bytes, path: path)
      return
    }
    throw TokenKitError(.unusableFile, "\(path) kept changing while tokenctl was appending to it")
  }
}
