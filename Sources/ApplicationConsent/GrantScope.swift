import TokenKit

/// Which accounts of a group a grant lets an application see.
public enum GrantScope: Sendable, Equatable {
  /// Every account of the group, present and future.
  case all
  /// These accounts only, by type and stable id, so that a renamed account stays granted.
  case accounts(Set<AccountKey>)
}
