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

  private struct Stored: Codable {
    var version: Int
    var access_token: String
    var refresh_token: String?
    var id_token: String?
    var expires_at: Int64?
    var scope: String?
    var token_type: String
    // Added within format 1: older readers ignore it, and it is optional here.
    var issued_at: Int64?
  }

  private struct VersionOnly: Decodable { var version: Int }

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
  public init(storageJSON bytes: [UInt8], item: String) throws {
    let data = Data(bytes)
    let decoder = JSONDecoder()
    // One decode on the usual path (`tokenctl token` reads one item per run); the version
    // alone is decoded only to say why a set that does not decode was refused.
    let decoded = try? decoder.decode(Stored.self, from: data)
    guard let version = decoded?.version ?? (try? decoder.decode(VersionOnly.self, from: data).version) else {
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
    guard let stored = decoded else {
      throw TokenKitError(
        .corruptItem, "the stored tokens of \(item) are malformed",
        remedy: .removeUnreadableAccount)
    }
    self.init(
      accessToken: stored.access_token, refreshToken: stored.refresh_token,
      idToken: stored.id_token,
      expiresAt: stored.expires_at.map { Date(timeIntervalSince1970: TimeInterval($0)) },
      scope: stored.scope.map { $0.split(separator: " ").map(String.init) },
      tokenType: stored.token_type,
      issuedAt: stored.issued_at.map { Date(timeIntervalSince1970: TimeInterval($0)) })
  }
}
