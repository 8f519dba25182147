import AgentProtocol
import ProcessRuntime
import TokenKit

#if canImport(Glibc)
  import Glibc
#endif

/// The agent's memory of the keyring: one world per client environment, one store per
/// group that remembers what it read, and what a change signal sets off (forgetting the
/// item named, then one look at a time for accounts to keep fresh).
extension AgentService {
  func world(for context: [String: String]) -> AgentWorld {
    if let world = state.withLock({ $0.worlds[context] }), world.isCurrent() { return world }
    var environment = self.environment
    for name in AgentMessage.contextVariables { environment[name] = context[name] }
    let world = AgentWorld(base: base, environment: environment)
    state.withLock { state in
      // A bound on how many environments are remembered: a client could make up many.
      if state.worlds.count >= 16 { state.worlds.removeAll() }
      state.worlds[context] = world
    }
    return world
  }

  func store(_ group: String) -> CachingTokenStore {
    state.withLock { state in
      if let store = state.stores[group] { return store }
      let store = CachingTokenStore(makeStore(group)) { [weak self] in
        self?.remembering.load(ordering: .relaxed) ?? false
      }
      state.stores[group] = store
      return store
    }
  }

  /// The keyring changed behind the agent's back: forget what was read from it (the item
  /// at `item` alone, when the change names one: a refresh by another process, say), and
  /// look again, a second later and once for a burst of changes, for accounts to keep
  /// fresh (one signed in, or unlocked).
  public func keyringChanged(item: String? = nil) {
    for store in state.withLock({ Array($0.stores.values) }) {
      if let item { store.forget(item: item) } else { store.forget() }
    }
    // What failed for the keyring's sake (locked, its daemon gone) may work now.
    wakeFailing()
    guard rescan.withLock({ $0.begin() }) else { return }
    // A thread of its own: the scan reads the keyring, which blocks, and must not hold
    // one of the few threads that answer requests. One at a time: changes that come
    // while it runs make it look once more when it is done, however many they are.
    let started = DetachedThread.start { [self] in
      repeat {
        Glibc.sleep(1)
        rescan.withLock { $0.again = false }
        keepConfiguredAccountsFresh()
        if state.withLock({ $0.observers != nil }) { reportChanges() }
      } while rescan.withLock { $0.next() }
    }
    if !started { rescan.withLock { $0 = Rescan() } }
  }

  /// The look for accounts to keep fresh after the keyring changed: at most one thread at
  /// a time (``keyringChanged(item:)``). A burst of writes by another program (an import
  /// of hundreds of items) once started a thread a second, each reading the keyring while
  /// the last still did.
  struct Rescan {
    var running = false
    /// A change came since the running look began.
    var again = false

    /// Whether to start a thread: none runs. Else the one running looks again.
    mutating func begin() -> Bool {
      if running {
        again = true
        return false
      }
      running = true
      return true
    }

    /// Whether the running thread looks again; if not, it ends.
    mutating func next() -> Bool {
      if !again { running = false }
      return again
    }
  }

  /// What a look over every account of a group is for (``accounts(of:for:world:)``).
  enum Look: Hashable, Sendable {
    /// Accounts to keep fresh (``keepConfiguredAccountsFresh()``).
    case keepFresh
    /// Changes to report on the session bus (``reportChanges()``).
    case report
  }
  struct LookKey: Hashable, Sendable {
    var look: Look
    var group: String
  }
  /// The store's ``CachingTokenStore/accountsRevision`` a look last went over, and the
  /// settings files it went over them with.
  struct LookMark: Equatable, Sendable {
    var revision: Int
    var world: [AgentWorld.FileStamp]
  }

  /// Every account of `group` for `look`; nil when that look can be skipped (nothing held
  /// of the group has moved since it last went over them, under the same settings files
  /// `world`), or the keyring cannot be read. Another program's writes set off a look a
  /// second while they last, and at 1,000 accounts going over them all cost more than
  /// telling the written item apart: a look that finds only such items settled ends here.
  func accounts(
    of group: String, for look: Look, world: [AgentWorld.FileStamp] = []
  ) -> [AccountListing]? {
    let store = store(group)
    let key = LookKey(look: look, group: group)
    let settled = store.settledRevision()
    if let settled, state.withLock({ $0.looked[key] == LookMark(revision: settled, world: world) }) {
      return nil
    }
    // What the listing sees is at least as new as this: a change settled meanwhile by a
    // request makes the next look go over the accounts again, never none.
    let seen = settled ?? store.accountsRevision
    guard let listings = try? store.list(.all) else { return nil }
    state.withLock { state in
      if let seen { state.looked[key] = LookMark(revision: seen, world: world) }
      state.looksOver += 1
    }
    return listings
  }

  /// Nobody tells us of the keyring's changes: from now on every answer reads it.
  public func keyringUnwatched() {
    remembering.store(false, ordering: .relaxed)
    keyringChanged()
  }
}
