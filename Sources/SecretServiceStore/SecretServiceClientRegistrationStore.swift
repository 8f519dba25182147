import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The clients tokenctl registered (RFC 7591), one keyring item per issuer, in the default
/// collection beside the accounts: tokenctl-keyring(5), "Registered clients".
///
/// The item's attributes say which issuer and client; its secret (JSON) holds what must
/// stay secret: a client secret, if the server issued one, and the registration access
/// token that deletes the registration (RFC 7592).
public struct SecretServiceClientRegistrationStore: ClientRegistrationStore {
  /// The schema name, in the `xdg:schema` attribute.
  public static let schema = "org.tokenctl.Client"

  public enum Attribute {
    public static let issuer = "issuer"
    public static let clientID = "client-id"
    public static let registered = "registered"
  }

  private let items = SecretServiceTokenStore()

  public init() {}

  private static func key(_ issuer: String) -> [String: String] {
    [KeyringSchema.Attribute.schema: schema, Attribute.issuer: issuer]
  }

  public func load(issuer: String) throws -> ClientRegistration? {
    guard let secret = try items.readSecret(matching: Self.key(issuer), what: "the client registered at \(issuer)")
    else { return nil }
    return try ClientRegistration(storageJSON: secret, issuer: issuer)
  }

  public func save(_ registration: ClientRegistration) throws {
    var attributes = Self.key(registration.issuer)
    attributes[Attribute.clientID] = registration.clientID
    attributes[Attribute.registered] = String(Int64(registration.registeredAt.timeIntervalSince1970))
    try items.put(
      secret: try registration.storageJSON(), attributes: attributes, identifiedBy: Self.key(registration.issuer),
      label: "tokenctl: client registered at \(registration.issuer)",
      what: "the client registered at \(registration.issuer)")
  }

  @discardableResult
  public func remove(issuer: String) throws -> Bool {
    try items.delete(Self.key(issuer), what: "the client registered at \(issuer)")
  }
}
