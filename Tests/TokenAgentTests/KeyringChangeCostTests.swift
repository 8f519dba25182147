import AgentWire
import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

@testable import TokenAgent

/// What a change of the keyring costs the agent: a signal reads nothing, an answer reads
/// only the item it needs, one read at a time, and what needs no keyring never waits for
/// one. Counted on a store with item addresses (``CachingTokenStoreItemTests/AddressedStore``).
@Suite struct KeyringChangeCostTests {
  typealias AddressedStore = CachingTokenStoreItemTests.AddressedStore

  static func account(_ index: Int, group: String = "items") -> Account {
    let now = OAuthFixtures.now
    return Account(
      type: "corp", id: "id-\(index)", name: "user\(index)", group: group, createdAt: now, updatedAt: now,
      issuer: OAuthFixtures.issuer, clientID: OAuthFixtures.clientID)
  }

  static func tokens(_ access: String, expiresIn: Double = 3600) -> TokenSet {
    TokenSet(
      accessToken: access, refreshToken: "refresh", expiresAt: OAuthFixtures.now.addingTimeInterval(expiresIn),
      issuedAt: OAuthFixtures.now)
  }

  static func filled(_ count: Int, group: String = "items") throws -> AddressedStore {
    let backing = AddressedStore(InMemoryTokenStore(group: group))
    for index in 0..<count {
      try backing.save(account(index, group: group), tokens: tokens("a\(index)"))
    }
    return backing
  }

  // MARK: The memory of a group

  /// Another program writes its own items (an import, a browser's passwords): the agent
  /// reads none of them, answers from memory, and a listing asks only which items are the
  /// group's, once; the same item written again costs nothing at all.
  @Test func itemsThatAreNotTheGroupsAreNeverRead() throws {
    let backing = try Self.filled(100)
    let store = CachingTokenStore(backing)
    _ = try store.loadAll(.all)
    for index in 0..<200 { store.forget(item: "\(AddressedStore.elsewhere)\(index % 20)") }
    #expect(try store.load(Self.account(3).key)?.tokens.accessToken == "a3")
    #expect(backing.counts == (group: 1, address: 0, list: 0), "\(backing.counts)")
    #expect(try store.list(.all).count == 100)
    #expect(backing.counts == (group: 1, address: 0, list: 0), "\(backing.counts)")
    #expect(backing.searches.load(ordering: .sequentiallyConsistent) == 1)
    // Found not to be ours: written again, they are ignored.
    for index in 0..<20 { store.forget(item: "\(AddressedStore.elsewhere)\(index)") }
    #expect(try store.list(.all).count == 100)
    #expect(backing.searches.load(ordering: .sequentiallyConsistent) == 1)
  }

  /// A burst of changes to held items, then one answer: the changed items are read once
  /// each, in one read, not once per signal, and never the group.
  @Test func aBurstOfChangesIsSettledByOneReadOfEachItem() throws {
    let backing = try Self.filled(50)
    let store = CachingTokenStore(backing)
    _ = try store.loadAll(.all)
    for round in 0..<10 {
      for index in 0..<5 {
        try backing.inner.save(Self.account(index), tokens: Self.tokens("a\(index)-\(round)"))
        store.forget(item: AddressedStore.address(Self.account(index).key))
      }
    }
    #expect(try store.list(.all).count == 50)
    #expect(try store.load(Self.account(4).key)?.tokens.accessToken == "a4-9")
    #expect(backing.counts == (group: 1, address: 5, list: 0), "\(backing.counts)")
  }

  /// While one account's changed item is being read (a slow keyring), an answer for
  /// another account comes from memory at once, not after the read.
  @Test func anAnswerForAnUnchangedAccountNeverWaitsForARead() async throws {
    let backing = try Self.filled(20)
    let store = CachingTokenStore(backing)
    _ = try store.loadAll(.all)
    store.forget(item: AddressedStore.address(Self.account(5).key))
    backing.holdsAddressReads.store(true, ordering: .sequentiallyConsistent)
    defer { backing.holdsAddressReads.store(false, ordering: .sequentiallyConsistent) }
    let slow = Thread { _ = try? store.load(Self.account(5).key) }
    slow.start()
    while backing.counts.address == 0 { try await Task.sleep(for: .milliseconds(1)) }
    let answered = Atomic(false)
    Thread {
      _ = try? store.load(Self.account(7).key)
      answered.store(true, ordering: .sequentiallyConsistent)
    }.start()
    let deadline = ContinuousClock.now + .seconds(2)
    while ContinuousClock.now < deadline, !answered.load(ordering: .sequentiallyConsistent) {
      try await Task.sleep(for: .milliseconds(5))
    }
    let inTime = answered.load(ordering: .sequentiallyConsistent)
    #expect(inTime, "answered while the other item's read waits")
  }

