import Foundation
import NativeAppSupport
import TestSupport
import Testing
import TokenCtlRuntime

/// A sign-in whose tokens the keyring refuses: the server issued a grant, and
/// the keyring was locked (no prompt can be shown) or its daemon died between the check
/// `login` makes first and the write after the browser. The grant is revoked at the
/// server (RFC 7009), and the error says so; a type with no revocation endpoint says the
/// grant stays valid until it expires. Before, the grant was dropped, alive at the server.
///
/// The sign-in is held at that moment (`TOKENCTL_TEST_PAUSE_SIGN_IN`, see
/// ``RefreshTestPause``): no timing decides anything. The tokens are known to nobody but
/// the server, so the test asks the server how many it still holds (a server of its own,
/// whose counts are exact).
@Suite(.serialized, .timeLimit(.minutes(5))) struct GrantLossOnLoginTests {
  enum Fault: String, Sendable {
    case keyringLocked = "keyring locked"
    case keyringDaemonKilled = "keyring daemon killed"
  }

  struct Case: Sendable, CustomStringConvertible {
    var fault: Fault
    /// Whether the type has a revocation endpoint (discovered from the issuer), or only
    /// fixed endpoints without one.
    var revocable: Bool
    var description: String { "\(fault.rawValue), \(revocable ? "revocable" : "no revocation endpoint")" }
  }

  static let cases = [
    Case(fault: .keyringLocked, revocable: true), Case(fault: .keyringDaemonKilled, revocable: true),
    Case(fault: .keyringLocked, revocable: false),
  ]

  @Test(arguments: cases)
  func aGrantTheKeyringRefusedIsRevokedAtTheServer(_ test: Case) async throws {
    try #require(ProcessInfo.processInfo.environment["TOKENCTL_TEST_KEYRING"] == "1", "run with `make test`")
    let server = try await AuthServer.ownCount
    let session = try await PrivateSession.started(.unlockedKeyring, ownAgent: false)
    defer { session.stop() }
    let home = session.directory.appendingPathComponent("home")
    let type = test.revocable ? "counted" : "unrevocable"
    if test.revocable {
      try server.writeType(id: type, displayName: "Counted", scopes: ["openid", "read"], home: home)
    } else {
      try Self.writeTypeWithoutRevocation(id: type, server: server, home: home)
    }
    let pause = session.directory.appendingPathComponent("pause")
    try FileManager.default.createDirectory(at: pause, withIntermediateDirectories: true)
    var environment = session.environment
    environment["XDG_CONFIG_HOME"] = home.appendingPathComponent("config").path
    environment["TOKENCTL_CONFIG"] = nil
    environment["TOKENCTL_LOG"] = nil
    environment["TOKENCTL_AGENT"] = "0"
    environment.merge(server.scriptedBrowser(in: session.directory)) { $1 }
    // No display: the keyring, once locked, cannot ask to be unlocked.
    environment["DISPLAY"] = nil
    environment["WAYLAND_DISPLAY"] = nil
    environment[RefreshTestPause.signInVariable] = pause.path

    let before = try await server.live()
    let errors = session.directory.appendingPathComponent("login.err").path
    let login = try TestProcess(
      TestProcess.tokenctl, ["login", type, "--browser"], environment: environment, stderr: errors)
    _ = try await GrantJournalTests.awaitFile(pause.appendingPathComponent("paused").path)
    switch test.fault {
    case .keyringLocked: try await session.lockLoginKeyring()
    case .keyringDaemonKilled: try await session.stopKeyring(signal: SIGKILL)
    }
    _ = FileManager.default.createFile(atPath: pause.appendingPathComponent("resume").path, contents: nil)
    let status = await login.exitStatus(within: 120)
    if status == nil { kill(login.pid, SIGKILL) }
    let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
    let after = try await server.live()

    #expect(status == (test.fault == .keyringLocked ? 7 : 8), "\(stderr)")
    #expect(stderr.contains("; sign in again once the keyring works"), "\(stderr)")
    if test.revocable {
      #expect(stderr.contains("the tokens the server issued were revoked there"), "\(stderr)")
      #expect(after.refreshTokens == before.refreshTokens, "a refresh token the keyring never got is still good")
      #expect(after.accessTokens == before.accessTokens, "an access token the keyring never got is still good")
    } else {
      #expect(
        stderr.contains(
          "account type '\(type)' has no revocation endpoint, so the tokens the server issued stay valid"),
        "\(stderr)")
      #expect(after.refreshTokens == before.refreshTokens + 1)
    }
  }

  /// The user type `id` with this server's endpoints named one by one, and no revocation
  /// endpoint among them.
  static func writeTypeWithoutRevocation(id: String, server: AuthServer, home: URL) throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: server.serverJSON))
    let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    let endpoints = try #require(json?["endpoints"] as? [String: String])
    let named = try ["authorization", "token", "jwks"].map { "\($0) = \"\(try #require(endpoints[$0]))\"" }
    try UserTypeFile(
      id: id, displayName: "No revocation", clientID: server.nativeClientID, scopes: ["openid", "read"],
      more: (["[endpoints]"] + named + ["issuer = \"\(server.issuer)\""]).joined(separator: "\n"),
      loopbackRedirect: true
    ).write(configHome: home.appendingPathComponent("config"))
  }
}
