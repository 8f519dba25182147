import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// The refresher's rules for the journal (``GrantJournal``), with an in-memory journal and
/// a store that refuses writes on demand: what a refused write keeps, and what the next
/// holder of the lock writes, drops, or leaves. The real keyring, daemon and server are in
/// `GrantJournalTests`.
@Suite(.timeLimit(.minutes(1))) struct GrantJournalReplayTests {
  typealias T = ScriptedTransport
  typealias H = AccountHarness

  final class MemoryJournal: GrantJournal, Sendable {
    let entries = Mutex<[String: JournaledGrant]>([:])
    /// Entries that exist but cannot be read, as a torn or emptied file.
    let unreadable = Mutex<Set<String>>([])
    /// The entries set aside, by name.
    let asides = Mutex<[String]>([])
    /// The error every write throws while set, as a full folder's.
    let failing = Mutex<TokenKitError?>(nil)
    func name(_ key: AccountKey, _ group: String) -> String { "\(group)\u{0}\(key)" }
    func write(_ entry: JournaledGrant) throws {
      if let error = failing.withLock({ $0 }) { throw error }
      entries.withLock { $0[name(entry.key, entry.group)] = entry }
    }
    func read(_ key: AccountKey, group: String) -> JournaledGrant? { entries.withLock { $0[name(key, group)] } }
    func remove(_ key: AccountKey, group: String) {
      _ = entries.withLock { $0.removeValue(forKey: name(key, group)) }
      _ = unreadable.withLock { $0.remove(name(key, group)) }
    }
    func setAside(_ key: AccountKey, group: String) -> String? {
      remove(key, group: group)
      asides.withLock { $0.append(name(key, group)) }
      return "aside"
    }
    func contains(_ key: AccountKey, group: String) -> Bool {
      read(key, group: group) != nil || unreadable.withLock { $0.contains(name(key, group)) }
    }
  }

  struct JournalingLocks: AccountLocking {
    let locks = MemoryAccountLocks()
    let memory = MemoryJournal()
    var journal: (any GrantJournal)? { memory }
    func acquire(_ key: AccountKey, group: String, timeout: Duration) async throws -> any AccountLockHandle {
      try await locks.acquire(key, group: group, timeout: timeout)
    }
    func isHeld(_ key: AccountKey, group: String) -> Bool { locks.isHeld(key, group: group) }
  }

  /// The harness's store, refusing every write while `refusing` is set, as a locked keyring does.
  final class RefusingStore: TokenStore, Sendable {
    let backing: InMemoryTokenStore
    let refusing = Mutex(false)
    init(_ backing: InMemoryTokenStore) { self.backing = backing }
    var group: String { backing.group }
    func list(_ query: AccountQuery) throws -> [AccountListing] { try backing.list(query) }
    func load(_ key: AccountKey) throws -> StoredAccount? { try backing.load(key) }
    func save(_ account: Account, tokens: TokenSet) throws {
      if refusing.withLock({ $0 }) { throw TokenKitError(.keyringLocked, "the keyring is locked") }
      try backing.save(account, tokens: tokens)
    }
    func remove(_ key: AccountKey) throws -> Bool { try backing.remove(key) }
  }

  struct World {
    let harness: H
    let locks = JournalingLocks()
    let store: RefusingStore
    var refresher: TokenRefresher {
      TokenRefresher(
        registry: harness.registry, store: store, transport: harness.transport, clock: harness.clock, locks: locks,
        discovery: MetadataDiscovery(transport: harness.transport, cache: nil, clock: harness.clock),
        events: harness.events)
    }

    init(responses: [HTTPResponse]) throws {
      harness = try H(responses: responses)
      store = RefusingStore(harness.store)
    }
  }

  @Test func aRefusedWriteKeepsTheRotatedGrantAndTheNextHolderWritesIt() async throws {
    let world = try World(responses: [T.tokens(access: "AT-2", refresh: "RT-2", expiresIn: 3600)])
    let seeded = try world.harness.seed(left: -10)
    world.store.refusing.withLock { $0 = true }
    await #expect(throws: TokenKitError.self) { try await world.refresher.freshTokens(for: H.key) }
    let entry = try #require(world.locks.memory.read(H.key, group: seeded.account.group))
    #expect(entry.tokens.refreshToken == "RT-2")
    #expect(entry.replaces == JournaledGrant.fingerprint(of: "RT-1"))
    // Until it is written, the stale token is not handed out, whatever its expiry says.
    var stale = seeded
    stale.tokens.expiresAt = world.harness.clock.now.addingTimeInterval(3600)
    #expect(!stale.isServable(forAtLeast: 60, clock: world.harness.clock, locks: world.locks))

    // Still refused: the entry stays.
    await #expect(throws: TokenKitError.self) { try await world.refresher.freshTokens(for: H.key) }
    #expect(world.locks.memory.contains(H.key, group: seeded.account.group))

    world.store.refusing.withLock { $0 = false }
    let fresh = try await world.refresher.freshTokens(for: H.key)
    #expect(fresh.tokens.accessToken == "AT-2")
    #expect(try world.harness.stored()?.tokens.refreshToken == "RT-2")
    #expect(!world.locks.memory.contains(H.key, group: seeded.account.group))
    #expect(world.harness.transport.requestCount == 1, "the journal's grant, not a second refresh")
  }

  @Test func anEntryTheStoreHoldsOrASignInOvertookIsDroppedUnwritten() async throws {
    let world = try World(responses: [])
    let seeded = try world.harness.seed(left: 1800, refreshToken: "RT-signed-in-again")
    let group = seeded.account.group
    var entry = JournaledGrant(
      key: H.key, group: group, tokens: TokenSet(accessToken: "AT-old", refreshToken: "RT-2"), grantedScopes: nil,
      updatedAt: world.harness.clock.now, replaces: JournaledGrant.fingerprint(of: "RT-1"))
    try world.locks.memory.write(entry)
    #expect(try await world.refresher.freshTokens(for: H.key).tokens == seeded.tokens)
    #expect(try world.harness.stored() == seeded)
    #expect(!world.locks.memory.contains(H.key, group: group))

    entry.tokens = seeded.tokens
    try world.locks.memory.write(entry)
    #expect(try await world.refresher.freshTokens(for: H.key).tokens == seeded.tokens)
    #expect(!world.locks.memory.contains(H.key, group: group))
    #expect(world.harness.transport.requestCount == 0)
  }

  /// The grant a sign-out revokes is the live one, the journal's, not the spent one the
  /// keyring still holds; and no entry outlives the account, with or without the server.
  @Test(arguments: [false, true])
  func signingOutRevokesTheJournalsGrantAndLeavesNoEntry(localOnly: Bool) async throws {
    let world = try World(responses: [
      T.tokens(access: "AT-2", refresh: "RT-2", expiresIn: 3600), HTTPResponse(status: 200), HTTPResponse(status: 200),
    ])
    let seeded = try world.harness.seed(left: -10)
    world.store.refusing.withLock { $0 = true }
    await #expect(throws: TokenKitError.self) { try await world.refresher.freshTokens(for: H.key) }
    world.store.refusing.withLock { $0 = false }
    let manager = AccountManager(
      registry: world.harness.registry, store: world.store, transport: world.harness.transport,
      clock: world.harness.clock, locks: world.locks, discoveryCache: nil, events: world.harness.events)
    _ = try await manager.signOut(H.key, localOnly: localOnly)
    #expect(!world.locks.memory.contains(H.key, group: seeded.account.group))
    #expect(try world.harness.stored() == nil)
    let revoked = world.harness.transport.requests.dropFirst().map { $0[field: "token"] }
    #expect(revoked == (localOnly ? [] : ["RT-2", "AT-2"]))
  }

  /// An entry that exists proves the stored refresh token spent, and the access token
  /// issued beside it revoked: one that cannot be read gets neither handed out nor
  /// dropped. The account needs a sign-in, says why, and the entry is set aside.
  @Test func anUnreadableEntryHandsNothingOutAndTheAccountNeedsASignIn() async throws {
    let world = try World(responses: [])
    let seeded = try world.harness.seed(left: 1800)
    let group = seeded.account.group
    world.locks.memory.unreadable.withLock { _ = $0.insert(world.locks.memory.name(H.key, group)) }
    let error = await #expect(throws: TokenKitError.self) { try await world.refresher.freshTokens(for: seeded) }
    #expect(error?.code == .needsSignIn)
    #expect(error?.message.contains("cannot be read") == true, "\(error?.message ?? "")")
    #expect(try world.harness.stored()?.account.needsSignIn == true)
    #expect(!world.locks.memory.contains(H.key, group: group))
    #expect(world.locks.memory.asides.withLock { $0 } == [world.locks.memory.name(H.key, group)])
    #expect(world.harness.transport.requestCount == 0, "a spent refresh token is not sent")
    // Later asks are refused too, without the entry.
    let again = await #expect(throws: TokenKitError.self) { try await world.refresher.freshTokens(for: H.key) }
    #expect(again?.code == .needsSignIn)
  }

  /// While the store cannot be written, the account cannot be marked: the entry stays
  /// where it is, so that nothing is handed out meanwhile.
  @Test func anUnreadableEntryStaysWhileTheStoreRefusesTheMark() async throws {
    let world = try World(responses: [])
    let seeded = try world.harness.seed(left: 1800)
    let group = seeded.account.group
    world.locks.memory.unreadable.withLock { _ = $0.insert(world.locks.memory.name(H.key, group)) }
    world.store.refusing.withLock { $0 = true }
    let error = await #expect(throws: TokenKitError.self) { try await world.refresher.freshTokens(for: seeded) }
    #expect(error?.code == .keyringLocked)
    #expect(world.locks.memory.contains(H.key, group: group))
    #expect(!seeded.isServable(forAtLeast: 60, clock: world.harness.clock, locks: world.locks))
  }

  /// A sign-out goes on past an unreadable entry and revokes what the store holds.
  @Test func signingOutPastAnUnreadableEntryRevokesTheStoredGrant() async throws {
    let world = try World(responses: [HTTPResponse(status: 200), HTTPResponse(status: 200)])
    let seeded = try world.harness.seed(left: 1800)
    world.locks.memory.unreadable.withLock { _ = $0.insert(world.locks.memory.name(H.key, seeded.account.group)) }
    let manager = AccountManager(
      registry: world.harness.registry, store: world.store, transport: world.harness.transport,
      clock: world.harness.clock, locks: world.locks, discoveryCache: nil, events: world.harness.events)
    _ = try await manager.signOut(H.key)
    #expect(try world.harness.stored() == nil)
    #expect(world.harness.transport.requests.map { $0[field: "token"] } == ["RT-1", "AT-1"])
  }

  /// A journal that cannot be written costs its protection, not the refresh, and says so
  /// in a report a front end can tell apart from other failures.
  @Test func aJournalThatCannotBeWrittenIsReportedAndTheRefreshGoesOn() async throws {
    let world = try World(responses: [T.tokens(access: "AT-2", refresh: "RT-2", expiresIn: 3600)])
    try world.harness.seed(left: -10)
    world.locks.memory.failing.withLock {
      $0 = TokenKitError(.unusableFile, "could not write /run/user/1000/tokenctl/journal/x: No space left on device")
    }
    let reports = Mutex<[String]>([])
    world.harness.events.observe { event in
      if event.kind == .failed, let message = event.message { reports.withLock { $0.append(message) } }
    }
    #expect(try await world.refresher.freshTokens(for: H.key).tokens.accessToken == "AT-2")
    let said = reports.withLock { $0 }
    #expect(said.count == 1 && said.allSatisfy(GrantJournalFault.isReport), "\(said)")
    #expect(said.first?.contains("No space left on device") == true)
    #expect(said.first?.contains("new sign-in") == true)
  }
}
