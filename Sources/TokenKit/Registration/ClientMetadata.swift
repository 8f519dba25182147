#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The client metadata a client registers itself with (RFC 7591 §2).
///
/// tokenctl registers as a native public client (RFC 8252 §8.4): no secret
/// (`token_endpoint_auth_method` `none`), loopback redirect URIs, and the grants it uses.
public struct ClientMetadata: Sendable, Hashable {
  /// `redirect_uris`.
  public var redirectURIs: [String]
  /// `token_endpoint_auth_method`.
  public var tokenEndpointAuthMethod: String
  /// `grant_types`.
  public var grantTypes: [String]
  /// `response_types`.
  public var responseTypes: [String]
  /// `client_name`: what the server shows the user on its consent page.
  public var clientName: String
  /// `application_type` (OpenID Connect Dynamic Client Registration 1.0 §2): `native`.
  public var applicationType: String
  /// Members a server needs beyond the RFC's, from the account type
  /// (`registration_metadata`); the RFC's own members win over them.
  public var additionalMetadata: [String: JSONValue]

  public init(
    redirectURIs: [String], tokenEndpointAuthMethod: String = "none",
    grantTypes: [String] = ["authorization_code", "refresh_token"], responseTypes: [String] = ["code"],
    clientName: String = "tokenctl", applicationType: String = "native",
    additionalMetadata: [String: JSONValue] = [:]
  ) {
    self.redirectURIs = redirectURIs
    self.tokenEndpointAuthMethod = tokenEndpointAuthMethod
    self.grantTypes = grantTypes
    self.responseTypes = responseTypes
    self.clientName = clientName
    self.applicationType = applicationType
    self.additionalMetadata = additionalMetadata
  }

  /// The registration request's body (§3.1): a JSON object.
  public var json: [UInt8] {
    var object = additionalMetadata
    object["redirect_uris"] = .array(redirectURIs.map(JSONValue.string))
    object["token_endpoint_auth_method"] = .string(tokenEndpointAuthMethod)
    object["grant_types"] = .array(grantTypes.map(JSONValue.string))
    object["response_types"] = .array(responseTypes.map(JSONValue.string))
    object["client_name"] = .string(clientName)
    object["application_type"] = .string(applicationType)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    // A dictionary of JSON values always encodes.
    return (try? Array(encoder.encode(object))) ?? Array("{}".utf8)
  }
}
