import AgentProtocol
import NativeAppSupport
import TokenKit

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the agent offers desktop programs (tokenctl-dbus(7)): the accounts of a group and
/// fresh access tokens, in the agent's own environment (its config.toml and type files),
/// for callers that are not tokenctl and send no environment of their own.
extension AgentService {
  /// The agent's own world: the environment it was started in.
  var ownWorld: AgentWorld {
    var context: [String: String] = [:]
    for name in AgentMessage.contextVariables { context[name] = environment[name] }
    return world(for: context)
  }

  /// The account `name` (`TYPE:NAME` or a unique NAME) of `group`, as `tokenctl token`
  /// resolves it; throws `noSuchAccount` or `ambiguousAccount` as it does.
  public func resolve(group: String, account name: String) throws -> StoredAccount {
    let reference = AccountReference(parsing: name, knownTypes: Set(ownWorld.registry.ids))
    return try reference.load(from: store(group))
  }

  /// An access token of `stored` valid for at least `minimumValidity` seconds, refreshed
  /// if need be, as `tokenctl token --min-valid` gives it; the account is kept fresh from
  /// then on.
  public func accessToken(group: String, stored: StoredAccount, minimumValidity: Int) async throws -> TokenSet {
    let world = ownWorld
    let tokens = try await handOut(
      world: world, group: group, stored: stored, asked: Double(minimumValidity), warnings: Warnings())
    track(world: world, group: group, account: stored.account)
    return tokens
  }

  /// The accounts of `group`, as `tokenctl list` shows them. No token.
  public func accounts(group: String) throws -> [AccountListing] {
    try store(group).list(.all)
  }

  // MARK: Changes

  /// What is known of an account, to tell what changed.
  struct AccountMark: Sendable, Equatable {
    var name: String
    var updatedAt: Date
    var needsSignIn: Bool
  }

  /// Compares the accounts of every group the agent has opened with what it saw last, and
  /// reports each account that came, went or changed (`onAccountChanged`), and each one
  /// that has just become *needs sign-in* (`onNeedsSignIn`). The first look at a group
  /// reports nothing: there was nothing to compare with.
  public func reportChanges() {
    let groups = state.withLock { Array($0.stores.keys) }
    for group in groups.sorted() {
      guard let listings = accounts(of: group, for: .report) else { continue }
      var now: [AccountKey: AccountMark] = [:]
      for listing in listings {
        let account = listing.account
        now[account.key] = AccountMark(
          name: account.qualifiedName, updatedAt: account.updatedAt, needsSignIn: account.needsSignIn)
      }
      let before = state.withLock { state -> [AccountKey: AccountMark]? in
        defer { state.marks[group] = now }
        return state.marks[group]
      }
      guard let before else { continue }
      let observers = state.withLock { $0.observers }
      for key in Set(before.keys).union(now.keys).sorted(by: { "\($0)" < "\($1)" }) where before[key] != now[key] {
        let name = (now[key] ?? before[key])!.name
        observers?.accountChanged(group, key, name)
        if now[key]?.needsSignIn == true, before[key]?.needsSignIn != true {
          observers?.needsSignIn(group, key, name)
        }
      }
    }
  }

  /// Who hears of account changes (the D-Bus service's signals and notifications).
  /// `account` is the account's key, `name` its qualified name (`type:name`).
  public struct Observers: Sendable {
    public var accountChanged: @Sendable (_ group: String, _ account: AccountKey, _ name: String) -> Void
    public var needsSignIn: @Sendable (_ group: String, _ account: AccountKey, _ name: String) -> Void
    public init(
      accountChanged: @escaping @Sendable (String, AccountKey, String) -> Void,
      needsSignIn: @escaping @Sendable (String, AccountKey, String) -> Void
    ) {
      self.accountChanged = accountChanged
      self.needsSignIn = needsSignIn
    }
  }

  /// Starts reporting changes to `observers`, and takes a first look at `groups`.
  public func observe(_ observers: Observers, groups: [String]) {
    state.withLock { $0.observers = observers }
    for group in groups { _ = store(group) }
    reportChanges()
  }
}
