import NativeAppSupport
import ProcessRuntime
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

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

  /// What ``arguments(refreshing:group:scopes:)`` asks for, read back by a program that
  /// has no command line parser (the agent's own executable); nil for anything else,
  /// `arguments` starting with the command.
  public static func request(
    from arguments: some Sequence<String>
  ) -> (key: AccountKey, group: String, scopes: String?)? {
    var arguments = Array(arguments)[...]
    guard arguments.popFirst() == commandName else { return nil }
    var values: [String: String] = [:]
    while let option = arguments.popFirst() {
      guard ["--group", "--type", "--id", "--scopes"].contains(option), values[option] == nil,
        let value = arguments.popFirst()
      else { return nil }
      values[option] = value
    }
    guard let group = values["--group"], let type = values["--type"], let id = values["--id"] else { return nil }
    return (AccountKey(type: type, id: id), group, values["--scopes"])
  }

  /// The child's work, for both programs that can be it: checks that this process holds
  /// `key`'s lock (handed on at ``lockDescriptor``), refreshes with `manager` (or gets a
  /// token for `scopes`), and returns the one report for the parent. The answer is stored
  /// before the report is made: a parent that died meanwhile loses nothing.
  public static func work(
    key: AccountKey, group: String, scopes: String?, locks: FileAccountLocks,
    manager: () throws -> AccountManager
  ) async -> TokenKitError? {
    // Our parent may die or be interrupted at any moment; the refresh must still end with
    // its answer stored. A report nobody reads is not an error.
    signal(SIGPIPE, SIG_IGN)
    signal(SIGINT, SIG_IGN)
    signal(SIGHUP, SIG_IGN)
    do {
      // Refreshing without the account's lock could race another refresh and spend a
      // rotated token twice: run only with the lock handed on.
      guard locks.holds(lockDescriptor, for: key, group: group) else {
        throw TokenKitError(
          .internalFailure, "\(commandName) refreshes only for tokenctl, which hands it the account's lock",
          recovery: "Run `tokenctl refresh \(key.type):\(key.id)` instead.")
      }
      let manager = try manager()
      if let scopes {
        guard let scopeSet = ScopeSet(parsing: scopes) else {
          throw TokenKitError(.internalFailure, "\(commandName) was given no valid scopes")
        }
        _ = try await manager.exchangeHoldingLock(key, scopes: scopeSet)
      } else {
        _ = try await manager.refreshHoldingLock(key)
      }
      return nil
    } catch let error as TokenKitError {
      return error
    } catch {
      return TokenKitError(.internalFailure, "the refresh of \(key.type):\(key.id) failed: \(error)")
    }
  }
}
