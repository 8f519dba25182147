import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// tokenctl's ``GrantJournal``: one file per account, `HASH.json` (the lock file's name,
/// ``FileAccountLocks/fileName(for:group:)``) in a private folder of the per-user runtime
/// folder, mode 0600, written through a rename so that a reader never sees half of one.
///
/// The runtime folder is a tmpfs or ramfs, or there is no journal (``JournalPlacement``):
/// an entry never reaches a disk, and goes at logout with the session whose keyring it
/// stands in for. No `fsync` then: there is no disk to wait for, and a crash of the machine
/// takes the keyring daemon's unsaved state along anyway. Nothing secret is in a name: the
/// account's is a hash, as for its lock.
package struct FileGrantJournal: GrantJournal {
  package var directory: String
  /// The outermost folder that is tokenctl's own (``XDGDirectories/runtimeRoot``).
  package var root: String

  package init(directory: String, root: String) {
    self.directory = directory
    self.root = root
  }

  /// The format of an entry; one of another is unreadable to this reader, as a torn one is.
  static let formatVersion = 1
  /// More than any entry: a token set is a few KiB at most.
  static let maximumSize = 256 * 1024

  private struct Entry: Codable {
    var version: Int
    var type: String
    var id: String
    var group: String
    /// tokenctl-keyring(5)'s secret, as a string.
    var tokens: String
    var scopes: [String]?
    var updated_at: Double
    var replaces: String
  }

  package func write(_ grant: JournaledGrant) throws {
    try XDGDirectories.ensurePrivateDirectory(directory, within: root)
    let entry = Entry(
      version: Self.formatVersion, type: grant.key.type, id: grant.key.id, group: grant.group,
      tokens: String(decoding: try grant.tokens.storageJSON(), as: UTF8.self), scopes: grant.grantedScopes,
      updated_at: grant.updatedAt.timeIntervalSince1970, replaces: grant.replaces)
    let path = path(for: grant.key, group: grant.group)
    do {
      // Not durable: the folder is a tmpfs (above).
      try AtomicFile.write(Array(try JSONEncoder().encode(entry)), to: path, durable: false)
    } catch let error as TokenKitError {
      // A small tmpfs fills up (a container's, or one that other programs fill).
      throw error.with(recovery: "`df -h \(Self.shellWord(directory))` shows whether it is full.", remedy: nil)
    }
  }

  /// `path` as one word of a shell command, so that the command runs as printed: quoted
  /// when it holds anything but letters, digits and `/-._`.
  static func shellWord(_ path: String) -> String {
    let plain = path.utf8.allSatisfy { byte in
      byte < 0x80 && (isalnum(Int32(byte)) != 0 || "/-._".utf8.contains(byte))
    }
    if plain { return path }
    return "'" + path.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
  }

  package func read(_ key: AccountKey, group: String) -> JournaledGrant? {
    // An entry that is not a private file of the user's is no entry of ours (FilePolicy).
    guard
      let file = try? PrivateFile.read(path(for: key, group: group), limit: Self.maximumSize, policy: .privateFile),
      let entry = try? JSONDecoder().decode(Entry.self, from: Data(file.bytes)), entry.version == Self.formatVersion,
      entry.type == key.type, entry.id == key.id, entry.group == group,
      let tokens = try? TokenSet(storageJSON: Array(entry.tokens.utf8), item: "\(key)")
    else { return nil }
    return JournaledGrant(
      key: key, group: group, tokens: tokens, grantedScopes: entry.scopes,
      updatedAt: Date(timeIntervalSince1970: entry.updated_at), replaces: entry.replaces)
  }

  package func remove(_ key: AccountKey, group: String) {
    unlink(path(for: key, group: group))
  }

  /// Renames the entry to `HASH.unreadable` beside it (replacing an older one): out of
  /// ``contains(_:group:)``'s sight, in the same private folder, on the same tmpfs.
  package func setAside(_ key: AccountKey, group: String) -> String? {
    let kept = "\(directory)/\(FileAccountLocks.fileName(for: key, group: group)).unreadable"
    return rename(path(for: key, group: group), kept) == 0 ? kept : nil
  }

  package func contains(_ key: AccountKey, group: String) -> Bool {
    access(path(for: key, group: group), F_OK) == 0
  }

  /// The entry file of `key` in `group`.
  package func path(for key: AccountKey, group: String) -> String {
    "\(directory)/\(FileAccountLocks.fileName(for: key, group: group)).json"
  }
}
