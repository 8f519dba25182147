/// What the user's configuration changes in one account type: the client they registered,
/// the issuer of a generic type, the scopes, the redirect port.
///
/// Every field is optional; `nil` leaves the descriptor's own value. Applied with
/// ``AccountTypeRegistry/applying(_:source:)``.
public struct AccountTypeSettings: Sendable, Hashable {
  /// `client_id` (RFC 6749 §2.2) of the app the user registered.
  public var clientID: String?
  /// `client_secret` (RFC 6749 §2.3.1), for providers whose desktop clients still get one.
  /// Never shown: the description redacts it.
  public var clientSecret: String?
  /// The issuer to discover endpoints from (OpenID Connect Discovery 1.0 §4), only for a
  /// type that discovers them from a user-given issuer.
  public var issuer: String?
  /// Scopes to request when the user names none (RFC 6749 §3.3).
  public var scopes: [String]?
  /// The loopback redirect's port (RFC 8252 §7.3), for a client registered with a fixed
  /// redirect URI.
  public var redirectPort: UInt16?
  /// `authorization_parameters`: parameters to add to the authorization request (OpenID
  /// Connect Core §3.1.2.1 `prompt`, `acr_values`, …), winning over the type's own.
  public var authorizationParameters: [String: String]?
  /// Settings the type's plugin defines for itself (a tenant, a cloud's hosts), by key.
  public var options: [String: String] = [:]
  /// `keep_fresh`: the agent refreshes this type's accounts ahead of time whether or not
  /// it handed out their tokens. Not the descriptor's business: applying leaves it alone.
  public var keepFresh: Bool?

  /// The keys every `[types.ID]` table takes, as config.toml names the fields above; a
  /// plugin may declare more of its own.
  public static let keys = [
    "client_id", "client_secret", "issuer", "scopes", "redirect_port", "keep_fresh", "authorization_parameters",
  ]

  public init(
    clientID: String? = nil, clientSecret: String? = nil, issuer: String? = nil, scopes: [String]? = nil,
    redirectPort: UInt16? = nil
  ) {
    self.clientID = clientID
    self.clientSecret = clientSecret
    self.issuer = issuer
    self.scopes = scopes
    self.redirectPort = redirectPort
  }

  /// Whether no field is set.
  public var isEmpty: Bool {
    clientID == nil && clientSecret == nil && issuer == nil && scopes == nil && redirectPort == nil
      && authorizationParameters == nil && options.isEmpty && keepFresh == nil
  }
}

extension AccountTypeSettings: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
  /// The fields that are set; the client secret shows as `<redacted>`.
  public var description: String {
    var fields: [String] = []
    if let clientID { fields.append("clientID: \(clientID)") }
    if clientSecret != nil { fields.append("clientSecret: <redacted>") }
    if let issuer { fields.append("issuer: \(issuer)") }
    if let scopes { fields.append("scopes: \(scopes.joined(separator: " "))") }
    if let redirectPort { fields.append("redirectPort: \(redirectPort)") }
    if let authorizationParameters {
      fields.append("authorizationParameters: \(authorizationParameters.sorted { $0.key < $1.key })")
    }
    return "AccountTypeSettings(" + fields.joined(separator: ", ") + ")"
  }

  // `debugDescription` and a mirror too, so that `debugPrint`, `dump` and test failure
  // messages never print the secret either.
  public var debugDescription: String { description }

  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "clientID": clientID as Any, "clientSecret": clientSecret.map { _ in "<redacted>" } as Any,
        "issuer": issuer as Any, "scopes": scopes as Any, "redirectPort": redirectPort as Any,
        "authorizationParameters": authorizationParameters as Any,
      ])
  }
}