  // MARK: The service

  func service(
    _ transport: ScriptedTransport, stores: [String: AddressedStore], environment: [String: String]
  ) throws -> AgentService {
    var settings = AgentService.Settings()
    settings.isolatesRefreshes = false
    return AgentService(
      base: try OAuthFixtures.registry(), environment: environment, settings: settings, clock: TestClock(),
      transport: transport, makeStore: { stores[$0] ?? AddressedStore(InMemoryTokenStore(group: $0)) },
      log: { _ in }, sleep: { _ in try await Task.sleep(for: .seconds(3600)) })
  }

  func tokenRequest(_ name: String, environment: [String: String]) -> AgentMessage {
    var message = AgentMessage(
      AgentMessage.Request.token, [.init("group", Account.defaultGroup), .init("account", name)])
    for (name, value) in environment { message.append(AgentMessage.contextField(name), value) }
    return message
  }

  /// A refresh by the agent writes one item: that item alone is read back, not the group.
  @Test func aRefreshByTheAgentReadsBackOnlyItsItem() async throws {
    let directory = try TemporaryDirectory()
    let environment = ["HOME": directory.path("home"), "XDG_CONFIG_HOME": directory.path("config")]
    let backing = try Self.filled(30, group: Account.defaultGroup)
    try backing.save(Self.account(3, group: Account.defaultGroup), tokens: Self.tokens("old", expiresIn: -60))
    let transport = ScriptedTransport { _ in
      ScriptedTransport.tokens(access: "fresh", refresh: "refresh-1", expiresIn: 3600)
    }
    let service = try service(transport, stores: [Account.defaultGroup: backing], environment: environment)
    defer { service.stop() }
    let first = await service.answer(tokenRequest("user3", environment: environment))
    #expect(first["access-token"] == "fresh", "\(first)")
    let before = backing.counts
    let again = await service.answer(tokenRequest("user3", environment: environment))
    #expect(again["access-token"] == "fresh")
    _ = await service.answer(tokenRequest("user4", environment: environment))
    #expect(backing.counts.group == before.group, "no read of the group after the refresh: \(backing.counts)")
    #expect(backing.counts.address <= before.address + 1, "\(backing.counts)")
  }

  /// The agent's status reads no keyring: it is answered on the connection's thread, never
  /// queued behind the pool's tasks, which may all be waiting for the keyring.
  @Test func theStatusIsAnsweredAtOnce() throws {
    let directory = try TemporaryDirectory()
    let service = try service(
      ScriptedTransport { _ in HTTPResponse(status: 500) }, stores: [:],
      environment: ["HOME": directory.path("home")])
    defer { service.stop() }
    let status = service.answerAtOnce(AgentMessage(AgentMessage.Request.status)) { _, _ in }
    #expect(status?.kind == AgentMessage.Answer.status)
  }

