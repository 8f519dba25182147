/// Serializes refreshes of one account across tasks and processes.
///
/// Many providers rotate refresh tokens and treat the reuse of an old one as theft,
/// revoking the whole grant. Two processes refreshing the same account at once would do
/// exactly that, so every refresh runs under this lock, and re-reads the store once it
/// holds it.
public protocol AccountLocking: Sendable {
  /// Waits until this caller alone may refresh `key` in `group`, or throws after `timeout`.
  func acquire(_ key: AccountKey, group: String, timeout: Duration) async throws -> any AccountLockHandle

  /// Whether anyone holds `key`'s lock in `group` now, this process included: a refresh
  /// of the account is in flight, and the access token stored may be the one it is about
  /// to replace (servers that rotate refresh tokens often revoke the access token issued
  /// beside the old one). Never waits.
  func isHeld(_ key: AccountKey, group: String) -> Bool

  /// Where a refresh that holds the lock keeps its answer until the store has it (see
  /// ``GrantJournal``), shared by every process that takes these locks; nil for none.
  var journal: (any GrantJournal)? { get }
}

extension AccountLocking {
  /// No journal: a refresh whose answer the store refuses loses a rotated grant.
  public var journal: (any GrantJournal)? { nil }
}

/// A held lock; `release()` may be called more than once.
public protocol AccountLockHandle: Sendable {
  func release()

  /// The open file descriptor that holds this lock, for a lock that a child process
  /// holds too once it inherits the descriptor (see ``RefreshIsolation``); nil for a lock
  /// that cannot be handed on, until released and after.
  var inheritableDescriptor: Int32? { get }
}

extension AccountLockHandle {
  /// In-process locks cannot be handed to another process.
  public var inheritableDescriptor: Int32? { nil }
}
