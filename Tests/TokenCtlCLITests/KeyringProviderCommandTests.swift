import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// The real `tokenctl` binary against whichever Secret Service provider
/// `Tests/Support/with-secret-service.sh` started (`make test-providers`), each with its
/// defaults: an account another program wrote is read, listed and revoked, KeePassXC's
/// access confirmation shown and answered (Tests/Support/answer-keyring-prompts.sh) while
/// tokenctl says it waits; with no display to show a prompt on, the same reads exit 7 and
/// name the provider.
@Suite(.serialized) struct KeyringProviderCommandTests {
  static let provider = ProcessInfo.processInfo.environment["TOKENCTL_TEST_PROVIDER"] ?? "gnome-keyring"
  /// Whether an agent answers the clients (Tests/Support/with-agent.sh): then the agent
  /// reads the keyring, and shows the prompt from its own session.
  static let throughAgent = ProcessInfo.processInfo.environment["TOKENCTL_TEST_AGENT"] == "1"

  /// An account saved by this process (another program, to the provider), and the
  /// environment that has `tokenctl` use its group.
  static func seeded() throws -> (SecretServiceTokenStore, AccountKey, String, [String: String]) {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    let group = TokenStoreConformance.freshGroup()
    let store = SecretServiceTokenStore(group: group, prompting: KeyringPrompting { _ in })
    let access = "eyJ-\(UUID().uuidString)"
    try store.save(
      Account(
        type: "graph", id: "oid-ada", name: "ada@contoso.com", group: group, createdAt: Date(), updatedAt: Date()),
      tokens: TokenSet(
        accessToken: access, refreshToken: "r-\(UUID().uuidString)", expiresAt: Date().addingTimeInterval(3600)))
    var environment = ProcessInfo.processInfo.environment
    environment["TOKENCTL_GROUP"] = group
    return (store, AccountKey(type: "graph", id: "oid-ada"), access, environment)
  }

  @Test func tokenListAndRevokeReadWhatAnotherProgramWrote() async throws {
    let (store, key, access, environment) = try Self.seeded()
    defer { _ = try? store.remove(key) }
    func tokenctl(_ arguments: String...) async throws -> ProcessResult {
      try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
    }
    let token = try await tokenctl("token", "ada@contoso.com")
    #expect(token.status == 0 && token.stdout == access + "\n", "\(token.stderr)")
    if Self.provider == "keepassxc" && !Self.throughAgent {
      #expect(token.stderr.contains("waiting for your keyring's prompt: answer KeePassXC's dialog"))
    }
    let list = try await tokenctl("list")
    #expect(list.status == 0 && list.stdout.contains("ada@contoso.com"), "\(list.stderr)")
    await #expect(try tokenctl("revoke", "--local", "graph:ada@contoso.com").status == 0)
    let gone = try await tokenctl("token", "graph:ada@contoso.com")
    #expect(gone.status == 2, "\(gone.stderr)")
  }

  /// Where no prompt can be shown (no display), a provider that asks is "locked": exit 7,
  /// in the provider's words, not gnome-keyring's.
  @Test(.enabled(if: provider == "keepassxc" && !throughAgent))
  func withoutADisplayKeePassXCsConfirmationIsExitSeven() async throws {
    let (store, key, _, seededEnvironment) = try Self.seeded()
    defer { _ = try? store.remove(key) }
    var environment = seededEnvironment
    environment["DISPLAY"] = nil
    environment["WAYLAND_DISPLAY"] = nil
    let token = try await TestProcess.run(TestProcess.tokenctl, ["token", "ada@contoso.com"], environment: environment)
    #expect(token.status == 7, "\(token.stderr)")
    #expect(token.stderr.contains("KeePassXC"), "\(token.stderr)")
    #expect(!token.stderr.contains("gnome-keyring-daemon --unlock"), "\(token.stderr)")
  }

  /// A user who takes longer than GDBus's default timeout (25 s) to answer KeePassXC's
  /// dialog got exit 1 "Timeout was reached": tokenctl now waits on the prompt itself.
  /// Slow (30 s), so only in `make test-providers` (TOKENCTL_TEST_SLOW_PROMPT=1).
  @Test(
    .enabled(
      if: provider == "keepassxc" && !throughAgent
        && ProcessInfo.processInfo.environment["TOKENCTL_TEST_SLOW_PROMPT"] == "1"))
  func aPromptAnsweredAfterThirtySecondsIsWaitedFor() async throws {
    let (store, key, access, environment) = try Self.seeded()
    defer { _ = try? store.remove(key) }
    let answers = try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_PROMPT_ANSWER"])
    try Data("leave\n".utf8).write(to: URL(fileURLWithPath: answers))
    defer { try? Data("allow\n".utf8).write(to: URL(fileURLWithPath: answers)) }
    let answerLate = Task {
      try await Task.sleep(for: .seconds(30))
      try Data("allow\n".utf8).write(to: URL(fileURLWithPath: answers))
    }
    let started = ContinuousClock.now
    let token = try await TestProcess.run(TestProcess.tokenctl, ["token", "ada@contoso.com"], environment: environment)
    _ = try await answerLate.value
    #expect(token.status == 0 && token.stdout == access + "\n", "\(token.stderr)")
    #expect(ContinuousClock.now - started > .seconds(29))
  }

  /// KWallet keeps its Secret Service collection locked after a KDE login, with the wallet
  /// open, until a program unlocks it, which tokenctl does itself with no dialog: `doctor`
  /// failed there ("the KWallet wallet 'kdewallet' is locked", exit 1). It is a warning.
  /// Run in a KWallet of its own, fresh from login: the tests before it unlocked this one.
  @Test(.enabled(if: provider == "kwallet" && !throughAgent))
  func doctorWarnsOfKWalletsLockedCollectionAndPasses() async throws {
    let wrapper = FileManager.default.currentDirectoryPath + "/Tests/Support/with-secret-service.sh"
    let result = try await TestProcess.run(wrapper, ["kwallet", TestProcess.tokenctl, "doctor", "--json"])
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
    let checks = try #require(document["checks"] as? [[String: Any]])
    let unlocked = try #require(checks.first { $0["id"] as? String == "keyring-unlocked" }, "\(checks)")
    #expect(unlocked["status"] as? String == "warn", "\(unlocked)")
    #expect((unlocked["detail"] as? String)?.contains("tokenctl unlocks it on first use") == true, "\(unlocked)")
    #expect(document["ok"] as? Bool == true)
    #expect(result.status == 0, "\(result.stdout)")
  }
}
