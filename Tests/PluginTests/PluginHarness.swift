import AccountTypeFiles
import Foundation
import TestSupport
import TokenKit
import TokenStoreTesting

/// An account manager over one built-in account type, configured with a client as a user
/// would in config.toml, whose provider is played by a handler answering at the
/// provider's real URLs: the transport is scripted, nothing is dialed.
struct PluginHarness {
  static let clientID = "tokenctl-plugin-test"
  static let secret = "plugin-client-secret"

  let clock = TestClock()
  let store = InMemoryTokenStore()
  let locks = MemoryAccountLocks()
  let transport: ScriptedTransport
  let registry: AccountTypeRegistry

  init(
    _ plugin: any AccountTypePlugin.Type, secret: String? = PluginHarness.secret,
    handler: @escaping ScriptedTransport.Handler
  ) throws {
    var registry = AccountTypeRegistry()
    try registry.register(plugin)
    let settings = AccountTypeSettings(clientID: Self.clientID, clientSecret: secret)
    self.registry = try registry.applying(
      Dictionary(uniqueKeysWithValues: plugin.descriptors.map { ($0.id, settings) }), source: "test")
    transport = ScriptedTransport(handler: handler)
  }

  /// A harness for the built-in type `id`, with a secret only for types that need one.
  init(type id: String, handler: @escaping ScriptedTransport.Handler) throws {
    let plugin = PluginFixtures.plugin(id)
    let needsSecret = plugin.descriptors.contains { $0.tokenEndpointAuthentication != .none }
    try self.init(plugin, secret: needsSecret ? Self.secret : nil, handler: handler)
  }

  var manager: AccountManager {
    AccountManager(
      registry: registry, store: store, transport: transport, clock: clock, locks: locks, discoveryCache: nil)
  }

  /// Stores a signed-in account of `type` with a refresh token or without.
  func seed(type: String, id: String = "seeded", refreshToken: String?) throws {
    let account = Account(
      type: type, id: id, name: id, group: store.group, scopes: [], createdAt: clock.now, updatedAt: clock.now,
      issuer: nil, clientID: Self.clientID)
    try store.save(
      account,
      tokens: TokenSet(
        accessToken: "AT-seeded", refreshToken: refreshToken, expiresAt: clock.now.addingTimeInterval(3600)))
  }
}
