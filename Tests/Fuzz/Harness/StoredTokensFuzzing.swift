import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A keyring item's secret, which any program of the user may have written, read as a
/// stored token set (`TokenSet(storageJSON:item:)`), and compared with what JSONDecoder
/// makes of it: the reader replaced JSONDecoder there, and must neither refuse
/// an item JSONDecoder read nor read one it refused, nor read it otherwise.
public enum StoredTokensFuzzing {
  /// Labels: `read` (a token set), `format` (another format version), `malformed` (format
  /// 1 with a member of the wrong type or missing), `refused` (no token set).
  public static func run(_ bytes: [UInt8]) -> String {
    let read = outcome { try TokenSet(storageJSON: bytes, item: "fuzz") }
    if !isConverted(bytes) {
      let decoded = outcome { try decode(bytes) }
      precondition(read == decoded, "stored tokens read as \(read), JSONDecoder: \(decoded)")
    }
    switch read {
    case .read: return "read"
    case .refused(let message) where message.contains("use format"): return "format"
    case .refused(let message) where message.contains("malformed"): return "malformed"
    case .refused: return "refused"
    }
  }

  /// Whether JSONDecoder would read `bytes` as UTF-16 or UTF-32 (RFC 4627 §3, by their
  /// first four bytes), which the product does not read (see StoredJSONObject).
  public static func isConverted(_ bytes: [UInt8]) -> Bool {
    let first = (0..<4).map { $0 < bytes.count ? Int(bytes[$0]) : -1 }
    switch (first[0], first[1], first[2], first[3]) {
    case (0xFE, 0xFF, _, _), (0xFF, 0xFE, _, _), (0, 0, 0, 1...), (0, 1..., 0, 1...), (1..., 0, 0, 0),
      (1..., 0, 1..., 0), (0, 1..., -1, -1), (1..., 0, -1, -1):
      return true
    default: return false
    }
  }

  /// What a read made of an item: the token set's fields, or the error's message.
  public enum Outcome: Equatable, Sendable {
    case read(
      access: String, refresh: String?, id: String?, expires: Date?, scope: [String]?, type: String, issued: Date?)
    case refused(String)
  }

  public static func outcome(_ body: () throws -> TokenSet) -> Outcome {
    do {
      let tokens = try body()
      return .read(
        access: tokens.accessToken, refresh: tokens.refreshToken, id: tokens.idToken, expires: tokens.expiresAt,
        scope: tokens.scope, type: tokens.tokenType, issued: tokens.issuedAt)
    } catch let error as TokenKitError {
      return .refused(error.message)
    } catch {
      return .refused("\(error)")
    }
  }

  /// The stored form's members as tokenctl-keyring(5) gives them, written out here on
  /// purpose: this is the reading as it was before StoredJSONObject, the oracle, so that a
  /// member the product renames fails the comparison instead of following it.
  private struct Stored: Decodable {
    var version: Int
    var access_token: String
    var refresh_token: String?
    var id_token: String?
    var expires_at: Int64?
    var scope: String?
    var token_type: String
    var issued_at: Int64?
  }

  private struct VersionOnly: Decodable { var version: Int }

  /// The read as JSONDecoder makes it, with the product's messages.
  public static func decode(_ bytes: [UInt8]) throws -> TokenSet {
    let data = Data(bytes)
    let decoded = try? JSONDecoder().decode(Stored.self, from: data)
    guard let version = decoded?.version ?? (try? JSONDecoder().decode(VersionOnly.self, from: data).version) else {
      throw TokenKitError(.corruptItem, "the stored tokens of fuzz are not a token set tokenctl can read")
    }
    guard version == TokenSet.storageFormatVersion else {
      throw TokenKitError(
        .corruptItem,
        "the stored tokens of fuzz use format \(version), which this tokenctl cannot read (it reads format \(TokenSet.storageFormatVersion))"
      )
    }
    guard let stored = decoded else { throw TokenKitError(.corruptItem, "the stored tokens of fuzz are malformed") }
    return TokenSet(
      accessToken: stored.access_token, refreshToken: stored.refresh_token, idToken: stored.id_token,
      expiresAt: stored.expires_at.map { Date(timeIntervalSince1970: TimeInterval($0)) },
      scope: stored.scope.map { $0.split(separator: " ").map(String.init) }, tokenType: stored.token_type,
      issuedAt: stored.issued_at.map { Date(timeIntervalSince1970: TimeInterval($0)) })
  }
}
