import Crypto

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Keeps a rotated grant safe between the token endpoint's answer and the store's write.
///
/// A server that rotates refresh tokens (RFC 9700 §4.14.2) has spent the one it was sent
/// by the time it answers: the answer holds the only valid refresh token. If the store
/// cannot take it then (the keyring was locked or its daemon restarted meanwhile) or the
/// process dies before it is written, the grant is gone and the user must sign in again.
/// ``RefreshIsolation`` keeps the caller's death out of that window, not the store's
/// failures or the death of the process doing the write.
///
/// So the answer is written here first, then to the store, and the entry removed once the
/// store has it. Whoever takes the account's lock next and finds an entry writes it into
/// the store before anything else (``TokenRefresher``), and until then the stored access
/// token is not handed out (``StoredAccount/isServable(forAtLeast:clock:locks:)``): the
/// server revoked it with the refresh token it was issued beside.
///
/// ## Implementation requirements
/// - An entry holds secrets: it must be readable by the user alone and must not outlive
///   the user's session on disk (tokenctl's is a 0600 file on the per-user tmpfs).
/// - `write` replaces the account's entry atomically: a reader sees the old one or the new
///   one whole. Entries are written and removed only under the account's lock.
/// - `contains` is asked on every token handed out from a store, and must cost no more
///   than a failed `stat`.
/// - An entry that exists proves that the refresh token in the store is spent: it is
///   written only once the server has answered. One that cannot be read (torn, emptied,
///   overwritten, of an unknown version, or open to others) is set aside, never removed.
public protocol GrantJournal: Sendable {
  /// Records `entry`, replacing the account's previous one; throws when it could not.
  func write(_ entry: JournaledGrant) throws

  /// The account's entry, or nil when there is none or it cannot be read.
  func read(_ key: AccountKey, group: String) -> JournaledGrant?

  /// Removes the account's entry, if any.
  func remove(_ key: AccountKey, group: String)

  /// Moves the account's entry out of the journal without reading or deleting it, for an
  /// entry that exists but cannot be read: what is left of it is kept for whoever looks
  /// into what happened, and only a new sign-in writes the account's tokens again. Returns
  /// where it is kept, or nil when it could not be moved (it then stays where it is).
  func setAside(_ key: AccountKey, group: String) -> String?

  /// Whether the account has an entry, without reading it: its stored tokens are then not
  /// its newest.
  func contains(_ key: AccountKey, group: String) -> Bool
}

/// A refresh's answer as the journal keeps it until the store has it: the account's new
/// token set, what the refresh changed in the account, and which stored refresh token it
/// replaces.
public struct JournaledGrant: Sendable, Hashable {
  public var key: AccountKey
  public var group: String
  public var tokens: TokenSet
  /// The scopes the server granted, when its answer named them (RFC 6749 §5.1).
  public var grantedScopes: [String]?
  public var updatedAt: Date
  /// ``fingerprint(of:)`` of the refresh token the refresh presented: the entry is written
  /// into the store only over the item it was meant to replace, never over one a sign-in
  /// wrote since.
  public var replaces: String

  public init(
    key: AccountKey, group: String, tokens: TokenSet, grantedScopes: [String]?, updatedAt: Date, replaces: String
  ) {
    self.key = key
    self.group = group
    self.tokens = tokens
    self.grantedScopes = grantedScopes
    self.updatedAt = updatedAt
    self.replaces = replaces
  }

  /// The SHA-256 of `refreshToken`, in lower-case hexadecimal: names a refresh token
  /// without holding it. "" for none.
  public static func fingerprint(of refreshToken: String?) -> String {
    guard let refreshToken else { return "" }
    return SHA256.hash(data: Array(refreshToken.utf8)).map { byte in
      let digits = String(byte, radix: 16)
      return byte < 16 ? "0" + digits : digits
    }.joined()
  }
}
