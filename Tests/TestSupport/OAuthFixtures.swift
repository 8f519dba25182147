import Foundation
import TokenKit

/// Values shared by the OAuth, account and plugin tests.
public enum OAuthFixtures {
  public static let now = Date(timeIntervalSince1970: 1_800_000_000)
  public static let issuer = "https://issuer.example"
  public static let clientID = "tokenctl-test"
  public static let secret = "s3cr3t-client-secret"

  // Loopback addresses nothing listens on: the transport is scripted, these are never dialed.
  public static let authorizationURL = URL(string: "http://127.0.0.1:9/authorize")!
  public static let tokenURL = URL(string: "http://127.0.0.1:9/token")!
  public static let deviceURL = URL(string: "http://127.0.0.1:9/device")!
  public static let revocationURL = URL(string: "http://127.0.0.1:9/revoke")!
  public static let jwksURL = URL(string: "http://127.0.0.1:9/jwks")!
  public static let userinfoURL = URL(string: "http://127.0.0.1:9/userinfo")!

  public static func endpoints(
    revocation: Bool = true, device: Bool = true, jwks: Bool = true, userinfo: Bool = false
  ) -> Endpoints {
    Endpoints(
      authorization: authorizationURL, token: tokenURL, deviceAuthorization: device ? deviceURL : nil,
      revocation: revocation ? revocationURL : nil, userinfo: userinfo ? userinfoURL : nil,
      jwks: jwks ? jwksURL : nil, issuer: issuer)
  }

  public static func descriptor(
    id: String = "corp", endpoints: Endpoints = endpoints(), clientSecret: String? = nil,
    authentication: ClientAuthenticationMethod = .none, aliases: [String: String] = [:],
    scopes: [String] = ["openid", "profile", "offline_access"]
  ) -> EndpointDescriptor {
    EndpointDescriptor(
      id: id, displayName: "Corp", endpoints: .fixed(endpoints), defaultScopes: scopes, clientID: clientID,
      clientSecret: clientSecret, tokenEndpointAuthentication: authentication, deviceGrantErrorAliases: aliases)
  }

  public static func registry(_ descriptors: EndpointDescriptor...) throws -> AccountTypeRegistry {
    var registry = AccountTypeRegistry()
    for descriptor in descriptors.isEmpty ? [descriptor()] : descriptors {
      try registry.register(descriptor, source: "test")
    }
    return registry
  }

  public static func configuration(_ descriptor: EndpointDescriptor = descriptor()) -> ServiceConfiguration {
    guard case .fixed(let endpoints) = descriptor.endpoints else { fatalError("fixed endpoints only") }
    return ServiceConfiguration(
      descriptor: descriptor, endpoints: endpoints,
      client: ClientIdentity(
        id: descriptor.clientID ?? clientID, secret: descriptor.clientSecret,
        authentication: descriptor.tokenEndpointAuthentication),
      issuer: endpoints.issuer)
  }

  public static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
