import Foundation
import SecretServiceStore
import TestSupport
import Testing
import TokenKit
import TokenStoreTesting

/// The real `tokenctl` binary against real gnome-keyrings: the shared test keyring, a
/// locked one, none at all, and no session bus.
@Suite struct KeyringCommandTests {
  static let far = Date().addingTimeInterval(3600)

  /// The shared test keyring (from `make test`), with a group of the test's own.
  @Test func theBinaryWorksAgainstTheKeyring() async throws {
    try #require(
      ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    let group = TokenStoreConformance.freshGroup()
    let store = SecretServiceTokenStore(group: group)
    let access = "eyJ-\(UUID().uuidString)"
    try store.save(
      Account(
        type: "graph", id: "oid-ada", name: "ada@contoso.com", group: group, createdAt: Date(), updatedAt: Date()),
      tokens: TokenSet(accessToken: access, refreshToken: "r-\(UUID().uuidString)", expiresAt: Self.far))
    defer { _ = try? store.remove(AccountKey(type: "graph", id: "oid-ada")) }
    var environment = ProcessInfo.processInfo.environment
    environment["TOKENCTL_GROUP"] = group
    func tokenctl(_ arguments: String...) async throws -> ProcessResult {
      try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
    }

    let token = try await tokenctl("token", "ada@contoso.com")
    #expect(token.status == 0 && token.stdout == access + "\n")
    let list = try await tokenctl("list")
    #expect(list.status == 0 && list.stdout.contains("ada@contoso.com") && list.stdout.contains("valid for"))
    let json = try await tokenctl("list", "--json")
    #expect(json.status == 0 && json.stdout.contains("\"oid-ada\"") && !json.stdout.contains(access))
    await #expect(try tokenctl("revoke", "graph:ada@contoso.com").status == 0)
    let gone = try await tokenctl("token", "graph:ada@contoso.com")
    #expect(gone.status == 2 && gone.stderr.contains("no account 'graph:ada@contoso.com'"))
  }

  static let seededItem = [
    "store", "--label", "tokenctl: graph — ada@contoso.com", "xdg:schema", "org.tokenctl.Account", "type", "graph",
    "account", "oid-ada", "group", "default", "name", "ada@contoso.com", "created", "1790000000",
    "updated", "1790000000", "refreshable", "true",
  ]

  /// `login` ran the whole sign-in before it found the keyring locked, then dropped the
  /// grant: it checks the keyring first, so neither the browser nor the server is asked
  /// (before, with no display, it started a device sign-in at login.microsoftonline.com).
  @Test func loginChecksTheKeyringBeforeTheBrowser() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    try await session.lockLoginKeyring()
    let marker = FileManager.default.temporaryDirectory.appendingPathComponent("browser-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: marker) }
    var environment = session.environment
    environment["BROWSER"] = "/usr/bin/touch \(marker.path)"
    environment["DISPLAY"] = nil
    environment["WAYLAND_DISPLAY"] = nil
    let login = try await TestProcess.run(
      TestProcess.tokenctl,
      ["login", "graph", "--client-id", "11111111-2222-3333-4444-555555555555", "--timeout", "3"],
      environment: environment)
    #expect(login.status == 7, "\(login.stderr)")
    #expect(login.stderr.contains("is locked"), "\(login.stderr)")
    #expect(!FileManager.default.fileExists(atPath: marker.path))
  }

  @Test func aLockedKeyringIsReportedAsLockedNotAsAMissingAccount() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    let stored = try await session.run(
      "secret-tool", Self.seededItem, stdin: #"{"version":1,"access_token":"SECRET-TOKEN","token_type":"Bearer"}"#)
    try #require(stored.status == 0, "\(stored.stderr)")
    let before = try await session.tokenctl("token", "graph:ada@contoso.com")
    try #require(before.status == 0 && before.stdout == "SECRET-TOKEN\n", "\(before.stderr)")

    try await session.lockLoginKeyring()
    // libsecret's own lookup says nothing at all about a locked keyring:
    let silent = try await session.run("secret-tool", ["lookup", "type", "graph"])
    #expect(silent.status != 0 && silent.stdout.isEmpty)

    // No desktop: a locked keyring's hint is the store's, as the agent gives it too (the
    // answers are the same either way); doctor gives the terminal's recipe.
    var environment = session.environment
    environment["DISPLAY"] = nil
    environment["WAYLAND_DISPLAY"] = nil
    var passed = true
    for arguments in [
      ["token", "graph:ada@contoso.com"], ["token", "graph:nobody"], ["list"], ["revoke", "ada@contoso.com"],
    ] {
      let result = try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
      let checks = [
        result.status == 7, result.stderr.contains("is locked"),
        result.stderr.contains("hint: Unlock it"),
        !result.stderr.contains("no account"), result.stdout.isEmpty,
      ]
      #expect(!checks.contains(false), "\(arguments): \(result.status) \(result.stderr)")
      passed = passed && !checks.contains(false)
    }
    HardeningSummary.record("keyring", "locked", passed ? "pass" : "fail")
  }

  @Test func noSecretServiceOnTheBusIsUnavailable() async throws {
    let session = try await PrivateSession.started(.busWithoutSecretService)
    defer { session.stop() }
    // No desktop: the hint starts a keyring from the terminal (HeadlessKeyringHintTests).
    var environment = session.environment
    environment["DISPLAY"] = nil
    environment["WAYLAND_DISPLAY"] = nil
    let result = try await TestProcess.run(TestProcess.tokenctl, ["list"], environment: environment)
    let passed =
      result.status == 8 && result.stderr.contains("no Secret Service is running on the session bus")
      && result.stderr.contains("\n  gnome-keyring-daemon --unlock --components=secrets\n")
    #expect(passed, "\(result.status) \(result.stderr)")
    HardeningSummary.record("keyring", "no Secret Service", passed ? "pass" : "fail")
  }

  @Test func noSessionBusIsUnavailable() async throws {
    let session = try await PrivateSession.started(.busWithoutSecretService)
    defer { session.stop() }
    var environment = session.environment
    environment["DBUS_SESSION_BUS_ADDRESS"] = nil
    // GLib would find the bus's socket at $XDG_RUNTIME_DIR/bus; point it elsewhere.
    environment["XDG_RUNTIME_DIR"] = session.directory.path
    // No desktop: the hint starts a bus and a keyring (HeadlessKeyringHintTests).
    environment["DISPLAY"] = nil
    environment["WAYLAND_DISPLAY"] = nil
    var passed = true
    for arguments in [["token", "graph:ada"], ["list", "--json"]] {
      let result = try await TestProcess.run(TestProcess.tokenctl, arguments, environment: environment)
      let ok =
        result.status == 8 && result.stderr.contains("cannot reach the D-Bus session bus")
        && result.stderr.contains("\n  dbus-run-session -- sh\n")
      #expect(ok, "\(arguments): \(result.status) \(result.stderr)")
      passed = passed && ok
    }
    HardeningSummary.record("keyring", "no D-Bus", passed ? "pass" : "fail")
  }
}
