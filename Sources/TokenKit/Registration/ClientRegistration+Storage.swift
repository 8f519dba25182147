#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The secret of a registration's keyring item: a versioned JSON object, documented in
/// tokenctl-keyring(5).
extension ClientRegistration {
  public static let storageFormatVersion = 1

  private struct Stored: Codable {
    var version: Int
    var issuer: String
    var client_id: String
    var client_secret: String?
    var registration_access_token: String?
    var registration_client_uri: String?
    var redirect_uris: [String]
    var registered_at: Int64
  }

  private struct VersionOnly: Decodable { var version: Int }

  public func storageJSON() throws -> [UInt8] {
    let stored = Stored(
      version: Self.storageFormatVersion, issuer: issuer, client_id: clientID, client_secret: clientSecret,
      registration_access_token: registrationAccessToken,
      registration_client_uri: registrationClientURI?.absoluteString, redirect_uris: redirectURIs,
      registered_at: Int64(registeredAt.timeIntervalSince1970))
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return Array(try encoder.encode(stored))
  }

  /// Reads a stored registration; a damaged one is reported with how to start over.
  public init(storageJSON bytes: [UInt8], issuer: String) throws {
    let decoder = JSONDecoder()
    let data = Data(bytes)
    guard let version = try? decoder.decode(VersionOnly.self, from: data).version,
      version == Self.storageFormatVersion, let stored = try? decoder.decode(Stored.self, from: data)
    else {
      throw TokenKitError(
        .corruptItem, "the client registered at \(issuer) is stored in a form this tokenctl cannot read",
        remedy: .forgetRegistration(issuer: issuer))
    }
    self.init(
      issuer: stored.issuer, clientID: stored.client_id, clientSecret: stored.client_secret,
      registrationAccessToken: stored.registration_access_token,
      registrationClientURI: stored.registration_client_uri.flatMap(URL.init(string:)),
      redirectURIs: stored.redirect_uris,
      registeredAt: Date(timeIntervalSince1970: TimeInterval(stored.registered_at)))
  }
}
