import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Microsoft Graph for one signed-in account: the walkthrough's user search, detail view
/// and profile, over an `AuthorizedClient` that keeps the token fresh and honours
/// `Retry-After`.
///
/// The service's address is the account type's `apiBase`, so a national cloud is a type
/// with another base, and a test points it at a fake on 127.0.0.1.
public struct GraphClient: Sendable {
  public var client: AuthorizedClient
  /// The API base without a trailing `/`: `https://graph.microsoft.com/v1.0`.
  public let base: URL

  /// Graph's largest page of users: a larger `$top` is an error.
  static let maximumPageSize = 999
  /// Pages followed at most in one search, so that a server handing out next-page links
  /// with empty pages cannot keep us busy for ever.
  static let maximumPages = 100

  public init(client: AuthorizedClient) throws {
    let type = client.account.type
    guard let apiBase = try client.manager.registry.descriptor(type).apiBase else {
      throw TokenKitError(
        .notConfigured, "account type '\(type)' has no API base, so tokenctl does not know where its Graph service is",
        recovery: "Use a graph account, or an account type whose descriptor sets api_base.")
    }
    var text = apiBase.absoluteString
    while text.hasSuffix("/") { text.removeLast() }
    guard let base = URL(string: text) else {
      throw TokenKitError(.notConfigured, "account type '\(type)' has an unusable API base \(apiBase.absoluteString)")
    }
    self.client = client
    self.base = base
  }

  // MARK: The walkthrough's views

  /// The first `limit` users matching `filter`, following `@odata.nextLink` within the
  /// Graph service only.
  public func searchUsers(_ filter: GraphUserFilter, limit: Int) async throws -> GraphSearchResult {
    var result = GraphSearchResult(users: [])
    guard limit > 0 else { return result }
    var next = try url("/users", query: filter.query(top: min(limit, Self.maximumPageSize)))
    for _ in 0..<Self.maximumPages {
      let page = try await get(
        next, as: Page.self, action: "search users whose \(filter.field) starts with '\(filter.prefix)'")
      result.users += page.value
      guard let link = page.nextLink else { break }
      guard result.users.count < limit else {
        result.hasMore = true
        break
      }
      guard let url = URL(string: link), isGraph(url) else {
        result.refusedNextLink = URL(string: link)
        break
      }
      next = url
    }
    if result.users.count > limit {
      result.users.removeLast(result.users.count - limit)
      result.hasMore = true
    }
    return result
  }

  /// One user by id or user principal name.
  public func user(_ idOrPrincipalName: String) async throws -> GraphUser {
    let url = try url("/users/" + GraphQuery.escape(idOrPrincipalName))
    return try await get(url, as: GraphUser.self, action: "look up user '\(idOrPrincipalName)'")
  }

  /// The signed-in user.
  public func me() async throws -> GraphUser {
    try await get(try url("/me"), as: GraphUser.self, action: "read the signed-in user's profile")
  }

  /// The delegated permission `POST /me/revokeSignInSessions` needs
  /// (https://learn.microsoft.com/en-us/graph/api/user-revokesigninsessions#permissions),
  /// which no sign-in asks for by default: it is asked for this one call, as a token for
  /// other scopes from the account's grant.
  public static let revokeSessionsPermission = "User.RevokeSessions.All"

  /// Invalidates every refresh token and session cookie Microsoft issued to the signed-in
  /// user (`POST /me/revokeSignInSessions`): every app must sign in again, this one too.
  ///
  /// Refused for a guest account: Graph revokes the sessions its tenant issued, and a
  /// guest signs in at home, whose sessions live on; saying "signed out everywhere" would
  /// be false.
  public func revokeSignInSessions() async throws {
    // Graph's default properties leave `userType` out: it is asked for by name.
    let me = try await get(
      try url("/me", query: "$select=id,userType"), as: GraphUser.self, action: "read whether the account is a guest")
    if me.userType?.lowercased() == "guest" {
      throw TokenKitError(
        .accessDenied,
        "the account is a guest in this tenant, and Microsoft Graph revokes only the sessions of the tenant it "
          + "asks; the user's sessions at home would live on, so nothing was revoked",
        recovery: "Sign in to the user's home tenant and revoke the sessions there.")
    }
    var scoped = client
    scoped.scopes = ScopeSet([Self.revokeSessionsPermission])
    let request = HTTPRequest(
      method: "POST", url: try url("/me/revokeSignInSessions"), headers: [HTTPHeader("Accept", "application/json")])
    let response = try await scoped.send(request)
    try check(response, action: "revoke the sign-in sessions", permission: Self.revokeSessionsPermission)
  }

