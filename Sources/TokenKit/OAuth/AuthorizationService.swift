#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Talks to one authorization server's endpoints through an injected transport, and
/// sorts every answer into a result or an `AuthorizationServiceError`.
///
/// The analogue of AppAuth's `OIDAuthorizationService`: requests are values that build
/// their own HTTP request; this type only sends them and reads the answers.
public struct AuthorizationService: Sendable {
  public var endpoints: Endpoints
  public var client: ClientIdentity
  public var transport: any HTTPTransport
  /// How long to wait for a server that asks to be asked again.
  public var retry: RetryPolicy

  public init(
    endpoints: Endpoints, client: ClientIdentity, transport: any HTTPTransport, retry: RetryPolicy = .standard
  ) {
    self.endpoints = endpoints
    self.client = client
    self.transport = transport
    self.retry = retry
  }

  /// Exchanges a grant at the token endpoint (RFC 6749 §3.2).
  public func token(
    _ grant: TokenRequest.Grant, additionalParameters: [String: String] = [:]
  )
    async throws(AuthorizationServiceError) -> TokenResponse
  {
    let request = TokenRequest(
      endpoint: endpoints.token, grant: grant, client: client, additionalParameters: additionalParameters)
    let body = try await exchange(request.httpRequest, document: "token response")
    let response = try TokenResponse(json: body)
    if let problem = response.syntaxProblem { throw await refuse(response, problem: problem) }
    return response
  }

  /// The error for a token response whose `problem` (``TokenResponse/syntaxProblem``) makes
  /// it unusable, once what it issued is revoked where the server offers revocation (RFC
  /// 7009): the grant exists at the server though nobody will ever hold it, as when the
  /// keyring refuses a sign-in's tokens. The refresh token first, which ends the access
  /// tokens of its grant at most servers; failures to revoke change nothing said.
  private func refuse(_ response: TokenResponse, problem: String) async -> AuthorizationServiceError {
    var revoked = false
    if endpoints.revocation != nil {
      if let refreshToken = response.refreshToken {
        revoked = (try? await revoke(refreshToken, hint: "refresh_token")) != nil
      }
      revoked = (try? await revoke(response.accessToken, hint: "access_token")) != nil || revoked
    }
    return .unusableTokens(
      "the token response was refused: \(problem) holds characters a token cannot have (RFC 6749 allows printable "
        + "ASCII only), such as a terminal escape or a line break, so it would reach your terminal or a request's "
        + "header lines as the server wrote it; nothing was stored, and "
        + (revoked
          ? "what it issued was revoked at the server"
          : "what it issued could not be revoked (the server offers no revocation), so it lives until it expires"))
  }

  /// Starts a device authorization (RFC 8628 §3.1). Nil endpoint is the caller's error to
  /// report: check `endpoints.deviceAuthorization` first.
  public func deviceAuthorization(
    scopes: [String]
  ) async throws(AuthorizationServiceError)
    -> DeviceAuthorizationResponse
  {
    guard let endpoint = endpoints.deviceAuthorization else {
      throw .malformedResponse("the server has no device authorization endpoint")
    }
    var fields: [(String, String)] = []
    if !scopes.isEmpty { fields.append(("scope", scopes.joined(separator: " "))) }
    var headers: [HTTPHeader] = []
    client.authenticate(fields: &fields, headers: &headers)
    let body = try await exchange(.form(endpoint, fields, headers: headers), document: "device authorization response")
    return try DeviceAuthorizationResponse(json: body)
  }

  /// Revokes a token (RFC 7009 §2.1). The server answers 200 also for tokens it does not
  /// know (§2.2), so success means "this token no longer works".
  public func revoke(_ token: String, hint: String) async throws(AuthorizationServiceError) {
    guard let endpoint = endpoints.revocation else {
      throw .malformedResponse("the server has no revocation endpoint")
    }
    var fields: [(String, String)] = [("token", token), ("token_type_hint", hint)]
    var headers: [HTTPHeader] = []
    client.authenticate(fields: &fields, headers: &headers)
    _ = try await exchange(
      .form(endpoint, fields, headers: headers), document: "revocation response", bodyRequired: false)
  }

  /// Sends `request` and returns the body of a 2xx answer that carries no OAuth error,
  /// asking again as `retry` allows when the server says it is busy.
  func exchange(
    _ request: HTTPRequest, document: String, bodyRequired: Bool = true
  )
    async throws(AuthorizationServiceError) -> [UInt8]
  {
    var waited = Duration.zero
    var attempt = 0
    while true {
      do {
        return try Self.body(
          of: try await Self.send(request, transport: transport), document: document, bodyRequired: bodyRequired)
      } catch {
        attempt += 1
        let failure = error
        guard let pause = retry.pause(before: attempt, after: failure, waited: waited) else { throw failure }
        // Cancelled while waiting: the server's answer is the one to report.
        do { try await retry.sleep(pause) } catch { throw failure }
        waited += pause
      }
    }
  }

  /// Sends `request`; no answer at all is a `.transport` error.
  static func send(
    _ request: HTTPRequest, transport: any HTTPTransport
  ) async throws(AuthorizationServiceError) -> HTTPResponse {
    do {
      return try await transport.send(request)
    } catch {
      throw .transport(error)
    }
  }

  /// Sorts a response: an OAuth error body wins whatever the status (some servers send
  /// errors with 200), then the status, then the media type.
  ///
  /// Package-visible for the fuzz targets, which feed it server answers directly.
  package static func body(
    of response: HTTPResponse, document: String, bodyRequired: Bool
  ) throws(AuthorizationServiceError)
    -> [UInt8]
  {
    let isJSON = response.mediaType.map { $0 == "application/json" || $0.hasSuffix("+json") } ?? false
    let retryAfter = RetryPolicy.seconds(retryAfter: response.header("Retry-After"))
    if let object = try? JSONObject(response.body, what: document), let code = object.string("error") {
      throw .oauth(
        OAuthError(
          code: code, errorDescription: object.string("error_description"), errorURI: object.string("error_uri"),
          otherMembers: object.strings(excluding: ["error", "error_description", "error_uri"]),
          retryAfter: retryAfter),
        status: response.status)
    }
    guard (200..<300).contains(response.status) else {
      throw .httpStatus(response.status, retryAfter: retryAfter, mediaType: response.mediaType)
    }
    if !bodyRequired { return response.body }
    // RFC 6749 §5.1 requires application/json. Servers that mislabel JSON as text/plain
    // still send JSON, so only a body that does not parse is refused, below; but an HTML
    // page is named as such, because it usually means a proxy or login portal answered.
    if !isJSON, response.mediaType == "text/html" {
      throw .malformedResponse("the server sent an HTML page instead of a \(document)")
    }
    return response.body
  }
}
