import Foundation
import TestSupport
import Testing
import TokenKit

/// A new user's first sign-ins at glewlwyd, with the real binary and keyring.
///
/// An account signed in with `--issuer` and `--client-id` has no client of its type's, so
/// a hint of `tokenctl login oidc --issuer … --login-hint …` after the server rejects its
/// refresh token would fail with exit status 14, "has no client id". The account records
/// how it signed in, and the hint signs that account in again: run through /bin/sh as
/// printed, at glewlwyd, with the real binary and keyring.
extension GlewlwydServerTests {
  /// The command in the first hint of `stderr`, between its backquotes.
  static func hintedCommand(_ stderr: String) throws -> String {
    let hint = try #require(stderr.split(separator: "\n").first { $0.hasPrefix("hint:") }, "no hint in \(stderr)")
    let parts = hint.split(separator: "`", omittingEmptySubsequences: false)
    try #require(parts.count >= 3, "no command in \(hint)")
    return String(parts[1])
  }

  /// Runs `command` through /bin/sh with the tokenctl under test first on PATH.
  func shell(_ command: String) async throws -> ProcessResult {
    var environment = try await environment
    let directory = URL(fileURLWithPath: TestProcess.tokenctl).deletingLastPathComponent().path
    environment["PATH"] = directory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    return try await TestProcess.run("/bin/sh", ["-c", command], environment: environment)
  }

  @Test func theHintAfterARejectedRefreshTokenSignsInTheSameAccountAgain() async throws {
    let server = try await GlewlwydServer.shared
    let (registration, signedIn) = try await signInWithRegisteredClient(server)
    let clientID = try #require(registration["client_id"] as? String)
    // As after the server rejected its refresh token (invalid_grant; glewlwyd answers a
    // bare 400 to one it never issued, so the account is marked as the refresher would).
    var marked = signedIn.account
    marked.needsSignIn = true
    let tokens = signedIn.tokens
    try store.save(marked, tokens: tokens)
    let name = "oidc:\(signedIn.account.name)"

    let refused = try await tokenctl("token", name)
    #expect(refused.status == 5, "\(refused.stderr)")
    let command = try Self.hintedCommand(refused.stderr)
    #expect(command.hasPrefix("tokenctl login "), "\(command)")

    // As printed: the same account again, at its issuer, with its client.
    let again = try await shell(command)
    #expect(again.status == 0, "\(command): \(again.stderr)")
    let accounts = try store.list(AccountQuery(type: "oidc")).map(\.account)
    #expect(accounts.count == 1)
    #expect(accounts.first?.key == signedIn.account.key)
    #expect(accounts.first?.needsSignIn == false)
    // A hint of `login oidc --issuer …` alone would register another client here (glewlwyd
    // lets clients register) and move the account to it, and fail with exit status 14 at an
    // issuer that does not.
    #expect(accounts.first?.clientID == clientID && accounts.first?.issuer == server.issuer)
    let token = try await tokenctl("token", name)
    #expect(token.status == 0, "\(token.stderr)")
    // doctor does not warn of the missing client id of a type whose account works
    // with the client it signed in with.
    let doctor = try await tokenctl("doctor", "--json")
    let checks =
      try #require(try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any])["checks"]
      as? [[String: Any]]
    let clientCheck = try #require(checks?.first { $0["id"] as? String == "client-id:oidc" }, "\(doctor.stdout)")
    #expect(clientCheck["status"] as? String == "ok", "\(clientCheck)")
    // The recipe is in the account's attributes; no secret is.
    #expect(!(refused.stderr + again.stderr).contains(tokens.accessToken))
  }

  /// `request` to the userinfo endpoint of the issuer the account signed in at, for a type
  /// that discovers its endpoints (`oidc`), is not refused as a host the type does not
  /// serve: it is where the token is meant to go. Another path on that host is refused.
  @Test func requestSendsTheTokenToTheIssuersOwnUserinfoEndpoint() async throws {
    let server = try await GlewlwydServer.shared
    let (_, signedIn) = try await signInWithRegisteredClient(server)
    let name = "oidc:\(signedIn.account.name)"
    let userinfo = try await tokenctl("request", name, server.userinfoEndpoint)
    #expect(userinfo.status == 0, "\(userinfo.stderr)")
    #expect(userinfo.stdout.contains("\"sub\""), "\(userinfo.stdout)")
    let elsewhere = try await tokenctl("request", name, server.baseURL + "/api/profile")
    #expect(elsewhere.status == 14, "\(elsewhere.stderr)")
    #expect(elsewhere.stderr.contains("does not serve"), "\(elsewhere.stderr)")
  }
}