  // MARK: Requests

  /// Whether `url` is on this Graph service: same scheme, host and port, under the base
  /// path. The access token goes wherever a followed link points.
  func isGraph(_ url: URL) -> Bool {
    url.scheme?.lowercased() == base.scheme?.lowercased() && url.host()?.lowercased() == base.host()?.lowercased()
      && url.port == base.port && (url.path() + "/").hasPrefix(base.path() + "/")
  }

  private func url(_ path: String, query: String? = nil) throws -> URL {
    let text = base.absoluteString + path + (query.map { "?" + $0 } ?? "")
    guard let url = URL(string: text) else {
      throw TokenKitError(.notConfigured, "cannot build a Graph address from \(text)")
    }
    return url
  }

  private func get<Value: Decodable>(
    _ url: URL, as type: Value.Type, action: String
  ) async throws -> Value {
    let response = try await client.send(
      HTTPRequest(method: "GET", url: url, headers: [HTTPHeader("Accept", "application/json")]))
    try check(response, action: action)
    do {
      return try JSONDecoder().decode(Value.self, from: Data(response.body))
    } catch {
      throw TokenKitError(.serverError, "could not \(action): Microsoft Graph's answer is not the JSON expected")
    }
  }

  /// Throws for an error status, with Graph's own code and message (its error format:
  /// `{"error": {"code", "message"}}`).
  private func check(_ response: HTTPResponse, action: String, permission: String = "User.ReadBasic.All") throws {
    guard !(200..<300).contains(response.status) else { return }
    let detail = try? JSONDecoder().decode(ErrorDocument.self, from: Data(response.body)).error
    var message = "could not \(action): Microsoft Graph answered HTTP \(response.status)"
    // Graph's words are quoted escaped: a line break in them must not start a line of ours.
    if let detail {
      message +=
        " \(ServerText.escaped(detail.code ?? ""))" + (detail.message.map { ": \(ServerText.escaped($0))" } ?? "")
    }
    var recovery: String?
    var remedy: TokenKitError.Remedy?
    switch response.status {
    case 401 where (response.header("WWW-Authenticate") ?? "").contains("insufficient_claims"):
      // A claims challenge that a refresh did not cure (the client has refreshed once
      // already): Conditional Access wants an authentication context (a stronger factor,
      // a compliant device) for this resource ("Claims challenges, claims requests and
      // client capabilities",
      // https://learn.microsoft.com/en-us/entra/identity-platform/claims-challenge). Meeting
      // it takes the challenge's `claims` in a new interactive sign-in, which tokenctl does
      // not send, so a plain new sign-in would fail the same way.
      message += " (a claims challenge: the resource wants a stronger sign-in than this account's)"
      recovery =
        "tokenctl cannot answer Conditional Access claims challenges, so signing in again would not help; ask "
        + "the administrator which authentication context this resource requires, or use a tool that declares "
        + "the cp1 client capability (such as the Azure CLI) for it."
    case 401:
      remedy = .signIn(type: client.account.type, device: false)
    case 403:
      recovery =
        "The account lacks the permission this needs (\(permission));"
        + " an administrator may have to consent to it."
    case 429, 503:
      recovery =
        "Microsoft Graph is throttling requests; try again "
        + (response.header("Retry-After").map { "in \(ServerText.escaped($0)) s." } ?? "later.")
    default:
      recovery = nil
    }
    throw TokenKitError(.serverError, message, recovery: recovery, remedy: remedy)
  }

  /// One page of a collection (OData JSON format §12).
  private struct Page: Decodable {
    var value: [GraphUser]
    var nextLink: String?

    enum CodingKeys: String, CodingKey {
      case value
      case nextLink = "@odata.nextLink"
    }
  }

  private struct ErrorDocument: Decodable {
    struct Detail: Decodable {
      var code: String?
      var message: String?
    }
    var error: Detail
  }
}
