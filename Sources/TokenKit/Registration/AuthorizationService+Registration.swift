#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Dynamic client registration (RFC 7591) and its management protocol (RFC 7592). There is
/// no client yet when registering, so these take the transport, not a service's client.
extension AuthorizationService {
  /// Registers a client (RFC 7591 §3.1): `metadata` POSTed as JSON, without an initial
  /// access token. RFC 7591 answers 201; a 200 with a client information response is taken
  /// too, as some servers send one.
  public static func register(
    _ metadata: ClientMetadata, at endpoint: URL, transport: any HTTPTransport
  ) async throws(AuthorizationServiceError) -> ClientRegistrationResponse {
    let request = HTTPRequest(
      method: "POST", url: endpoint,
      headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Accept", "application/json")],
      body: metadata.json)
    let response = try await send(request, transport: transport)
    return try ClientRegistrationResponse(
      json: try body(of: response, document: "client registration response", bodyRequired: true))
  }

  /// What deleting a registration at its server came to.
  public enum RegistrationDeletion: Sendable, Hashable {
    /// 204 (RFC 7592 §2.3), or another 2xx.
    case deleted
    /// 401: the server knows no such client, or no longer honours the token (§2.3 says a
    /// server answers so for a client it does not have): nothing is left to delete.
    case unknownToServer
  }

  /// Deletes a registration (RFC 7592 §2.3) with its registration access token.
  public static func deleteRegistration(
    at uri: URL, accessToken: String, transport: any HTTPTransport
  ) async throws(AuthorizationServiceError) -> RegistrationDeletion {
    let request = HTTPRequest(
      method: "DELETE", url: uri,
      headers: [HTTPHeader("Authorization", "Bearer \(accessToken)"), HTTPHeader("Accept", "application/json")])
    let response = try await send(request, transport: transport)
    if response.status == 401 { return .unknownToServer }
    _ = try body(of: response, document: "client deletion response", bodyRequired: false)
    return .deleted
  }
}
