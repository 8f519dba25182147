import NativeAppSupport
import TOMLReader
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// A file tokenctl takes settings from: config.toml (tokenctl-config(5)) and the account
/// type files (tokenctl-types(5)), read with the owner and mode of the very file read.
///
/// One line of such a file (an issuer, an endpoint, a plugin's authority host, the hook)
/// sends the next sign-in to another server or runs a command as the user. So, as ssh
/// does with its config file, ``checkPermissions(holdsSecret:)`` refuses one that someone
/// other than the user may change, whatever it holds.
struct SettingsFile {
  var path: String
  var bytes: [UInt8]
  var mode: mode_t
  var owner: uid_t

  /// Reads the file at `path`, or returns nil if it does not exist (``PrivateFile``): a
  /// link is followed (settings may live in a dotfiles checkout), a FIFO cannot hang
  /// tokenctl, and the owner and mode kept are those of the very file read.
  static func read(_ path: String) throws -> SettingsFile? {
    let file: PrivateFile.Contents?
    do throws(FileProblem) {
      // One byte more than the parser accepts, so that it can report the file as too big.
      file = try PrivateFile.read(
        path, limit: TOMLParser.maximumSize, policy: nil, followingLinks: true, truncating: true)
    } catch .notARegularFile {
      throw TokenKitError(.notConfigured, "\(path) is not a regular file")
    } catch .unreadable(let code) {
      throw TokenKitError(.notConfigured, "could not read \(path): \(String(cString: strerror(code)))")
    } catch {
      throw TokenKitError(.notConfigured, "could not read \(path)")
    }
    guard let file else { return nil }
    return SettingsFile(path: path, bytes: file.bytes, mode: file.status.st_mode, owner: file.status.st_uid)
  }

  /// Refuses the file unless only the user can change it and, when it holds a client
  /// secret, read it: ``FilePolicy/settings`` and ``FilePolicy/secretSettings``, worded
  /// for every file tokenctl takes settings from.
  ///
  /// - The owner must be the user or root, as ssh requires of `~/.ssh/config`: the owner
  ///   of a file may change it, and root may change anything anyway. That holds for the
  ///   system's type directories too, where a file the user owns is as trusted as the
  ///   user's own.
  /// - Group and others must not write it (`chmod go-w`).
  /// - A file holding a secret must not be readable by group or others either, as ssh
  ///   requires of private keys: a secret others can read is already leaked, and going on
  ///   would hide that.
  ///
  /// - Throws: ``TokenKitError`` `notConfigured`, naming the file, its mode and owner, with
  ///   the fix as recovery.
  func checkPermissions(holdsSecret: Bool) throws(TokenKitError) {
    let me = geteuid()
    let policy = holdsSecret ? FilePolicy.secretSettings : .settings
    let isOwnedByUser = policy.allowsOwner(owner)
    let isWritableByOthers = !FilePolicy.settings.allowsMode(mode)
    let isReadableByOthers = !FilePolicy.secretSettings.allowsMode(mode)
    let octal = String(mode & 0o7777, radix: 8)
    let consequence = "and whoever changes it decides where your sign-ins go"
    // The secret's rule (chmod 600) covers the writers' (chmod go-w).
    let modeFix: String? =
      holdsSecret && isReadableByOthers ? "chmod 600 \(path)" : isWritableByOthers ? "chmod go-w \(path)" : nil
    guard isOwnedByUser else {
      throw TokenKitError(
        .notConfigured,
        "\(path) belongs to another user (mode \(octal), owner \(UserName.describe(owner))), \(consequence)",
        recovery: "If you trust what it says, make it yours: `sudo chown \(UserName.of(me) ?? String(me)) \(path)`"
          + (modeFix.map { " and `\($0)`" } ?? "") + "; if not, remove it.")
    }
    if holdsSecret, isReadableByOthers {
      throw TokenKitError(
        .notConfigured, "\(path) holds a client_secret but others can read it (mode \(octal))",
        recovery: "Run `chmod 600 \(path)`, and consider asking the provider for a new secret.")
    }
    if isWritableByOthers {
      throw TokenKitError(
        .notConfigured,
        "\(path) may be changed by other users (mode \(octal), owner \(UserName.describe(owner))), \(consequence)",
        recovery: "Run `chmod go-w \(path)`.")
    }
  }
}
