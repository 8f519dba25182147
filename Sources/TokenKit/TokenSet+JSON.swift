#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The stored form of a token set: the secret of a keyring item, documented in
/// tokenctl-keyring(5) so that other tools can read it.
///
/// Field names follow the token response (RFC 6749 §5.1), except `expires_at`, an
/// absolute Unix time, because a relative `expires_in` means nothing once stored.
extension TokenSet {
  /// The format version this build writes. Readers refuse newer versions rather than
  /// guess, and a newer tokenctl keeps reading this one.
  public static let storageFormatVersion = 1

  private struct Stored: Encodable {
    var version: Int
    var access_token: String
    var refresh_token: String?
    var id_token: String?
    var expires_at: Int64?
    var scope: String?
    var token_type: String
    // Added within format 1: older readers ignore it, and it is optional here.
    var issued_at: Int64?

    /// The members' names, which the reader reads them by too.
    enum CodingKeys: String, CodingKey {
      case version, access_token, refresh_token, id_token, expires_at, scope, token_type, issued_at
    }
  }

  /// The JSON this build stores.
  public func storageJSON() throws -> [UInt8] {
    let stored = Stored(
      version: Self.storageFormatVersion, access_token: accessToken, refresh_token: refreshToken,
      id_token: idToken, expires_at: expiresAt.map { Int64($0.timeIntervalSince1970) },
      scope: scope?.joined(separator: " "), token_type: tokenType,
      issued_at: issuedAt.map { Int64($0.timeIntervalSince1970) })
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return Array(try encoder.encode(stored))
  }

  /// Reads a stored token set; `item` names it in errors (never its content).
  ///
  /// Read with ``StoredJSONObject``, as JSONDecoder would decode `Stored` (see there why).
  public init(storageJSON bytes: [UInt8], item: String) throws {
    // The version alone says why a set that does not read was refused.
    typealias Member = Stored.CodingKeys
    guard let members = StoredJSONObject.members(bytes), let version = members[Member.version.rawValue]?.integer
    else {
      throw TokenKitError(
        .corruptItem, "the stored tokens of \(item) are not a token set tokenctl can read",
        remedy: .removeUnreadableAccount)
    }
    guard version == Self.storageFormatVersion else {
      throw TokenKitError(
        .corruptItem,
        "the stored tokens of \(item) use format \(version), which this tokenctl cannot read (it reads format \(Self.storageFormatVersion))",
        recovery: "Use the tokenctl that wrote them, or a newer one.")
    }
    // Each member as `Stored` declares it: a missing optional one and null are nil, one of
    // another kind is malformed.
    var malformed = false
    func read<Read>(_ member: Member, _ reading: (StoredJSONObject.Value) -> Read?) -> Read? {
      switch members[member.rawValue] {
      case nil, .null?: return nil
      case let value?:
        guard let read = reading(value) else {
          malformed = true
          return nil
        }
        return read
      }
    }
    func text(_ member: Member) -> String? { read(member) { $0.text } }
    func time(_ member: Member) -> Date? {
      read(member) { $0.integer }.map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }
    let accessToken = text(.access_token)
    let tokenType = text(.token_type)
    let tokens = (
      refresh: text(.refresh_token), id: text(.id_token), expires: time(.expires_at), scope: text(.scope),
      issued: time(.issued_at)
    )
    guard !malformed, let accessToken, let tokenType else {
      throw TokenKitError(
        .corruptItem, "the stored tokens of \(item) are malformed",
        remedy: .removeUnreadableAccount)
    }
    self.init(
      accessToken: accessToken, refreshToken: tokens.refresh, idToken: tokens.id, expiresAt: tokens.expires,
      scope: tokens.scope.map { $0.split(separator: " ").map(String.init) }, tokenType: tokenType,
      issuedAt: tokens.issued)
  }
}
