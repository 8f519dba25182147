#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An authorization request (RFC 6749 §4.1.1) with PKCE (RFC 7636 §4.3) and, for OpenID
/// Connect, a nonce (Core §3.1.2.1): the URL the browser opens.
///
/// `state`, the PKCE verifier and the nonce are made fresh for every request, and checked
/// against the response by `judge(_:)`.
public struct AuthorizationRequest: Sendable, Hashable, CustomStringConvertible {
  public var endpoint: URL
  public var clientID: String
  public var redirectURI: String
  public var scopes: [String]
  /// `state` (§10.12): binds the response to this request.
  public var state: String
  public var pkce: PKCE
  /// `nonce`, sent when `openid` is among the scopes.
  public var nonce: String?
  /// The issuer the response's `iss` must equal (RFC 9207), when known.
  public var expectedIssuer: String?
  /// Extra parameters from the account type (`prompt`, `access_type`, `login_hint`).
  public var additionalParameters: [String: String]

  public init(
    endpoint: URL, clientID: String, redirectURI: String, scopes: [String],
    expectedIssuer: String? = nil, additionalParameters: [String: String] = [:],
    state: String = RandomToken.make(), pkce: PKCE = PKCE(), nonce: String? = nil
  ) {
    self.endpoint = endpoint
    self.clientID = clientID
    self.redirectURI = redirectURI
    self.scopes = scopes
    self.expectedIssuer = expectedIssuer
    self.additionalParameters = additionalParameters
    self.state = state
    self.pkce = pkce
    self.nonce = nonce ?? (scopes.contains("openid") ? RandomToken.make() : nil)
  }

  /// The URL to open in the browser.
  public var url: URL {
    var fields: [(String, String)] = [
      ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI), ("state", state),
      ("code_challenge", pkce.challenge), ("code_challenge_method", pkce.method),
    ]
    // RFC 6749 §3.3: scope is optional; an empty one is a scope of zero length, which
    // servers refuse (invalid_scope) instead of applying their defaults.
    if !scopes.isEmpty { fields.insert(("scope", scopes.joined(separator: " ")), at: 3) }
    if let nonce { fields.append(("nonce", nonce)) }
    let reserved = Set(fields.map(\.0))
    // The protocol's own parameters win: an account type cannot switch PKCE off.
    fields += additionalParameters.sorted { $0.key < $1.key }.filter { !reserved.contains($0.key) }
      .map { ($0.key, $0.value) }
    let base = endpoint.absoluteString
    let separator = base.contains("?") ? "&" : "?"
    // `endpoint` is a valid URL and the query is percent-encoded, so this cannot fail.
    return URL(string: base + separator + FormEncoding.encode(fields))!
  }

  /// What to do with a callback that reached the redirect URI (RFC 6749 §4.1.2, §10.12;
  /// RFC 9207 §2.4).
  ///
  /// With `bareCodeAllowed`, a lone `code` (what a user pastes from a page that shows only
  /// the code) is accepted without `state`: the user carried it by hand, so there is no
  /// redirect to forge, and PKCE still binds the code to this request's verifier.
  public func judge(_ callback: AuthorizationCallback, bareCodeAllowed: Bool = false) -> CallbackVerdict {
    if bareCodeAllowed, callback.parameters.map(\.name) == ["code"], callback["code"]?.isEmpty == false {
      return .accept
    }
    for name in ["state", "code", "iss", "error"] where callback.count(of: name) > 1 {
      return .ignore(reason: "The response repeats the \(name) parameter.")
    }
    // A response without our state is not the answer to this request: a stale tab, or
    // another local process trying to slip us its code. It must not end the sign-in.
    guard callback["state"] == state else {
      return .ignore(reason: "This response does not belong to the sign-in in progress (state mismatch).")
    }
    if let expectedIssuer, let iss = callback["iss"], iss != expectedIssuer {
      return .reject(message: "The response came from issuer \(iss), not \(expectedIssuer).")
    }
    if let expectedIssuer, lacksIssuer(callback) {
      return .reject(message: "The response does not name its issuer, which \(expectedIssuer) always does (RFC 9207).")
    }
    if let error = callback["error"] {
      let oauth = OAuthError(code: error, errorDescription: callback["error_description"])
      return .reject(message: "The sign-in was refused: \(oauth).")
    }
    guard let code = callback["code"], !code.isEmpty else {
      return .ignore(reason: "The response carries no authorization code.")
    }
    return .accept
  }

  /// Whether a response with a code lacks `iss` (RFC 9207 §2.4: a client must refuse that
  /// from a server that sends it). Error responses without it are let through: some
  /// servers (django-oauth-toolkit) add it to successful responses only, and an error ends
  /// the sign-in anyway, so no code can go to the wrong server.
  private func lacksIssuer(_ callback: AuthorizationCallback) -> Bool {
    callback["iss"] == nil && callback["error"] == nil
  }

  /// The code of an accepted callback, or the error the callback carries.
  public func outcome(of callback: AuthorizationCallback, bareCodeAllowed: Bool = false) throws -> String {
    // Only a response to this request may end it, in success or in failure.
    let bareCode = bareCodeAllowed && callback.parameters.map(\.name) == ["code"]
    guard bareCode || (callback.count(of: "state") == 1 && callback["state"] == state) else {
      throw TokenKitError(.signInFailed, "the authorization response does not belong to this sign-in (state mismatch)")
    }
    if callback["state"] == state, let expectedIssuer,
      callback["iss"].map({ $0 != expectedIssuer }) ?? lacksIssuer(callback)
    {
      throw TokenKitError(
        .signInFailed,
        "the authorization response came from issuer \(callback["iss"] ?? "(not named)"), not \(expectedIssuer)",
        recovery: "Someone may be trying to mix up two servers (RFC 9207). Sign in again.")
    }
    if let error = callback["error"] {
      let oauth = OAuthError(code: error, errorDescription: callback["error_description"])
      if error == OAuthError.accessDenied {
        throw TokenKitError(
          .accessDenied, "the sign-in was refused (\(oauth))",
          remedy: .allowAccess(type: nil))
      }
      throw TokenKitError(.signInFailed, "the authorization server refused the sign-in (\(oauth))")
    }
    guard judge(callback, bareCodeAllowed: bareCodeAllowed) == .accept, let code = callback["code"] else {
      throw TokenKitError(.signInFailed, "the authorization response is not usable")
    }
    return code
  }

  public var description: String {
    "AuthorizationRequest(\(endpoint.absoluteString), client_id: \(clientID), scope: \(scopes.joined(separator: " ")))"
  }
}
