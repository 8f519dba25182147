#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Sends requests on behalf of an account, as NXOAuth2Request did: with a fresh bearer
/// token, one refresh and retry on 401, and patience for `Retry-After` on 429 and 503.
public struct AuthorizedClient: Sendable {
  public var manager: AccountManager
  public var account: AccountKey
  /// The scopes the token must carry instead of the account's own (RFC 6749 §6); nil: the
  /// account's own token.
  public var scopes: ScopeSet?
  /// Waits before a retry; injected so tests need not wait.
  public var sleep: @Sendable (Double) async throws -> Void
  /// The longest `Retry-After` honoured, and how often: beyond either the response is
  /// returned as it is, since a caller waiting minutes is worse than one told to retry.
  public var maximumRetryAfter: Double = 60
  public var maximumRetries = 3

  public init(
    manager: AccountManager, account: AccountKey, scopes: ScopeSet? = nil,
    sleep: @escaping @Sendable (Double) async throws -> Void = { try await Task.sleep(for: .seconds($0)) }
  ) {
    self.manager = manager
    self.account = account
    self.scopes = scopes
    self.sleep = sleep
  }

  /// Sends `request` with the account's token. Refuses an origin (scheme, host and port)
  /// the account type does not serve unless `allowed` names it: a token sent to the wrong
  /// server is a token given away.
  public func send(_ request: HTTPRequest, allowed: Set<Origin> = []) async throws -> HTTPResponse {
    let descriptor = try manager.registry.descriptor(account.type)
    let host = request.url.host()?.lowercased() ?? ""
    guard Loopback.isSecureOrLoopback(request.url) else {
      throw TokenKitError(
        .notConfigured, "tokens are sent over https only, not to \(request.url.scheme ?? "?")://\(host)")
    }
    guard let origin = Origin(request.url), descriptor.servedOrigins.contains(origin) || allowed.contains(origin)
    else {
      if try await isUserinfoEndpoint(request.url, of: descriptor) { return try await authorized(request, host: host) }
      let named = Origin(request.url)?.description ?? host
      throw TokenKitError(
        .notConfigured,
        "account type '\(account.type)' does not serve \(named), so its token is not sent there",
        remedy: .allowOrigin(named))
    }
    return try await authorized(request, host: host)
  }

  /// Whether `url` is the userinfo endpoint (OpenID Connect Core §5.3) of the issuer the
  /// account signed in at, for a type that discovers its endpoints: the one place besides
  /// the types' own hosts that a token is meant for, which a type with fixed endpoints
  /// serves already (``EndpointDescriptor/servedOrigins``). Exactly that URL, not its
  /// origin: an issuer's host may serve other things.
  private func isUserinfoEndpoint(_ url: URL, of descriptor: EndpointDescriptor) async throws -> Bool {
    if case .fixed = descriptor.endpoints { return false }
    guard url.query == nil, url.fragment == nil,
      let listed = try manager.store.list(AccountQuery(type: account.type, id: account.id)).first
    else { return false }
    let configuration = try await ServiceConfiguration.resolve(
      for: listed.account, descriptor: descriptor, behavior: manager.registry.behavior(account.type),
      discovery: manager.discovery)
    return configuration.endpoints.userinfo?.absoluteString == url.absoluteString
  }

  /// Sends `request`, which may go where it goes, with the account's token.
  private func authorized(_ request: HTTPRequest, host: String) async throws -> HTTPResponse {
    var tokens =
      if let scopes {
        try await manager.freshTokens(for: account, scopes: scopes)
      } else {
        try await manager.freshTokens(for: account)
      }
    var refreshed = false
    var retries = 0
    while true {
      var authorized = request
      authorized.headers.removeAll { $0.name.lowercased() == "authorization" }
      authorized.headers.append(HTTPHeader("Authorization", "Bearer \(tokens.accessToken)"))
      let response: HTTPResponse
      do {
        response = try await manager.transport.send(authorized)
      } catch {
        throw TokenKitError(
          .networkFailure, "could not reach \(host): \(error.message)",
          recovery: "Check the network connection and try again.")
      }
      // A 401 may mean the token was revoked or expired early: one refresh, one retry.
      if response.status == 401, !refreshed {
        refreshed = true
        tokens =
          if let scopes { try await manager.refresh(account, scopes: scopes) } else {
            try await manager.refresh(account).tokens
          }
        continue
      }
      if response.status == 429 || response.status == 503, retries < maximumRetries,
        let wait = response.header("Retry-After").flatMap(Double.init), wait >= 0, wait <= maximumRetryAfter
      {
        retries += 1
        try await sleep(wait)
        continue
      }
      return response
    }
  }
}
