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
/// The runtime folder is a tmpfs (systemd-logind's `/run/user/UID`): an entry never
/// reaches a disk, and goes at logout with the session whose keyring it stands in for. No
/// `fsync` then: there is no disk to wait for, and a crash of the machine takes the keyring
/// daemon's unsaved state along anyway. Nothing secret is in a name: the account's is a
/// hash, as for its lock.
package struct FileGrantJournal: GrantJournal {
  package var directory: String
  /// The outermost folder that is tokenctl's own (``XDGDirectories/runtimeRoot``).
  package var root: String

  package init(directory: String, root: String) {
    self.directory = directory
    self.root = root
  }

  /// The format of an entry; a reader drops one it cannot read, as it would a torn one.
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
    // Not durable: the folder is a tmpfs (above).
    try AtomicFile.write(Array(try JSONEncoder().encode(entry)), to: path, durable: false)
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

  package func contains(_ key: AccountKey, group: String) -> Bool {
    access(path(for: key, group: group), F_OK) == 0
  }

  /// The entry file of `key` in `group`.
  package func path(for key: AccountKey, group: String) -> String {
    "\(directory)/\(FileAccountLocks.fileName(for: key, group: group)).json"
  }
}
