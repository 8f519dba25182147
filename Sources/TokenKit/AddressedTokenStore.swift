/// A store whose items have addresses that its change notices name (the Secret Service's
/// object paths): a reader that keeps what it read (the agent's memory of a group) reads
/// again only the item a notice names, not the whole group (with 1,000 accounts,
/// one refresh a few seconds emptied the agent's memory, and answers took seconds).
public protocol AddressedTokenStore: TokenStore {
  /// The accounts of this group that match `query`, with their tokens, each with the
  /// address of the item it was read from.
  func loadAllAddressed(_ query: AccountQuery) throws -> [AddressedAccount]

  /// The account of this group at `address` with its tokens; nil when there is none there
  /// now: deleted, an item of another group or of another kind. Throws what a read throws
  /// (a locked keyring), and the caller then reads the group again.
  func load(address: String) throws -> StoredAccount?

  /// The addresses of every account item of this group, locked ones included, without
  /// reading any item: one search. A reader told of changes to items it does not hold
  /// learns from it which are its group's, and reads only those. nil when the store cannot
  /// list addresses apart from their items.
  func addresses() throws -> Set<String>?

  /// Whether the item at `address` is an account item of this group, from what it says of
  /// itself without its secret (the Secret Service's attributes: one property read). A
  /// reader told of a few changed items it does not hold asks this of each rather than
  /// searching the group, whose answer grows with the group: another program's writes
  /// then cost one small read each however many accounts are held. nil when the store
  /// cannot tell (the item is gone, or the store has no such read).
  func isAccountItem(address: String) throws -> Bool?
}

extension AddressedTokenStore {
  public func addresses() throws -> Set<String>? { nil }
  public func isAccountItem(address: String) throws -> Bool? { nil }
}

/// An account read from a store, with the address of its item.
public struct AddressedAccount: Sendable {
  public var address: String
  public var stored: StoredAccount

  public init(address: String, stored: StoredAccount) {
    self.address = address
    self.stored = stored
  }
}
