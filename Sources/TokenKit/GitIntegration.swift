/// How an account type's tokens are used by git.
public struct GitIntegration: Sendable, Hashable {
  /// Hosts whose git remotes take this type's tokens (`git.example.org`).
  public var hosts: [String]
  /// The username git must send alongside the token.
  public var username: GitUsername
  /// Whether the hosts take the token as `Authorization: Bearer`, so that a git that
  /// announces `capability[]=authtype` may be answered with `authtype=Bearer`. Off unless
  /// a type says so: most git hosts take OAuth tokens only as a Basic password.
  public var bearer: Bool

  public init(hosts: [String], username: GitUsername, bearer: Bool = false) {
    self.hosts = hosts
    self.username = username
    self.bearer = bearer
  }
}

/// The username a git host expects with an OAuth token as password.
public enum GitUsername: Sendable, Hashable, CustomStringConvertible {
  /// A fixed string, such as `oauth2` or `x-token-auth`.
  case literal(String)
  /// The account's own display name (its login on the host).
  case accountName

  public var description: String {
    switch self {
    case .literal(let name): return name
    case .accountName: return "<account name>"
    }
  }
}
