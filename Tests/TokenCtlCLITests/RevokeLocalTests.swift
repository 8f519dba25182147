import Foundation
import TestSupport
import Testing
import TokenKit

/// `revoke --local` goes through the account manager's local sign-out, so the hook hears
/// `revoked` as it does for a revocation at the server; with a config.toml it
/// cannot use, the account still goes, with a warning that no hook was told.
@Suite struct RevokeLocalTests {
  let sandbox = CommandSandbox()

  func seed() throws {
    try sandbox.store.save(
      Account(
        type: "graph", id: "oid-1", name: "ada", group: "default", createdAt: CommandSandbox.now,
        updatedAt: CommandSandbox.now),
      tokens: TokenSet(accessToken: "AT", refreshToken: "RT", expiresAt: CommandSandbox.now.addingTimeInterval(60)))
  }

  @Test func theHookHearsALocalRevocation() async throws {
    try seed()
    let heard = sandbox.home.appendingPathComponent("heard").path
    try sandbox.writeConfig("hook = \"echo \\\"$TOKENCTL_EVENT $TOKENCTL_ACCOUNT\\\" >> \(heard)\"\n")
    let result = try await sandbox.run(["revoke", "--local", "graph:ada"], transport: ScriptedTransport(responses: []))
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr == "Removed graph:ada from group 'default'; the server was not told (--local).\n")
    #expect(try sandbox.store.load(AccountKey(type: "graph", id: "oid-1")) == nil)
    // The hook runs without being waited for, and its shell makes the file before echo
    // writes the line: wait for the whole line.
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline,
      (try? String(contentsOfFile: heard, encoding: .utf8))?.hasSuffix("\n") != true
    {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect((try? String(contentsOfFile: heard, encoding: .utf8)) == "revoked graph:ada\n")
  }

  @Test func aBrokenConfigurationDoesNotStopIt() async throws {
    try seed()
    try sandbox.writeConfig("hook = \n")
    let result = try await sandbox.run(["revoke", "--local", "graph:ada"], transport: ScriptedTransport(responses: []))
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("tokenctl: warning: no hook was told of the removal: "))
    #expect(try sandbox.store.load(AccountKey(type: "graph", id: "oid-1")) == nil)
  }
}
