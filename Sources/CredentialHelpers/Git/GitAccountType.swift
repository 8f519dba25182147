import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An account type as git's credential helper sees it: its git settings, and what of its
/// endpoints decides which hosts it serves.
public struct GitAccountType: Sendable, Hashable {
  /// The type's id (`github`).
  public var id: String
  /// The hosts it serves and the username git must send.
  public var git: GitIntegration
  /// The issuer the type discovers its endpoints from, when it is fixed: a type that lists
  /// no hosts serves this issuer's host even before an account signs in to it.
  public var configuredIssuer: URL?
  /// Whether the type's authorization server is on this machine: only then may plain http
  /// to a loopback host carry its tokens, as in the tests.
  public var hasLoopbackServer: Bool

  public init(id: String, git: GitIntegration, configuredIssuer: URL? = nil, hasLoopbackServer: Bool = false) {
    self.id = id
    self.git = git
    self.configuredIssuer = configuredIssuer
    self.hasLoopbackServer = hasLoopbackServer
  }

  /// The type a descriptor describes; nil when its tokens are not for git.
  public init?(_ descriptor: EndpointDescriptor) {
    guard let git = descriptor.git else { return nil }
    let configuredIssuer: URL?
    let server: URL?
    switch descriptor.endpoints {
    case .fixed(let endpoints): (configuredIssuer, server) = (nil, endpoints.token)
    case .discovered(let issuer): (configuredIssuer, server) = (issuer, issuer)
    case .discoveredFromUserIssuer: (configuredIssuer, server) = (nil, nil)
    }
    self.init(
      id: descriptor.id, git: git, configuredIssuer: configuredIssuer,
      hasLoopbackServer: server.map { GitHost.isLoopback($0.host() ?? "") } ?? false)
  }
}
