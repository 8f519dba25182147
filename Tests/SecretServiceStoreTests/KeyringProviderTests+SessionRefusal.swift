import Foundation
import GLibBus
import Testing
import TokenKit
import TokenStoreTesting

@testable import SecretServiceStore

extension KeyringProviderTests {
  /// Whether the provider is one `Tests/Support/with-secret-service.sh` started for this
  /// process alone (`make test-providers`, `--no-parallel`): closing the process's sessions
  /// under suites that run beside this one (`make test`) would fail their writes too.
  static let providerRun = ProcessInfo.processInfo.environment["TOKENCTL_TEST_PROVIDER"] != nil

  /// A provider that refuses the session libsecret keeps (kwalletd5 said "Can't find
  /// session" to 1 session in 256, whose key it derived otherwise, and drops a session on
  /// any owner change of its bus name) failed every later write of the process. The
  /// sessions are closed under the store here: each write, a new item's and a replaced
  /// one's, and a read in libsecret's session, goes through in a new session, and nothing
  /// is lost.
  @Test(.enabled(if: providerRun))
  func aWriteAfterTheProviderDroppedTheSessionGoesThrough() async throws {
    let group = TokenStoreConformance.freshGroup()
    let store = Self.store(group: group)
    let saved = SecretServiceTokenStoreTests.sample(group: group)
    try store.save(saved.account, tokens: saved.tokens)
    defer { _ = try? store.remove(saved.account.key) }
    try #require(try Self.closeSessionsOfThisProcess() >= 1, "no session of libsecret's to close")

    var refreshed = saved.tokens
    refreshed.accessToken = "eyJ-AFTER-SESSION-CLOSED-\(UUID().uuidString)"
    try store.save(saved.account, tokens: refreshed)
    #expect(try store.load(saved.account.key)?.tokens == refreshed)

    // A new item goes in `CreateItem`, which kwalletd5 refuses with other words.
    _ = try Self.closeSessionsOfThisProcess()
    var second = saved.account
    second.id = "00000000-bob-oid"
    second.name = "bob@contoso.com"
    try store.save(second, tokens: saved.tokens)
    defer { _ = try? store.remove(second.key) }
    #expect(try store.load(second.key)?.tokens == saved.tokens)
    #expect(try store.list(.all).map(\.account.key).sorted { $0.id < $1.id } == [saved.account.key, second.key])

    // A read in libsecret's session: reads take it where the provider refuses theirs.
    _ = try Self.closeSessionsOfThisProcess()
    let reader = SecretServiceTokenStore(
      group: group, prompting: store.prompting, sessionAlgorithm: SecretSessionTests.refused)
    #expect(try reader.load(saved.account.key)?.tokens == refreshed)
  }

  /// Closes the sessions this process's connection to the session bus has open with the
  /// provider, libsecret's among them, as a provider that drops them would; returns how
  /// many. Over GLib's shared connection, which is libsecret's: a provider closes a session
  /// only for the connection that opened it (kwalletd5 answers any other "Can't find
  /// session"). The sessions are the children of the provider's session folder.
  static func closeSessionsOfThisProcess() throws -> Int {
    try GLib.load()
    let bus = try DBusConnection.session()
    defer { bus.release() }
    let service = "org.freedesktop.secrets", folder = "/org/freedesktop/secrets/session"
    // KeePassXC has no such folder while no session is open.
    guard
      case .tuple(let values) = try? bus.call(
        service, folder, "org.freedesktop.DBus.Introspectable", "Introspect", nil as BusValue?, replyType: "(s)"),
      case .string(let xml) = values.first
    else { return 0 }
    var closed = 0
    for name in xml.components(separatedBy: "<node name=\"").dropFirst() {
      let child = name.prefix { $0 != "\"" }
      guard !child.isEmpty, !child.contains("/") else { continue }
      // Another connection's session is refused, and stays open.
      if (try? bus.call(
        service, "\(folder)/\(child)", "org.freedesktop.Secret.Session", "Close", nil as BusValue?, replyType: "()"))
        != nil
      {
        closed += 1
      }
    }
    return closed
  }
}
