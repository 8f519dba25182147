import ProcessRuntime
import TokenKit

/// The protocol between ``ProcessRefreshIsolation`` and the child it starts, in one place:
/// the hidden command that makes this program the child, its arguments, and the
/// descriptor on which the account's lock arrives. The child answers with one
/// ``RefreshReport``.
public enum RefreshChild {
  /// The hidden command that makes tokenctl (or git's helper, which is the same program)
  /// the refresh child. Not for people: it refuses to run without the lock handed on.
  public static let commandName = "_refresh-worker"

  /// The child's descriptor of the account's lock: the first one a spawn hands on.
  public static let lockDescriptor = ChildProcess.firstHandedOn

  /// The arguments after the program: the command, then the group and the account, and
  /// the scopes of a token for other scopes (`scope`'s form, RFC 6749 §3.3; not secret).
  static func arguments(refreshing key: AccountKey, group: String, scopes: ScopeSet? = nil) -> [String] {
    [commandName, "--group", group, "--type", key.type, "--id", key.id] + (scopes.map { ["--scopes", $0.text] } ?? [])
  }
}
