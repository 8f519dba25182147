/// Serializes refreshes of one account across tasks and processes.
///
/// Many providers rotate refresh tokens and treat the reuse of an old one as theft,
/// revoking the whole grant. Two processes refreshing the same account at once would do
/// exactly that, so every refresh runs under this lock, and re-reads the store once it
/// holds it.
public protocol AccountLocking: Sendable {
  /// Waits until this caller alone may refresh `key` in `group`, or throws after `timeout`.
  func acquire(_ key: AccountKey, group: String, timeout: Duration) async throws -> any AccountLockHandle
}

/// A held lock; `release()` may be called more than once.
public protocol AccountLockHandle: Sendable {
  func release()
}
