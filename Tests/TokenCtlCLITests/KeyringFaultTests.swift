import Foundation
import TestSupport
import Testing

/// The keyring going wrong under tokenctl, in a private session bus of each test's own:
/// a collection deleted while accounts were in it, and an item that another program
/// rewrote into something that is not a token set. Each gives a clear message and its
/// documented status, and no other account is touched. (Locked, absent and no bus at all
/// are in `KeyringCommandTests`.)
@Suite struct KeyringFaultTests {
  static func item(_ id: String, _ name: String) -> [String] {
    [
      "store", "--label", "tokenctl: graph — \(name)", "xdg:schema", "org.tokenctl.Account", "type", "graph",
      "account", id, "group", "default", "name", name, "created", "1790000000", "updated", "1790000000",
      "refreshable", "false",
    ]
  }

  @Test func aCollectionDeletedUnderUsIsReportedAndNothingHangs() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    let stored = try await session.run(
      "secret-tool", Self.item("oid-ada", "ada"),
      stdin: #"{"version":1,"access_token":"SECRET-A","token_type":"Bearer"}"#)
    try #require(stored.status == 0, "\(stored.stderr)")
    let deleted = try await session.run(
      "gdbus",
      [
        "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path",
        "/org/freedesktop/secrets/collection/login", "--method", "org.freedesktop.Secret.Collection.Delete",
      ])
    try #require(deleted.status == 0, "\(deleted.stderr)")
    var failures: [String] = []
    for arguments in [
      ["token", "graph:ada"], ["list"], ["refresh", "graph:ada"], ["revoke", "--local", "graph:ada"],
    ] {
      let result = try await session.run(TestProcess.tokenctl, arguments)
      if result.status != 8 || !result.stderr.contains("no default keyring") || !result.stderr.contains("hint: ") {
        failures.append("\(arguments): \(result.status) \(result.stderr)")
      }
    }
    #expect(failures.isEmpty, "\(failures)")
    HardeningSummary.record("keyring", "collection deleted", failures.isEmpty ? "pass" : "fail")
  }

  @Test func anItemRewrittenIntoNonsenseIsCorruptAndTheOthersAreUntouched() async throws {
    let session = try await PrivateSession.started(.unlockedKeyring)
    defer { session.stop() }
    for (id, name, token) in [("oid-ada", "ada", "SECRET-A"), ("oid-grace", "grace", "SECRET-G")] {
      let stored = try await session.run(
        "secret-tool", Self.item(id, name), stdin: #"{"version":1,"access_token":"\#(token)","token_type":"Bearer"}"#)
      try #require(stored.status == 0, "\(stored.stderr)")
    }
    // Another program writes garbage over ada's secret, keeping the attributes.
    let broken = try await session.run("secret-tool", Self.item("oid-ada", "ada"), stdin: #"{"access_token": 5, "#)
    try #require(broken.status == 0, "\(broken.stderr)")

    var failures: [String] = []
    let ada = try await session.run(TestProcess.tokenctl, ["token", "graph:ada"])
    if ada.status != 9 || !ada.stderr.contains("graph:oid-ada") && !ada.stderr.contains("ada") || !ada.stdout.isEmpty {
      failures.append("token ada: \(ada.status) \(ada.stderr)")
    }
    let grace = try await session.run(TestProcess.tokenctl, ["token", "graph:grace"])
    if grace.status != 0 || grace.stdout != "SECRET-G\n" {
      failures.append("token grace: \(grace.status) \(grace.stderr)")
    }
    let list = try await session.run(TestProcess.tokenctl, ["list"])
    if !list.stdout.contains("grace") || !list.stdout.contains("ada") { failures.append("list: \(list.stdout)") }
    // Signing out the broken account locally still works, and leaves grace alone.
    let revoke = try await session.run(TestProcess.tokenctl, ["revoke", "--local", "graph:ada"])
    let graceAfter = try await session.run(TestProcess.tokenctl, ["token", "graph:grace"])
    if graceAfter.stdout != "SECRET-G\n" { failures.append("grace after revoke: \(graceAfter.stderr)") }
    #expect(failures.isEmpty, "\(failures)\nrevoke: \(revoke.status) \(revoke.stderr)")
    HardeningSummary.record("keyring", "item rewritten as invalid JSON", failures.isEmpty ? "pass" : "fail")
  }
}
