import TokenKit

/// One account named in a grant.
public struct GrantedAccount: Sendable, Hashable {
  /// What the grant matches on: the type and stable id survive a rename.
  public var key: AccountKey
  /// The qualified `TYPE:NAME` at the time of the grant, for display only.
  public var name: String

  public init(key: AccountKey, name: String) {
    self.key = key
    self.name = name
  }
}
