import TokenKit

/// An account the user named for a request, and where: it chooses among the accounts that
/// serve the host, and never adds one.
public struct NamedAccount: Sendable, Hashable {
  /// Where a name came from, which the user is told when it cannot be followed.
  public enum Source: Sendable, Hashable {
    /// `TOKENCTL_ACCOUNT` in the environment.
    case environment
    /// The `[git.accounts]` rule of config.toml whose URL prefix matched, as written there.
    case rule(prefix: String)
  }

  /// The account as the user wrote it: `type:account`, or `account` alone.
  public var reference: AccountReference
  public var source: Source

  public init(_ reference: AccountReference, by source: Source) {
    self.reference = reference
    self.source = source
  }
}