  /// A burst of changes while a look for accounts to keep fresh runs: no second look at
  /// the same time, and one more look after it, for the changes it may have missed. The
  /// look is held open until the burst is sent, so a loaded machine cannot let it end first.
  @Test func looksAfterABurstOfChangesRunOneAtATime() async throws {
    let directory = try TemporaryDirectory()
    let slow = SlowListStore(group: Account.defaultGroup)
    let service = AgentService(
      base: try OAuthFixtures.registry(), environment: ["HOME": directory.path("home")], clock: TestClock(),
      transport: ScriptedTransport { _ in HTTPResponse(status: 500) }, makeStore: { _ in slow }, log: { _ in })
    defer {
      slow.release()
      service.stop()
    }
    service.keyringUnwatched()
    #expect(try await Self.waitUntil { slow.running.load(ordering: .sequentiallyConsistent) == 1 }, "a first look")
    for _ in 0..<50 { service.keyringChanged(item: "/org/freedesktop/secrets/collection/login/1") }
    // A second look started for the burst would be waiting at the gate beside the first.
    try await Task.sleep(for: .milliseconds(1500))
    #expect(slow.most.load(ordering: .sequentiallyConsistent) == 1, "one look at a time")
    slow.release()
    #expect(
      try await Self.waitUntil {
        slow.looks.load(ordering: .sequentiallyConsistent) >= 2
          && slow.running.load(ordering: .sequentiallyConsistent) == 0
      }, "a change during a look is looked at again")
    #expect(slow.most.load(ordering: .sequentiallyConsistent) == 1)
    #expect(
      slow.looks.load(ordering: .sequentiallyConsistent) == 2, "the burst's 50 changes make one look more, not 50")
  }

  /// Another program writes items of its own while the agent holds many accounts: each
  /// burst is told apart by the items alone, and sets off no look over every account held
  /// (for accounts to keep fresh); one account of the group written does.
  @Test func anotherProgramsWritesSetOffNoLookOverTheAccounts() async throws {
    let directory = try TemporaryDirectory()
    let backing = try Self.filled(100, group: Account.defaultGroup)
    let service = AgentService(
      base: try OAuthFixtures.registry(), environment: ["HOME": directory.path("home")], clock: TestClock(),
      transport: ScriptedTransport { _ in HTTPResponse(status: 500) }, makeStore: { _ in backing }, log: { _ in })
    defer { service.stop() }
    func looks() -> Int { service.state.withLock { $0.looksOver } }
    func change(_ item: String) async throws {
      service.keyringChanged(item: item)
      #expect(try await Self.waitUntil { !service.rescan.withLock { $0.running } }, "the look after the change ended")
    }
    // Held, as once the agent has answered a request.
    #expect(try service.store(Account.defaultGroup).loadAll(.all).count == 100)
    service.keepConfiguredAccountsFresh()
    #expect(looks() == 1)
    for round in 0..<3 { try await change("\(AddressedStore.elsewhere)\(round)") }
    #expect(looks() == 1, "another program's items set off no look over the accounts")
    #expect(backing.counts.group == 1, "\(backing.counts)")
    let written = Self.account(7, group: Account.defaultGroup)
    try backing.inner.save(written, tokens: Self.tokens("a7-again"))
    try await change(AddressedStore.address(written.key))
    #expect(looks() == 2, "an account of the group written is looked at")
  }

  /// Whether `condition` came true within a limit far beyond a loaded machine's delays.
  static func waitUntil(_ condition: () -> Bool) async throws -> Bool {
    let end = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < end {
      if condition() { return true }
      try await Task.sleep(for: .milliseconds(20))
    }
    return condition()
  }

  /// A store whose listing waits until the test lets it go, counting how many run at once.
  final class SlowListStore: TokenStore, Sendable {
    let inner: InMemoryTokenStore
    let running = Atomic(0)
    let most = Atomic(0)
    let looks = Atomic(0)
    let held = Atomic(true)
    var group: String { inner.group }
    init(group: String) { inner = InMemoryTokenStore(group: group) }

    func release() { held.store(false, ordering: .sequentiallyConsistent) }

    func list(_ query: AccountQuery) throws -> [AccountListing] {
      looks.add(1, ordering: .sequentiallyConsistent)
      let now = running.add(1, ordering: .sequentiallyConsistent).newValue
      _ = most.max(now, ordering: .sequentiallyConsistent)
      defer { running.subtract(1, ordering: .sequentiallyConsistent) }
      // Bounded, so that a failing test still ends.
      let end = ContinuousClock.now + .seconds(60)
      while held.load(ordering: .sequentiallyConsistent), ContinuousClock.now < end { usleep(10_000) }
      return try inner.list(query)
    }
    func load(_ key: AccountKey) throws -> StoredAccount? { try inner.load(key) }
    func loadAll(_ query: AccountQuery) throws -> [StoredAccount] { try inner.loadAll(query) }
    func save(_ account: Account, tokens: TokenSet) throws { try inner.save(account, tokens: tokens) }
    func remove(_ key: AccountKey) throws -> Bool { try inner.remove(key) }
    func loadToken(for key: AccountKey, scopes: ScopeSet) throws -> TokenSet? {
      try inner.loadToken(for: key, scopes: scopes)
    }
    func saveToken(_ tokens: TokenSet, scopes: ScopeSet, of account: Account) throws {
      try inner.saveToken(tokens, scopes: scopes, of: account)
    }
  }
}
