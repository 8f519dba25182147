#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A client information response (RFC 7591 §3.2.1).
public struct ClientRegistrationResponse: Sendable, Hashable {
  /// `client_id`.
  public var clientID: String
  /// `client_secret`, if the server issued one.
  public var clientSecret: String?
  /// `registration_access_token` (RFC 7592 §3).
  public var registrationAccessToken: String?
  /// `registration_client_uri` (RFC 7592 §3).
  public var registrationClientURI: URL?
  /// `redirect_uris` as registered; the server may have changed them (§3.2.1).
  public var redirectURIs: [String]?
  /// `token_endpoint_auth_method` as registered.
  public var tokenEndpointAuthMethod: String?

  public init(json body: [UInt8]) throws(AuthorizationServiceError) {
    let object = try JSONObject(body, what: "client registration response")
    guard let clientID = object.string("client_id"), !clientID.isEmpty else {
      throw .malformedResponse("the client registration response has no client_id")
    }
    self.clientID = clientID
    clientSecret = object.string("client_secret")
    registrationAccessToken = object.string("registration_access_token")
    if let text = object.string("registration_client_uri") {
      // RFC 7592 §3: the registration access token goes there, so it must be as safe as
      // the registration endpoint itself.
      guard let url = URL(string: text), Loopback.isSecureOrLoopback(url) else {
        throw .malformedResponse("the client registration response's registration_client_uri is not an https URL")
      }
      registrationClientURI = url
    }
    redirectURIs = object.strings("redirect_uris")
    tokenEndpointAuthMethod = object.string("token_endpoint_auth_method")
  }
}
