/// Runs the part of a refresh that must not be cut short somewhere the caller's death
/// cannot reach.
///
/// Once a refresh token is sent, a server that rotates refresh tokens (RFC 9700 §4.14.2)
/// may already have spent it, and the only valid one is in its answer. A process killed
/// between that moment and storing the answer leaves a spent token in the keyring; with
/// reuse detection, the next refresh then revokes the whole grant and the user must sign
/// in again. No write order inside one process closes that window: SIGKILL cannot be
/// caught, and the answer cannot be stored before it has arrived.
///
/// So the exchange and the store run in a process of their own that holds the account's
/// lock and does not share the caller's fate: killing `tokenctl token` or git's helper,
/// or pressing Ctrl-C, stops the waiting, not the refresh. Whoever asks next waits on the
/// lock and finds the new tokens stored.
///
/// The isolated process can still fail to store the answer (the keyring locked or its
/// daemon gone meanwhile) or be killed itself: ``GrantJournal`` keeps the answer for the
/// next holder of the lock then.
public protocol RefreshIsolation: Sendable {
  /// Refreshes `key` of `group` elsewhere, handing on `lock` (held by the caller), and
  /// returns once the answer is stored, or throws the refresh's error. With `scopes`, gets
  /// the account a token for those scopes instead (its refresh token is presented all
  /// the same, and may rotate). Returns false, having sent nothing, when this lock cannot
  /// be handed on or the other process cannot be started; the caller then does it itself.
  func refresh(
    _ key: AccountKey, group: String, scopes: ScopeSet?, holding lock: any AccountLockHandle
  ) async throws -> Bool
}

extension RefreshIsolation {
  /// Refreshes the account's own tokens elsewhere.
  public func refresh(_ key: AccountKey, group: String, holding lock: any AccountLockHandle) async throws -> Bool {
    try await refresh(key, group: group, scopes: nil, holding: lock)
  }
}
