#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Everything tokenctl needs to know to get tokens from one service: an account type.
///
/// The fields map to OAuth 2.0 client metadata (RFC 7591 §2) and authorization server
/// metadata (RFC 8414 §2). What a provider does differently is expressed through these
/// fields, `additionalAuthorizationParameters` above all, and never by a provider name
/// in the core.
public struct EndpointDescriptor: Sendable, Hashable {
  /// The account type's id, as users type it (`corp`). Lowercase letters, digits, `-`.
  public var id: String
  /// A name for people (`Corp single sign-on`).
  public var displayName: String
  /// Where the endpoints come from.
  public var endpoints: EndpointConfiguration
  /// Scopes requested when the user names none (RFC 6749 §3.3).
  public var defaultScopes: [String]
  /// `client_id` (RFC 6749 §2.2). We ship none: the user registers an app and configures
  /// it, so this is `nil` until then.
  public var clientID: String?
  /// `client_secret` (RFC 6749 §2.3.1), for types whose "public" clients still need one.
  public var clientSecret: String?
  /// How the browser comes back to us (RFC 8252 §7).
  public var redirect: RedirectPolicy
  /// How the client authenticates at the token endpoint (RFC 8414
  /// `token_endpoint_auth_method`).
  public var tokenEndpointAuthentication: ClientAuthenticationMethod
  /// Extra query parameters on the authorization request (`prompt`, `access_type`, …).
  public var additionalAuthorizationParameters: [String: String]
  /// Which git hosts this type's tokens are for, and the username git must send.
  public var git: GitIntegration?
  /// Provider-specific device-grant errors and the RFC 8628 §3.5 error each means
  /// (`authorization_declined` → `access_denied`).
  public var deviceGrantErrorAliases: [String: String]
  /// The base of the service's API: `tokenctl request ACCOUNT /me` resolves `/me` against
  /// it, and its host is one the type's tokens may be sent to.
  public var apiBase: URL?
  /// How long, in seconds, the provider keeps a refresh token that is not used, when it
  /// says: whoever keeps accounts alive refreshes before then.
  public var refreshTokenIdleLifetime: Double?
  /// The scopes a service account asks for when the user names none (RFC 6749 §4.4.2):
  /// an app-only token is for a resource rather than a user, and some platforms name it
  /// by a scope of its own. Nil: `defaultScopes`.
  public var clientCredentialsScopes: [String]?
  /// The scopes a sign-in asks for when the user names none: `defaultScopes`, or, for a
  /// type that discovers its endpoints from an issuer and names no scope (a type file
  /// without `scopes`), `openid`. Without it an OpenID Connect issuer issues no ID token
  /// and its userinfo endpoint refuses the token (OpenID Connect Core §3.1.2.1, §5.3.1),
  /// so the sign-in could not tell who signed in; more is the type's to ask for.
  public var signInScopes: [String] {
    guard defaultScopes.isEmpty else { return defaultScopes }
    switch endpoints {
    case .fixed: return []
    case .discovered, .discoveredFromUserIssuer: return ["openid"]
    }
  }
  /// Whether a sign-in without a client id may register one at the issuer (RFC 7591),
  /// when its discovery document offers a `registration_endpoint`.
  public var dynamicRegistration = false
  /// Client metadata a server needs beyond RFC 7591's when registering (the type's
  /// `registration_metadata`); the RFC's members win over these.
  public var additionalRegistrationMetadata: [String: JSONValue] = [:]
  /// Whether the issuer follows OpenID Connect Core §11 to the letter: it honours
  /// `offline_access` (issues a refresh token) only on a request with `prompt=consent`.
  /// The sign-in then asks for consent when it needs a refresh token
  /// (``OfflineAccessConsent``).
  public var offlineAccessNeedsConsent = false

  public init(
    id: String, displayName: String, endpoints: EndpointConfiguration,
    defaultScopes: [String] = [], clientID: String? = nil, clientSecret: String? = nil,
    redirect: RedirectPolicy = .loopback(),
    tokenEndpointAuthentication: ClientAuthenticationMethod = .none,
    additionalAuthorizationParameters: [String: String] = [:], git: GitIntegration? = nil,
    deviceGrantErrorAliases: [String: String] = [:], apiBase: URL? = nil, clientCredentialsScopes: [String]? = nil
  ) {
    self.clientCredentialsScopes = clientCredentialsScopes
    self.apiBase = apiBase
    self.deviceGrantErrorAliases = deviceGrantErrorAliases
    self.id = id
    self.displayName = displayName
    self.endpoints = endpoints
    self.defaultScopes = defaultScopes
    self.clientID = clientID
    self.clientSecret = clientSecret
    self.redirect = redirect
    self.tokenEndpointAuthentication = tokenEndpointAuthentication
    self.additionalAuthorizationParameters = additionalAuthorizationParameters
    self.git = git
  }

  /// The origins this type's access tokens may be sent to: the API's, the git hosts'
  /// (https), and the userinfo endpoint's. Sending a token anywhere else, another port
  /// of the same host included, needs the user's say-so.
  public var servedOrigins: Set<Origin> {
    var origins = Set((git?.hosts ?? []).compactMap { Origin(naming: $0) })
    if let origin = apiBase.flatMap(Origin.init) { origins.insert(origin) }
    if case .fixed(let endpoints) = endpoints, let origin = endpoints.userinfo.flatMap(Origin.init) {
      origins.insert(origin)
    }
    return origins
  }

  /// The hosts of ``servedOrigins``, for people to read.
  public var servedHosts: Set<String> { Set(servedOrigins.map(\.host)) }

  /// Whether `id` may name an account type: lowercase ASCII letters, digits and `-`, not
  /// starting with `-`, so that it is safe in keyring attributes, file names, `TYPE:NAME`
  /// references and command lines.
  public static func isValidID(_ id: String) -> Bool {
    !id.isEmpty && id.first != "-"
      && id.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
  }

  /// The problems that make this descriptor unusable; empty when it is sound.
  public var problems: [String] {
    var problems: [String] = []
    if !Self.isValidID(id) {
      problems.append("id '\(id)' must be lowercase letters, digits and '-', not starting with '-'")
    }
    if displayName.isEmpty { problems.append("display name is empty") }
    problems += endpoints.problems
    if tokenEndpointAuthentication != .none, clientSecret == nil, clientID != nil {
      problems.append(
        "token endpoint authentication '\(tokenEndpointAuthentication.rawValue)' needs a client secret")
    }
    return problems
  }
}

/// `client_secret_basic`, `client_secret_post` or `none`, as RFC 8414 and RFC 7591 name
/// them.
public enum ClientAuthenticationMethod: String, Sendable, Hashable, CaseIterable {
  /// A public client: only `client_id` in the body (RFC 6749 §2.1, native apps).
  case none
  /// HTTP Basic with the client id and secret (RFC 6749 §2.3.1).
  case clientSecretBasic = "client_secret_basic"
  /// The client id and secret in the request body (RFC 6749 §2.3.1).
  case clientSecretPost = "client_secret_post"
}
