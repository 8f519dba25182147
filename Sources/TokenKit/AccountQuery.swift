/// Which accounts of a store's group to list. Every field left `nil` matches anything.
public struct AccountQuery: Sendable, Hashable {
  public var type: String?
  public var id: String?
  public var name: String?

  public init(type: String? = nil, id: String? = nil, name: String? = nil) {
    self.type = type
    self.id = id
    self.name = name
  }

  /// Every account in the group.
  public static let all = AccountQuery()

  public func matches(_ account: Account) -> Bool {
    (type == nil || type == account.type) && (id == nil || id == account.id)
      && (name == nil || name == account.name)
  }
}
