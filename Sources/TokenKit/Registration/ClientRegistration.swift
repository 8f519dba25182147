#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The client an authorization server registered for tokenctl (RFC 7591 §3.2.1), kept per
/// issuer so that every later sign-in there uses the same client.
///
/// Its descriptions redact the secrets (`client_secret`, `registration_access_token`).
public struct ClientRegistration: Sendable, Hashable {
  /// The issuer the client was registered at (its discovery document's `issuer`).
  public var issuer: String
  /// `client_id`.
  public var clientID: String
  /// `client_secret`, when the server issued one although a public client was asked for.
  public var clientSecret: String?
  /// `registration_access_token` (RFC 7592 §3): what reads, changes or deletes the
  /// registration at `registrationClientURI`.
  public var registrationAccessToken: String?
  /// `registration_client_uri` (RFC 7592 §3).
  public var registrationClientURI: URL?
  /// The `redirect_uris` registered: a server that compares them port included (against
  /// RFC 8252 §7.3) accepts only these, so later sign-ins listen on the same port.
  public var redirectURIs: [String]
  /// When the registration was made.
  public var registeredAt: Date

  public init(
    issuer: String, clientID: String, clientSecret: String? = nil, registrationAccessToken: String? = nil,
    registrationClientURI: URL? = nil, redirectURIs: [String], registeredAt: Date
  ) {
    self.issuer = issuer
    self.clientID = clientID
    self.clientSecret = clientSecret
    self.registrationAccessToken = registrationAccessToken
    self.registrationClientURI = registrationClientURI
    self.redirectURIs = redirectURIs
    self.registeredAt = registeredAt
  }

  /// The port of the first loopback redirect URI registered, if it names one.
  public var loopbackPort: UInt16? {
    for uri in redirectURIs {
      if let url = URL(string: uri), url.scheme == "http", Loopback.isLoopback(host: url.host() ?? ""),
        let port = url.port, let value = UInt16(exactly: port)
      {
        return value
      }
    }
    return nil
  }
}

extension ClientRegistration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
  public var description: String {
    var parts = ["issuer: \(issuer)", "client_id: \(clientID)"]
    if clientSecret != nil { parts.append("client_secret: <redacted>") }
    if registrationAccessToken != nil { parts.append("registration_access_token: <redacted>") }
    return "ClientRegistration(\(parts.joined(separator: ", ")))"
  }
  public var debugDescription: String { description }
  public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
