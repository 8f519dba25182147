import AccountTypeFiles
import Foundation
import Synchronization
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// An account manager wired to an in-memory store, a scripted transport, in-process
/// locks and a clock the test moves.
struct AccountHarness {
  typealias F = OAuthFixtures

  let clock = TestClock()
  let store = InMemoryTokenStore()
  let locks = MemoryAccountLocks()
  let events = AccountEventCenter()
  let transport: ScriptedTransport
  var registry: AccountTypeRegistry

  init(
    descriptors: [EndpointDescriptor] = [F.descriptor()],
    handler: @escaping ScriptedTransport.Handler
  ) throws {
    var registry = AccountTypeRegistry()
    for descriptor in descriptors { try registry.register(descriptor, source: "test") }
    self.registry = registry
    transport = ScriptedTransport(handler: handler)
  }

  init(descriptors: [EndpointDescriptor] = [F.descriptor()], responses: [HTTPResponse]) throws {
    let queue = Mutex(responses[...])
    try self.init(descriptors: descriptors) { request throws(TransportError) in
      guard let next = queue.withLock({ $0.popFirst() }) else {
        throw TransportError(.other, "the script has no answer left for \(request)")
      }
      return next
    }
  }

  /// This harness with `settings` applied to its registry, as config.toml applies them.
  func reconfigured(_ settings: [String: AccountTypeSettings]) throws -> AccountHarness {
    var copy = self
    copy.registry = try registry.applying(settings)
    return copy
  }

  var manager: AccountManager {
    AccountManager(
      registry: registry, store: store, transport: transport, clock: clock, locks: locks, discoveryCache: nil,
      events: events)
  }

  var refresher: TokenRefresher {
    TokenRefresher(
      registry: registry, store: store, transport: transport, clock: clock, locks: locks,
      discovery: MetadataDiscovery(transport: transport, cache: nil, clock: clock), events: events)
  }

  static let key = AccountKey(type: "corp", id: "user-42")

  /// Stores an account whose access token was issued `lifetime` seconds before it
  /// expires, and expires `left` seconds from now.
  @discardableResult
  func seed(
    left: Double, lifetime: Double = 3600, refreshToken: String? = "RT-1", accessToken: String = "AT-1",
    type: String = "corp", needsSignIn: Bool = false
  ) throws -> StoredAccount {
    let now = clock.now
    let account = Account(
      type: type, id: "user-42", name: "ada@example.org", group: store.group, scopes: ["openid"],
      createdAt: now.addingTimeInterval(-86400), updatedAt: now.addingTimeInterval(-3600),
      issuer: F.issuer, clientID: F.clientID, needsSignIn: needsSignIn)
    let tokens = TokenSet(
      accessToken: accessToken, refreshToken: refreshToken, idToken: "ID-1", expiresAt: now.addingTimeInterval(left),
      scope: ["openid"], issuedAt: now.addingTimeInterval(left - lifetime))
    try store.save(account, tokens: tokens)
    return StoredAccount(account: account, tokens: tokens)
  }

  func stored(_ key: AccountKey = Self.key) throws -> StoredAccount? { try store.load(key) }
}

/// Collects the events a center publishes from the moment it is made.
struct EventRecorder {
  let center: AccountEventCenter
  let stream: AsyncStream<AccountEvent>

  init(_ center: AccountEventCenter) {
    self.center = center
    stream = center.events()
  }

  static let sentinel = AccountEvent(
    .added, Account(type: "sentinel", id: "-", name: "-", group: "-", createdAt: .distantPast, updatedAt: .distantPast))

  /// The events published so far. Publishes a sentinel and reads up to it, so that it
  /// never waits for an event that will not come. Ends the subscription: call it once.
  func drain() async -> [AccountEvent] {
    center.publish(Self.sentinel)
    var events: [AccountEvent] = []
    for await event in stream {
      if event == Self.sentinel { break }
      events.append(event)
    }
    return events
  }
}
