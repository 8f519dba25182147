import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Microsoft Graph through the Microsoft identity platform (v2.0 endpoints): the account
/// type of the Azure AD v2.0 walkthrough this project descends from.
public enum MicrosoftGraphPlugin: AccountTypePlugin {
  public static let name = "MicrosoftGraph"

  /// The endpoints for any work, school or personal account in the global cloud; the
  /// `tenant`, `authority_host` and `graph_host` settings narrow or move them.
  public static let descriptor: EndpointDescriptor = {
    var descriptor = graphDescriptor
    // Microsoft's refresh tokens expire after 90 days without use ("Refresh token
    // lifetime", Microsoft identity platform docs): the agent refreshes before then.
    descriptor.refreshTokenIdleLifetime = 90 * 24 * 3600
    return descriptor
  }()

  private static let graphDescriptor = EndpointDescriptor(
    id: "graph",
    displayName: "Microsoft Graph (Microsoft identity platform v2.0)",
    endpoints: .fixed(
      endpoints(authorityHost: "login.microsoftonline.com", tenant: "common", graphHost: "graph.microsoft.com")),
    // The walkthrough's scopes: sign-in, a refresh token, and reading users to search them.
    defaultScopes: ["openid", "profile", "offline_access", "User.Read", "User.ReadBasic.All"],
    // Microsoft registers desktop redirects as `http://localhost` and ignores the port.
    redirect: .loopback(host: "localhost"),
    // Microsoft's device code endpoint says `authorization_declined` where RFC 8628 §3.5
    // says `access_denied`.
    deviceGrantErrorAliases: ["authorization_declined": "access_denied"],
    // A national cloud (graph.microsoft.us) is the `graph_host` setting; `GraphClient`
    // follows whichever base the type names.
    apiBase: URL(string: "https://graph.microsoft.com/v1.0")!,
    // An app-only token asks for the resource's `.default` scope: the application
    // permissions an administrator granted ("The .default scope",
    // https://learn.microsoft.com/en-us/entra/identity-platform/scopes-oidc#the-default-scope).
    clientCredentialsScopes: ["https://graph.microsoft.com/.default"]
  )

  public static var descriptors: [EndpointDescriptor] { [descriptor] }

  /// `[types.graph]` takes `tenant` (`common`, `organizations`, `consumers`, a tenant id
  /// or domain), and for a national cloud `authority_host` (`login.microsoftonline.us`)
  /// and `graph_host` (`graph.microsoft.us`). A host may name a port
  /// (`login.example.test:8443`), for a stand-in or a proxy of the platform.
  public static var optionKeys: [String: [String]] { [descriptor.id: ["tenant", "authority_host", "graph_host"]] }

  public static func configure(
    _ descriptor: EndpointDescriptor, options: [String: String]
  ) throws
    -> EndpointDescriptor
  {
    func checked(_ key: String, _ fallback: String, allowed: Set<Character>) throws -> String {
      guard let value = options[key] else { return fallback }
      // These go into URLs: a stray '/', '?' or '@' would change which server we talk to.
      guard !value.isEmpty, value.count <= 253, value.allSatisfy(allowed.contains), value.first != "." else {
        throw TokenKitError(
          .notConfigured, "\(key) '\(value)' is not a valid \(key == "tenant" ? "tenant" : "host name")")
      }
      return value.lowercased()
    }
    let hostCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
    let tenant = try checked("tenant", "common", allowed: hostCharacters)
    let authorityHost = try checked("authority_host", "login.microsoftonline.com", allowed: hostCharacters.union(":"))
    let graphHost = try checked("graph_host", "graph.microsoft.com", allowed: hostCharacters.union(":"))
    for (key, value) in [("authority_host", authorityHost), ("graph_host", graphHost)] {
      // One optional `:port`, digits only, after a host name.
      let parts = value.split(separator: ":", omittingEmptySubsequences: false)
      guard parts.count <= 2, !parts[0].isEmpty,
        parts.count == 1 || (!parts[1].isEmpty && parts[1].count <= 5 && parts[1].allSatisfy(\.isNumber))
      else { throw TokenKitError(.notConfigured, "\(key) '\(value)' is not a valid host name") }
    }
    var configured = descriptor
    configured.endpoints = .fixed(endpoints(authorityHost: authorityHost, tenant: tenant, graphHost: graphHost))
    configured.apiBase = URL(string: "https://\(graphHost)/v1.0")
    configured.clientCredentialsScopes = ["https://\(graphHost)/.default"]
    return configured
  }

  /// The v2.0 endpoints of `tenant` at `authorityHost`.
  static func endpoints(authorityHost: String, tenant: String, graphHost: String) -> Endpoints {
    let authority = "https://\(authorityHost)/\(tenant)/oauth2/v2.0"
    return Endpoints(
      authorization: URL(string: "\(authority)/authorize")!,
      token: URL(string: "\(authority)/token")!,
      deviceAuthorization: URL(string: "\(authority)/devicecode")!,
      // Microsoft publishes no RFC 7009 revocation endpoint.
      revocation: nil,
      userinfo: URL(string: "https://\(graphHost)/oidc/userinfo")!,
      // The keys that sign ID tokens of every tenant. The issuer is left open: it names
      // the user's tenant (`…/{tid}/v2.0`), which `common` cannot know in advance.
      jwks: URL(string: "https://\(authorityHost)/\(tenant)/discovery/v2.0/keys")!)
  }

  public static var behaviors: [String: any AccountTypeBehavior] { [descriptor.id: MicrosoftGraphBehavior()] }

  /// The tenants that are not one tenant: who may sign in, not where ("Endpoints",
  /// https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols#endpoints).
  static let multiTenantAliases: Set<String> = ["common", "organizations", "consumers"]

  /// The tenant id of every personal Microsoft account ("tid",
  /// https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference).
  static let personalAccountsTenant = "9188040d-6c67-4c5b-b112-36a304b66dad"

  /// `host[:port]` of `url`.
  static func authority(of url: URL) -> String? {
    guard let host = url.host?.lowercased() else { return nil }
    return url.port.map { "\(host):\($0)" } ?? host
  }

  /// The tenant of an issuer, `https://AUTHORITY/{tid}/v2.0`.
  static func tenant(ofIssuer issuer: URL) -> String? {
    let parts = issuer.path.split(separator: "/")
    guard parts.count == 2, parts[1] == "v2.0", !parts[0].isEmpty else { return nil }
    return String(parts[0]).lowercased()
  }

  /// The tenant of an endpoint, `https://AUTHORITY/{tenant}/oauth2/v2.0/…`.
  static func tenant(ofEndpoint endpoint: URL) -> String? {
    endpoint.path.split(separator: "/").first.map { String($0).lowercased() }
  }
}
