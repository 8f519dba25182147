import Foundation
import Testing
import TokenKit
import TokenStoreTesting

@testable import SecretServiceStore

/// The session reads open (tokenctl-keyring(5), "Sessions"): plain on a local session
/// bus, libsecret's Diffie-Hellman session over TCP or where a provider refuses plain.
@Suite struct SecretSessionTests {
  /// An algorithm no provider supports: gnome-keyring answers `NotSupported`, as a
  /// provider that refused plain sessions would.
  static let refused = "tokenctl-test-refused"

  @Test(
    arguments: [
      (nil, "plain"), ("unix:path=/run/user/1000/bus", "plain"), ("unix:abstract=/tmp/dbus-x,guid=1", "plain"),
      ("tcp:host=10.0.0.2,port=5555", nil), ("unix:path=/nowhere;nonce-tcp:host=h,port=1", nil),
    ] as [(String?, String?)])
  func theAlgorithmFollowsTheBus(address: String?, algorithm: String?) {
    #expect(SecretSession.readAlgorithm(busAddress: address) == algorithm)
  }

  @Test func gnomeKeyringGivesAPlainSessionAndRefusesAnUnknownAlgorithm() throws {
    try TestKeyring.require()
    try GLibBridge.requireGIO()
    try SecretServiceBus.withSessionBus { bus in
      let (plain, _) = try SecretSession.open(on: bus, algorithm: SecretSession.plainAlgorithm, timeout: -1)
      guard case .plain(let path) = plain else {
        Issue.record("no plain session")
        return
      }
      #expect(path.hasPrefix("/org/freedesktop/secrets/session/"))
      let (other, _) = try SecretSession.open(on: bus, algorithm: Self.refused, timeout: -1)
      guard case .libsecret = other else {
        Issue.record("an unknown algorithm was not refused")
        return
      }
    }
  }

  /// Where plain is refused, every read goes through libsecret's session, and the store
  /// still passes its whole conformance suite.
  @Test(arguments: TokenStoreConformance.checks)
  func readsThroughLibsecretWhenPlainIsRefused(_ check: TokenStoreConformance.Check) throws {
    try TestKeyring.require()
    try check.run { group in SecretServiceTokenStore(group: group, prompting: nil, sessionAlgorithm: Self.refused) }
  }

  @Test func aRefusedSessionReadsWhatAPlainOneReads() throws {
    try TestKeyring.require()
    let group = TokenStoreConformance.freshGroup()
    let plain = SecretServiceTokenStore(group: group)
    let refusing = SecretServiceTokenStore(group: group, prompting: nil, sessionAlgorithm: Self.refused)
    let saved = SecretServiceTokenStoreTests.sample(group: group)
    try plain.save(saved.account, tokens: saved.tokens)
    defer { _ = try? plain.remove(saved.account.key) }
    let scopes = try #require(ScopeSet(["Mail.Read"]))
    let other = TokenSet(accessToken: "eyJ-OTHER-\(UUID().uuidString)", expiresAt: saved.tokens.expiresAt)
    try plain.saveToken(other, scopes: scopes, of: saved.account)
    for store in [plain, refusing] {
      #expect(try store.load(saved.account.key) == saved)
      #expect(try store.loadToken(for: saved.account.key, scopes: scopes)?.accessToken == other.accessToken)
    }
  }
}
