import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What GitHub does its own way: it issues no ID token, so `GET /user` names the user;
/// it has no RFC 7009 endpoint, so `DELETE /applications/{client_id}/token` revokes.
public struct GitHubBehavior: AccountTypeBehavior {
  /// GitHub revokes through its REST API (`DELETE /applications/{client_id}/token`).
  public var revokesTokens: Bool { true }

  /// GitHub lists granted scopes with commas (`"scope": "repo,gist"`) where RFC 6749 §3.3
  /// separates them with spaces; a GitHub scope never contains a comma.
  public func normalized(_ response: TokenResponse) -> TokenResponse {
    var response = response
    response.scope = response.scope?.flatMap { $0.split(separator: ",").map(String.init) }.filter { !$0.isEmpty }
    return response
  }

  /// The REST API version these calls are written against (`X-GitHub-Api-Version`), so a
  /// later default version cannot change the answers under us.
  static let apiVersion = "2022-11-28"
  /// GitHub.com's API, for a descriptor that names none.
  static let defaultAPIBase = URL(string: "https://api.github.com")!

  public init() {}

  /// The account is GitHub's numeric user id, which survives a change of login; the
  /// name is the login.
  public func identity(
    accessToken: String, configuration: ServiceConfiguration, transport: any HTTPTransport
  )
    async throws -> AccountIdentity?
  {
    let url = Self.api(configuration).appending(path: "user")
    let request = HTTPRequest(
      method: "GET", url: url, headers: Self.headers + [HTTPHeader("Authorization", "Bearer \(accessToken)")])
    let response = try await Self.send(request, transport: transport, action: "ask GitHub who signed in")
    guard response.status == 200, let user = JSONValue.parseObject(response.body) else {
      throw TokenKitError(
        .signInFailed, "GitHub answered HTTP \(response.status) to GET \(url.absoluteString), so the user is unknown")
    }
    // JSON numbers are doubles; a user id is an integer well inside 2^53.
    guard let id = user["id"]?.numberValue.flatMap({ Int64(exactly: $0) }), let login = user["login"]?.stringValue
    else {
      throw TokenKitError(.signInFailed, "GitHub's answer to GET \(url.absoluteString) has no numeric id and login")
    }
    return AccountIdentity(id: String(id), name: login, issuer: nil)
  }

  /// Deletes the access token. GitHub lets only the app do that, so the request carries
  /// the client id and secret as HTTP Basic credentials and the token in a JSON body.
  public func revoke(
    _ tokens: TokenSet, configuration: ServiceConfiguration, transport: any HTTPTransport
  )
    async throws -> Bool
  {
    let client = configuration.client
    guard let secret = client.secret else {
      throw TokenKitError(
        .notConfigured, "GitHub revokes a token only for the app that holds the client secret, and none is configured",
        remedy: .configure(type: configuration.descriptor.id, setting: "client_secret"))
    }
    let url = Self.api(configuration).appending(path: "applications").appending(path: client.id)
      .appending(path: "token")
    let credentials = Data("\(client.id):\(secret)".utf8).base64EncodedString()
    let encoder = JSONEncoder()
    // The token is the only member; encoding a string cannot fail.
    let body = try encoder.encode(JSONValue.object(["access_token": .string(tokens.accessToken)]))
    let request = HTTPRequest(
      method: "DELETE", url: url,
      headers: Self.headers + [
        HTTPHeader("Authorization", "Basic \(credentials)"), HTTPHeader("Content-Type", "application/json"),
      ],
      body: Array(body))
    let response = try await Self.send(request, transport: transport, action: "revoke the token at GitHub")
    // GitHub answers 204. A 404 also answers an unknown token, but equally wrong client
    // credentials, so it cannot be taken to mean the token is dead.
    guard (200..<300).contains(response.status) else {
      throw TokenKitError(
        .revocationFailed, "GitHub answered HTTP \(response.status) to DELETE \(url.absoluteString)",
        recovery: response.status == 404
          ? "Check the client id and secret; a token GitHub no longer knows also gets 404." : nil)
    }
    return true
  }

  /// The headers GitHub asks every REST call to send.
  static let headers = [
    HTTPHeader("Accept", "application/vnd.github+json"), HTTPHeader("X-GitHub-Api-Version", apiVersion),
  ]

  static func api(_ configuration: ServiceConfiguration) -> URL {
    configuration.descriptor.apiBase ?? defaultAPIBase
  }

  static func send(_ request: HTTPRequest, transport: any HTTPTransport, action: String) async throws -> HTTPResponse {
    do {
      return try await transport.send(request)
    } catch {
      throw TokenKitError(.transport(error), while: action)
    }
  }
}
